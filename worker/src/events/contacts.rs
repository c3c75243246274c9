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
use parley_shared::db::Db;

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

    /// A pair this book wrote.
    fn remember(&self, client_id: &ClientId, lid: &str, phone: &str) {
        self.known().wrote(client_id.as_str(), lid, phone);
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
        match self
            .db
            .learn_contact(client_id.as_str(), lid, phone, name)
            .await
        {
            Ok(()) => {
                self.remember(client_id, lid, phone);
                self.known().wrote_name(client_id.as_str(), lid, name);
            }
            Err(e) => {
                tracing::warn!(client_id = %client_id, error = %e, "contact mapping not stored")
            }
        }
    }

    /// Records the name `lid` gave itself (with its phone, when known).
    pub async fn name(
        &self,
        client_id: &ClientId,
        lid: &str,
        phone: &str,
        name: &str,
    ) -> Result<(), parley_shared::db::DbError> {
        self.db
            .learn_contact(client_id.as_str(), lid, phone, name)
            .await?;
        self.remember(client_id, lid, phone);
        self.known().wrote_name(client_id.as_str(), lid, name);
        Ok(())
    }

    /// The phone learned for `lid`, if any.
    pub async fn phone(&self, client_id: &ClientId, lid: &str) -> Option<String> {
        if let Some(phone) = self.remembered(client_id, lid) {
            return Some(phone);
        }
        let epoch = self.known().epoch();
        match self.db.phone_for_lid(client_id.as_str(), lid).await {
            Ok(Some(phone)) => {
                self.remember_read(client_id, lid, &phone, epoch);
                Some(phone)
            }
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(client_id = %client_id, error = %e, "contact mapping not read");
                None
            }
        }
    }

    /// The LID user-part learned for `phone`, if any.
    pub async fn lid(&self, client_id: &ClientId, phone: &str) -> Option<String> {
        if let Some(lid) = self.known().lid(client_id.as_str(), phone) {
            return Some(lid);
        }
        let epoch = self.known().epoch();
        match self.db.lid_for_phone(client_id.as_str(), phone).await {
            Ok(Some(lid)) => {
                self.remember_read(client_id, &lid, phone, epoch);
                Some(lid)
            }
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(client_id = %client_id, error = %e, "contact mapping not read");
                None
            }
        }
    }

    /// Records that the session met `lid` (in a lookup), with its phone when
    /// known: written even when remembered, so the contact counts as met now.
    pub async fn met(&self, client_id: &ClientId, lid: &str, phone: &str) {
        if lid.is_empty() {
            return;
        }
        match self
            .db
            .learn_contact(client_id.as_str(), lid, phone, "")
            .await
        {
            Ok(()) => self.remember(client_id, lid, phone),
            Err(e) => {
                tracing::warn!(client_id = %client_id, error = %e, "contact mapping not stored")
            }
        }
    }
}

#[cfg(test)]
#[path = "contacts_tests.rs"]
mod tests;
