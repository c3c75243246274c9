//! The device stores this process opened, by session, so that forgetting a
//! session stops each of them writing before its rows are deleted: a closed
//! connection's background saver may still flush after `close` returned, and
//! that flush must neither be lost under a live session nor bring a forgotten
//! device back.
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use parley_shared::db::Db;
use whatsapp_rust::wacore::store::error::StoreError;

use super::group_commit::Writer;
use super::tc_cache::TcCache;
use super::{Deleted, HeldInbound, SeaOrmDeviceStore};

/// Shared by the adapter's clones; holds no store alive.
#[derive(Clone, Default)]
pub struct OpenStores {
    by_session: Arc<Mutex<HashMap<String, Vec<Weak<Deleted>>>>>,
    /// What each session's stores share, kept across its connections.
    kept: Arc<Mutex<HashMap<String, Kept>>>,
    /// The writer that batches the stores' hot writes (see `group_commit`),
    /// started with the first store.
    writer: Arc<OnceLock<Writer>>,
}

/// What a session's stores of this process share (clones share it).
#[derive(Clone, Default)]
struct Kept {
    /// The pending inbound rows held in memory (`store::held`).
    held: HeldInbound,
    /// The privacy tokens read lately (`store::tc_cache`).
    tokens: TcCache,
}

impl OpenStores {
    /// The device store of `client_id` under the lease's fencing token
    /// `fence`: its frequent writes batched with the other sessions'
    /// (`group_commit`), its held messages kept across its connections, and
    /// tracked until a forget.
    pub fn open(
        &self,
        db: &Db,
        client_id: &str,
        fence: u64,
    ) -> Result<SeaOrmDeviceStore, StoreError> {
        let writer = self.writer.get_or_init(|| Writer::spawn(db)).clone();
        let kept = self.kept(client_id);
        let mut store = SeaOrmDeviceStore::new(db.clone(), client_id, fence)?.holding(kept.held);
        store.writer = Some(writer);
        store.tc_cache = kept.tokens;
        store.tc_cache.under(store.fence);
        self.track(&store);
        Ok(store)
    }

    /// Transactions the stores' writer began, and the writes they took
    /// (none before the first store).
    pub fn batched(&self) -> (u64, u64) {
        self.writer.get().map_or((0, 0), Writer::taken)
    }

    /// What `client_id`'s stores share.
    fn kept(&self, client_id: &str) -> Kept {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.entry(client_id.to_string()).or_default().clone()
    }

    /// Notes `store` as one of its session's open stores.
    pub fn track(&self, store: &SeaOrmDeviceStore) {
        let mut by_session = self.lock();
        let stores = by_session.entry(store.client_id().to_string()).or_default();
        stores.retain(|s| s.strong_count() > 0);
        stores.push(Arc::downgrade(&store.deleted));
    }

    /// Deletes `client_id`'s device state (after `/disconnect`): every store
    /// of the session this process opened refuses its writes from now on, a
    /// write already under way commits first, then every row goes.
    pub async fn forget(&self, db: &Db, client_id: &str) -> Result<(), StoreError> {
        let stores = self.lock().remove(client_id).unwrap_or_default();
        let kept = self
            .kept
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(client_id);
        for deleted in stores.iter().filter_map(Weak::upgrade) {
            deleted.mark(Deleted::FORGOTTEN);
        }
        if let Some(writer) = self.writer.get() {
            writer.settled().await;
        }
        let forgotten = SeaOrmDeviceStore::forget(db, client_id).await;
        if let Some(kept) = kept {
            kept.tokens.drop_entry(None);
        }
        forgotten
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Weak<Deleted>>>> {
        // The map stays consistent whatever panicked while holding it.
        self.by_session.lock().unwrap_or_else(|p| p.into_inner())
    }
}
