//! The LID <-> phone mapping learned from events and lookups: a message that
//! reveals its sender's phone teaches it (persisted per session, where
//! recipient parsing and lookups find it), and a message that does not is
//! given the phone learned before. The worker remembers the pairs it read or
//! wrote, so a busy chat does not write every time and a send to a `+phone`
//! does not read the store every time. Every write of a session's pairs on
//! this worker goes through here while it owns the session, and the memory
//! of a session is forgotten when it starts or stops here.
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use parley_model::ids::ClientId;
use parley_shared::db::{Db, DbError};

use super::known_pairs::KnownPairs;

#[derive(Clone)]
pub struct ContactBook {
    db: Db,
    known: Arc<Mutex<KnownPairs>>,
}

impl ContactBook {
    pub fn new(db: Db) -> ContactBook {
        ContactBook {
            db,
            known: Arc::default(),
        }
    }

    fn known(&self) -> MutexGuard<'_, KnownPairs> {
        self.known.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn remembered(&self, client_id: &ClientId, lid: &str) -> Option<String> {
        self.known().phone(client_id.as_str(), lid)
    }

    /// A pair (and a name, unless empty) this book wrote.
    fn remember(&self, client_id: &ClientId, lid: &str, phone: &str, name: &str) {
        let mut known = self.known();
        known.wrote(client_id.as_str(), lid, phone);
        known.wrote_name(client_id.as_str(), lid, name);
    }

    /// Writes a pair (and a name, unless empty) and remembers it; a failure
    /// is only logged.
    async fn write(&self, client_id: &ClientId, lid: &str, phone: &str, name: &str) {
        if let Err(e) = self.name(client_id, lid, phone, name).await {
            tracing::warn!(client_id = %client_id, error = %e, "contact mapping not stored");
        }
    }

    /// A pair read from the store in a read that began at `epoch`.
    fn remember_read(&self, client_id: &ClientId, lid: &str, phone: &str, epoch: u64) {
        self.known().read(client_id.as_str(), lid, phone, epoch);
    }

    /// Forgets what is remembered of `client_id`'s contacts: the session
    /// starts or stops on this worker, and another may learn meanwhile.
    pub fn forget(&self, client_id: &ClientId) {
        self.known().forget(client_id.as_str());
    }

    /// Records that `lid` is `phone` for this session (a failure is only logged:
    /// the event goes on).
    pub async fn learn(&self, client_id: &ClientId, lid: &str, phone: &str, name: &str) {
        if lid.is_empty() || phone.is_empty() {
            return;
        }
        if self.remembered(client_id, lid).as_deref() == Some(phone)
            && (name.is_empty() || self.known().has_name(client_id.as_str(), lid, name))
        {
            return;
        }
        self.write(client_id, lid, phone, name).await;
    }

    /// Records the name `lid` gave itself (with its phone, when known).
    pub async fn name(
        &self,
        client_id: &ClientId,
        lid: &str,
        phone: &str,
        name: &str,
    ) -> Result<(), DbError> {
        self.db
            .learn_contact(client_id.as_str(), lid, phone, name)
            .await?;
        self.remember(client_id, lid, phone, name);
        Ok(())
    }

    /// The phone learned for `lid`, if any.
    pub async fn phone(&self, client_id: &ClientId, lid: &str) -> Option<String> {
        if let Some(phone) = self.remembered(client_id, lid) {
            return Some(phone);
        }
        let epoch = self.known().epoch();
        let phone = read(
            client_id,
            self.db.phone_for_lid(client_id.as_str(), lid).await,
        )?;
        self.remember_read(client_id, lid, &phone, epoch);
        Some(phone)
    }

    /// The LID user-part learned for `phone`, if any.
    pub async fn lid(&self, client_id: &ClientId, phone: &str) -> Option<String> {
        if let Some(lid) = self.known().lid(client_id.as_str(), phone) {
            return Some(lid);
        }
        let epoch = self.known().epoch();
        let lid = read(
            client_id,
            self.db.lid_for_phone(client_id.as_str(), phone).await,
        )?;
        self.remember_read(client_id, &lid, phone, epoch);
        Some(lid)
    }

    /// Records that the session met `lid` (in a lookup), with its phone when
    /// known: written even when remembered, so the contact counts as met now.
    pub async fn met(&self, client_id: &ClientId, lid: &str, phone: &str) {
        if lid.is_empty() {
            return;
        }
        self.write(client_id, lid, phone, "").await;
    }
}

/// What a read of the store found; a failure is only logged.
fn read(client_id: &ClientId, found: Result<Option<String>, DbError>) -> Option<String> {
    found.unwrap_or_else(|e| {
        tracing::warn!(client_id = %client_id, error = %e, "contact mapping not read");
        None
    })
}

#[cfg(test)]
#[path = "contacts_tests.rs"]
mod tests;
