//! The LID <-> phone mapping learned from events: a message that reveals its
//! sender's phone teaches it (persisted per session, where recipient parsing and
//! lookups find it), and a message that does not is given the phone learned
//! before. Known pairs are remembered so a busy chat does not write every time.
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use parley_model::ids::ClientId;
use parley_shared::db::Db;

/// Pairs remembered before the memory starts over.
const REMEMBERED: usize = 100_000;

pub struct ContactBook {
    db: Db,
    /// `(clientId, lid)` -> phone, as stored.
    known: Mutex<HashMap<(String, String), String>>,
}

impl ContactBook {
    pub fn new(db: Db) -> ContactBook {
        ContactBook {
            db,
            known: Mutex::new(HashMap::new()),
        }
    }

    fn remembered(&self, client_id: &ClientId, lid: &str) -> Option<String> {
        let known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        known
            .get(&(client_id.to_string(), lid.to_string()))
            .cloned()
    }

    fn remember(&self, client_id: &ClientId, lid: &str, phone: &str) {
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if known.len() >= REMEMBERED {
            known.clear();
        }
        known.insert((client_id.to_string(), lid.to_string()), phone.to_string());
    }

    /// Records that `lid` is `phone` for this session (a failure is only logged:
    /// the event goes on).
    pub async fn learn(&self, client_id: &ClientId, lid: &str, phone: &str, name: &str) {
        if lid.is_empty() || phone.is_empty() {
            return;
        }
        if self.remembered(client_id, lid).as_deref() == Some(phone) {
            return;
        }
        match self
            .db
            .learn_contact(client_id.as_str(), lid, phone, name)
            .await
        {
            Ok(()) => self.remember(client_id, lid, phone),
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
        if !phone.is_empty() {
            self.remember(client_id, lid, phone);
        }
        Ok(())
    }

    /// The phone learned for `lid`, if any.
    pub async fn phone(&self, client_id: &ClientId, lid: &str) -> Option<String> {
        if let Some(phone) = self.remembered(client_id, lid) {
            return Some(phone);
        }
        match self.db.phone_for_lid(client_id.as_str(), lid).await {
            Ok(Some(phone)) => {
                self.remember(client_id, lid, &phone);
                Some(phone)
            }
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(client_id = %client_id, error = %e, "contact mapping not read");
                None
            }
        }
    }
}
