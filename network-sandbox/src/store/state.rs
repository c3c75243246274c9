//! The sandbox network's state (phones, linked devices, QR and pairing codes,
//! faults, connection log, outbox), kept in the database so it outlives worker processes.
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::entities::{
    connections, devices, faults, history, keys, outbox, pair_codes, phones, qr,
};
use parley_contract::wire::sandbox::SandboxHistory;
use parley_shared::db::DbError;

use super::Store;

pub use super::entities::connections::SandboxConnection;
pub use super::entities::devices::{SandboxDevice, fence_from_db, fence_to_db};
pub use super::entities::outbox::{NewOutboxEntry, OutboxEntry};
pub use super::entities::phones::{PhonePatch, SandboxPhone, derive_lid};

/// Whether `phone` is a simulated phone number: 8 to 15 ASCII digits.
pub fn is_valid_phone(phone: &str) -> bool {
    parley_model::address::PhoneNumber::from_digits(phone).is_some()
}

impl Store {
    /// The key that signs the sandbox's picture links: made by the first
    /// process that asks, shared by all through the database.
    pub async fn picture_link_key(&self) -> Result<Vec<u8>, DbError> {
        let fresh: [u8; 32] = rand::random();
        let stored = keys::get_or_create(&self.db, "picture-links", &hex::encode(fresh)).await?;
        hex::decode(stored)
            .map_err(|e| DbError::Unavailable(format!("sandbox key picture-links: {e}")))
    }

    /// Registers `phone` (validated by the caller) when unknown, with a fresh LID
    /// and defaults, then applies `patch`. Returns the stored phone.
    pub async fn upsert_phone(
        &self,
        phone: &str,
        patch: PhonePatch,
    ) -> Result<SandboxPhone, DbError> {
        phones::upsert(&self.db, phone, patch).await
    }

    /// Replaces the past of `past.phone`: the chats it sends the devices
    /// it links, and its labels.
    pub async fn set_history(&self, past: &SandboxHistory) -> Result<(), DbError> {
        history::set(&self.db, past).await
    }

    /// `phone`'s past; `None` when never set.
    pub async fn history(&self, phone: &str) -> Result<Option<SandboxHistory>, DbError> {
        history::find(&self.db, phone).await
    }

    pub async fn phone(&self, phone: &str) -> Result<Option<SandboxPhone>, DbError> {
        phones::find(&self.db, phone).await
    }

    /// `issuer` (a phone) issues `holder` a privacy token: it wrote to it.
    pub async fn issue_token(&self, issuer: &str, holder: &str) -> Result<(), DbError> {
        super::entities::tokens::issue(&self.db, issuer, holder).await
    }

    /// Whether `holder` holds a privacy token `issuer` issued it.
    pub async fn holds_token(&self, issuer: &str, holder: &str) -> Result<bool, DbError> {
        super::entities::tokens::holds(&self.db, issuer, holder).await
    }

    /// Counts one more device linked by `phone` (registered) and returns its
    /// device number: 1 + the number of earlier links.
    pub async fn next_device_number(&self, phone: &str) -> Result<i32, DbError> {
        phones::next_device_number(&self.db, phone).await
    }

    /// Which session shows QR `code` now.
    pub async fn qr_owner(&self, code: &str) -> Result<Option<String>, DbError> {
        qr::owner(&self.db, code).await
    }

    /// The QR code `client_id` shows now.
    pub async fn current_qr(&self, client_id: &str) -> Result<Option<String>, DbError> {
        qr::current(&self.db, client_id).await
    }

    /// Makes `code` the session's current QR code (the previous one is invalid).
    pub async fn set_qr(&self, client_id: &str, code: &str) -> Result<(), DbError> {
        qr::set(&self.db, client_id, code).await
    }

    /// Withdraws `code` as the session's QR; a newer code set by another
    /// connection stays.
    pub async fn clear_qr(&self, client_id: &str, code: &str) -> Result<(), DbError> {
        qr::clear(&self.db, client_id, code).await
    }

    pub async fn sandbox_device(&self, client_id: &str) -> Result<Option<SandboxDevice>, DbError> {
        devices::find(&self.db, client_id).await
    }

    /// Stores the device record when `device.fence` is not older than the stored
    /// one. `false`: a newer connection wrote it; nothing changed.
    pub async fn put_sandbox_device(&self, device: &SandboxDevice) -> Result<bool, DbError> {
        devices::put(&self.db, device).await
    }

    /// The sessions `phone` has linked as its devices.
    pub async fn linked_to(&self, phone: &str) -> Result<Vec<String>, DbError> {
        devices::linked_to(&self.db, phone).await
    }

    /// Deletes the device record (logout); `false` when there was none.
    pub async fn delete_sandbox_device(&self, client_id: &str) -> Result<bool, DbError> {
        devices::delete(&self.db, client_id).await
    }

    /// Stores the pending pairing code of a session (replacing an older one).
    pub async fn set_pair_code(
        &self,
        client_id: &str,
        phone: &str,
        code: &str,
    ) -> Result<(), DbError> {
        pair_codes::set(&self.db, client_id, phone, code).await
    }

    /// Consumes the session's pending code when it is `code` and younger than
    /// `max_age`; returns the phone it was issued for.
    pub async fn take_pair_code(
        &self,
        client_id: &str,
        code: &str,
        max_age: Duration,
    ) -> Result<Option<String>, DbError> {
        pair_codes::take(&self.db, client_id, code, max_age).await
    }

    /// Makes the next `count` operations `op` of the session fail (0 disarms).
    pub async fn arm_fault(&self, client_id: &str, op: &str, count: u32) -> Result<(), DbError> {
        faults::arm(&self.db, client_id, op, count).await
    }

    /// Uses up one armed failure of `op`, atomically: `true` when the operation
    /// must fail.
    pub async fn consume_fault(&self, client_id: &str, op: &str) -> Result<bool, DbError> {
        faults::consume(&self.db, client_id, op).await
    }

    /// Logs a new open connection; returns its id.
    pub async fn open_sandbox_connection(
        &self,
        client_id: &str,
        pod_name: &str,
        fence: u64,
    ) -> Result<i64, DbError> {
        connections::open(&self.db, client_id, pod_name, fence).await
    }

    /// Marks a logged connection closed (once; later calls change nothing).
    pub async fn close_sandbox_connection(&self, id: i64) -> Result<(), DbError> {
        connections::close(&self.db, id).await
    }

    /// The session's logged connections, oldest first.
    pub async fn sandbox_connections(
        &self,
        client_id: &str,
    ) -> Result<Vec<SandboxConnection>, DbError> {
        connections::list(&self.db, client_id).await
    }

    /// Records something the session put on the network.
    pub async fn record_outbox(&self, entry: NewOutboxEntry) -> Result<(), DbError> {
        outbox::insert(&self.db, entry).await
    }

    /// Records several entries with one statement, in their order.
    pub async fn record_outbox_many(&self, entries: Vec<NewOutboxEntry>) -> Result<(), DbError> {
        outbox::insert_many(&self.db, entries).await
    }

    /// Which operations have failures armed, as `(client_id, op)`, for `client_ids`.
    pub async fn armed_faults(
        &self,
        client_ids: &[&str],
    ) -> Result<Vec<(String, String)>, DbError> {
        faults::armed_among(&self.db, client_ids).await
    }

    /// The session's outbox, oldest first, at most `limit` entries: only the
    /// chats `to_jids` when given, only entries at or after `since` when given.
    pub async fn outbox(
        &self,
        client_id: &str,
        to_jids: Option<&[String]>,
        since: Option<DateTime<Utc>>,
        limit: u64,
    ) -> Result<Vec<OutboxEntry>, DbError> {
        outbox::list(&self.db, client_id, to_jids, since, limit).await
    }

    /// Whether a session linked by `phone` sent `contact` a message (as by
    /// its phone number or its LID): the account wrote to it, and the
    /// contact holds a privacy token it issued.
    pub async fn wrote_to(&self, phone: &str, contact: &SandboxPhone) -> Result<bool, DbError> {
        let sessions = self.linked_to(phone).await?;
        let chats = [contact.jid(), format!("{}@lid", contact.lid)];
        outbox::wrote_to(&self.db, &sessions, &chats).await
    }

    /// The outbox entry of the session's message `message_id`, if it sent one.
    pub async fn outbox_message(
        &self,
        client_id: &str,
        message_id: &str,
    ) -> Result<Option<OutboxEntry>, DbError> {
        outbox::find(&self.db, client_id, message_id).await
    }

    /// Forgets the session's network state: device, QR, pairing code, faults.
    /// The connection log and the outbox stay.
    pub async fn forget_sandbox_session(&self, client_id: &str) -> Result<(), DbError> {
        devices::delete(&self.db, client_id).await?;
        qr::clear_all(&self.db, client_id).await?;
        pair_codes::clear(&self.db, client_id).await?;
        faults::clear(&self.db, client_id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lids_are_fifteen_digits_stable_and_distinct() {
        let a = derive_lid("4915112345678", 0);
        assert_eq!(a.len(), 15);
        assert!(a.bytes().all(|b| b.is_ascii_digit()));
        assert_ne!(a.as_bytes()[0], b'0');
        assert_eq!(a, derive_lid("4915112345678", 0));
        assert_ne!(a, derive_lid("4915112345679", 0));
        assert_ne!(a, derive_lid("4915112345678", 1));
    }

    #[test]
    fn phone_numbers_are_eight_to_fifteen_digits() {
        assert!(is_valid_phone("12345678"));
        assert!(is_valid_phone("123456789012345"));
        assert!(!is_valid_phone("1234567"));
        assert!(!is_valid_phone("1234567890123456"));
        assert!(!is_valid_phone("+4915112345678"));
        assert!(!is_valid_phone(""));
    }
}
