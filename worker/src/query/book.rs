//! A session's address book: the LID <-> phone mapping learned from lookups,
//! consulted before the network is asked, through the worker's
//! [`ContactBook`] (which remembers what it read and wrote). A database
//! failure only costs a network lookup (reads) or one learned pair (writes):
//! it is logged, not fatal.
use parley_model::address::{Jid, PhoneNumber};
use parley_model::ids::ClientId;
use parley_model::recipients::lid_jid;
use parley_shared::db::Db;

use crate::events::ContactBook;

#[derive(Clone)]
pub struct Book {
    pub db: Db,
    pub client_id: ClientId,
    pairs: ContactBook,
}

impl Book {
    /// The book of `client_id`, through the worker's `pairs` (without
    /// them, a book of its own that remembers only what it met itself).
    pub fn new(db: Db, client_id: &ClientId, pairs: Option<&ContactBook>) -> Book {
        Book {
            pairs: pairs
                .cloned()
                .unwrap_or_else(|| ContactBook::new(db.clone())),
            db,
            client_id: client_id.clone(),
        }
    }

    /// The LID user-part learned for `phone`.
    pub async fn lid_for(&self, phone: &str) -> Option<String> {
        self.pairs.lid(&self.client_id, phone).await
    }

    /// The LID JID learned for `phone`.
    pub async fn lid_jid_for(&self, phone: &PhoneNumber) -> Option<Jid> {
        self.lid_for(phone.as_str())
            .await
            .as_deref()
            .and_then(lid_jid)
    }

    /// The LID JIDs of the session's contacts (those it exchanged messages
    /// with, looked up, or whose names the phone's history sync sent), the
    /// most recent first, at most `limit`.
    pub async fn contacts(&self, limit: u64) -> Result<Vec<Jid>, parley_shared::db::DbError> {
        let lids = self.db.contact_lids(self.client_id.as_str(), limit).await?;
        Ok(lids.iter().filter_map(|l| lid_jid(l)).collect())
    }

    /// Records that `lid` is `phone` (either may be empty: nothing is learned
    /// without a LID).
    pub async fn learn(&self, lid: &str, phone: &str) {
        self.pairs.met(&self.client_id, lid, phone).await;
    }
}
