//! whatsapp-rust's storage `Backend` on sea-orm, PostgreSQL and SQLite from the
//! same code: one row set per clientId, every write fenced by the session's lease
//! token (see `fence`), so a session that moves to another worker continues with
//! the same identity and Signal state and a stale owner's flush is never applied.
//!
//! One file per storage trait: `device` (`DeviceStore`), `signal` (`SignalStore`),
//! `app_sync` (`AppSyncStore`), `protocol` (`ProtocolStore`), `msg_secret`
//! (`MsgSecretStore`); `authors` keeps the authors of received group messages
//! for the live adapter; the tables are in `tables`.
mod app_sync;
mod authors;
mod device;
mod device_row;
mod error;
mod fence;
mod group_commit;
mod held;
mod msg_secret;
mod open;
mod protocol;
mod rows;
mod sealed;
mod signal;
mod tables;
mod tc_cache;
mod values;

#[cfg(test)]
mod tests;

use parley_shared::db::Db;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use whatsapp_rust::wacore::store::error::StoreError;

pub use authors::GroupAuthor;
pub use error::{FenceRejected, fence_rejection, is_fence_rejected};
pub use held::HeldInbound;
pub use open::OpenStores;
pub use sealed::rekey;

/// The device state of one session, in the gateway's database.
///
/// Reads are plain queries; every write is one transaction that first checks the
/// session's stored fence is not newer than `fence` and is refused otherwise.
#[derive(Clone, Debug)]
pub struct SeaOrmDeviceStore {
    db: Db,
    client_id: String,
    fence: i64,
    /// Turns true at the first write a newer owner's fence refuses (clones share it).
    fenced_out: std::sync::Arc<tokio::sync::watch::Sender<bool>>,
    /// Set once the device's rows are deleted (the network logged it out, or
    /// the session was forgotten): every later write is refused (clones share it).
    deleted: std::sync::Arc<Deleted>,
    /// The device's state as the client holds it, and one save at a time
    /// (clones share them): see `device::Saves`.
    saves: std::sync::Arc<device::Saves>,
    /// The pending inbound buffer's rows not written (yet): see `held`.
    held: HeldInbound,
    /// The process's writer that batches the hot writes of its sessions,
    /// where the database has one (see `group_commit`).
    writer: Option<group_commit::Writer>,
    /// The privacy tokens read lately (the session's stores share them):
    /// see `tc_cache`.
    tc_cache: tc_cache::TcCache,
}

impl SeaOrmDeviceStore {
    /// The store of `client_id`, writing under the lease's fencing token `fence`.
    pub fn new(db: Db, client_id: impl Into<String>, fence: u64) -> Result<Self, StoreError> {
        let fence = i64::try_from(fence)
            .map_err(|_| StoreError::InvalidConfig(format!("fence {fence} exceeds a BIGINT")))?;
        Ok(SeaOrmDeviceStore {
            db,
            client_id: client_id.into(),
            fence,
            fenced_out: std::sync::Arc::new(tokio::sync::watch::channel(false).0),
            deleted: std::sync::Arc::default(),
            saves: std::sync::Arc::default(),
            held: HeldInbound::default(),
            writer: None,
            tc_cache: tc_cache::TcCache::default(),
        })
    }

    /// This store keeping the pending inbound rows in `held` (the
    /// session's, across its connections).
    pub fn holding(mut self, held: HeldInbound) -> Self {
        self.held = held;
        self
    }

    /// Resolves once a write was refused because a newer owner holds the
    /// session: its connection must close (the session's next state write
    /// then stops it, as any fenced-out write does).
    pub async fn fenced_out(&self) {
        let mut seen = self.fenced_out.subscribe();
        drop(seen.wait_for(|fenced| *fenced).await.map(|_| ()));
    }

    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// The fencing token this store writes under.
    pub fn fence(&self) -> u64 {
        // Never negative: `new` took it from a u64.
        self.fence.unsigned_abs()
    }

    fn conn(&self) -> &sea_orm::DatabaseConnection {
        self.db.conn()
    }

    fn id(&self) -> String {
        self.client_id.clone()
    }

    /// A secret value of `table`'s row `key` of this session, sealed.
    fn seal(&self, table: &str, key: &str, plain: &[u8]) -> Vec<u8> {
        self.db
            .keys()
            .seal(&sealed::place(table, &self.client_id, key), plain)
    }

    /// A stored value of `table`'s row `key` of this session, opened.
    fn open(&self, table: &str, key: &str, stored: &[u8]) -> Result<Vec<u8>, StoreError> {
        self.db
            .keys()
            .open(&sealed::place(table, &self.client_id, key), stored)
            .map_err(|e| error::invalid(table, e))
    }

    /// Deletes every row of `client_id`'s device state in one transaction (after
    /// `/disconnect`). Not fenced, but it holds the session's write lock, so a
    /// write of a store under way commits before it; the adapter first stops
    /// its open stores of the session writing ([`OpenStores::forget`]).
    pub async fn forget(db: &Db, client_id: &str) -> Result<(), StoreError> {
        let (txn, _) = fence::locked(db, client_id).await?;
        delete_rows(&txn, client_id).await?;
        fence::commit(txn).await
    }

    /// The network logged the device out (the phone removed it, or it was
    /// refused at login): deletes its state under the store's fence, and
    /// refuses every write after, so that no late flush of the library brings
    /// a dead identity back and the session's next connect pairs anew.
    pub async fn retire(&self) -> Result<(), StoreError> {
        self.deleted.mark(Deleted::LOGGED_OUT);
        if let Some(writer) = &self.writer {
            writer.settled().await;
        }
        let txn = self.fenced().await?;
        delete_rows(&txn, &self.client_id).await?;
        fence::commit(txn).await?;
        self.tc_cache.drop_entry(None);
        Ok(())
    }
}

/// Why a store's device state is gone, if it is: set before the deletion,
/// read by every write under the session's write lock (or, by a batch on
/// PostgreSQL, before it takes the lock: the deletion then waits for the
/// writes queued before it, `group_commit::Writer::settled`).
#[derive(Debug, Default)]
pub(crate) struct Deleted(std::sync::atomic::AtomicU8);

impl Deleted {
    const LOGGED_OUT: u8 = 1;
    const FORGOTTEN: u8 = 2;

    fn mark(&self, why: u8) {
        self.0.store(why, std::sync::atomic::Ordering::SeqCst);
    }

    /// The refusal of a write after the deletion, or none while the state lives.
    fn refusal(&self, client_id: &str) -> Option<FenceRejected> {
        let client_id = client_id.to_string();
        match self.0.load(std::sync::atomic::Ordering::SeqCst) {
            Self::LOGGED_OUT => Some(FenceRejected::LoggedOut { client_id }),
            Self::FORGOTTEN => Some(FenceRejected::Forgotten { client_id }),
            _ => None,
        }
    }
}

/// Deletes every row of `client_id`'s device state inside `txn`.
async fn delete_rows(
    txn: &sea_orm::DatabaseTransaction,
    client_id: &str,
) -> Result<(), StoreError> {
    use tables::{app_sync, device, messages, protocol, signal};
    macro_rules! wipe {
        ($($table:path),+ $(,)?) => {
            $(
                {
                    use $table as t;
                    t::Entity::delete_many()
                        .filter(t::Column::ClientId.eq(client_id))
                        .exec(txn)
                        .await
                        .map_err(error::db_err)?;
                }
            )+
        };
    }
    wipe!(
        device,
        signal::identities,
        signal::sessions,
        signal::prekeys,
        signal::signed_prekeys,
        signal::sender_keys,
        app_sync::sync_keys,
        app_sync::versions,
        app_sync::index_values,
        app_sync::mutation_macs,
        protocol::sender_key_devices,
        protocol::lid_pn_mappings,
        protocol::base_keys,
        protocol::device_lists,
        protocol::device_list_entries,
        protocol::group_metadata,
        protocol::tc_tokens,
        messages::sent_messages,
        messages::pending_inbound,
        messages::msg_secrets,
        messages::group_authors,
    );
    Ok(())
}
