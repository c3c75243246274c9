//! The fenced write transaction: every write of the device store runs inside one,
//! after checking that no newer owner recorded its fencing token on the session.
//!
//! PostgreSQL: `SELECT fence FROM sessions WHERE client_id = $1 FOR UPDATE` locks
//! the session row until commit, so a new owner's `fenced_update` (which records
//! its higher fence on that row) waits for an in-flight write of the old owner
//! and every later write of the old owner sees the higher fence and is refused.
//! SQLite: the transaction starts `IMMEDIATE` (the database's single write lock is
//! taken at `BEGIN`), which serializes the check with every other write.
use std::sync::{Arc, Mutex, PoisonError};

use parley_shared::db::Db;
use parley_shared::db::entities::sessions;
use sea_orm::sea_query::{IntoIden, OnConflict};
use sea_orm::{
    ActiveModelTrait, ConnectionTrait, DatabaseTransaction, DbBackend, EntityTrait, QuerySelect,
    QueryTrait, SqliteTransactionMode, Statement, TransactionOptions, TransactionTrait,
};
use whatsapp_rust::wacore::store::error::StoreError;

use super::SeaOrmDeviceStore;
use super::error::{FenceRejected, db_err, rejected};
use super::group_commit::{Failure, Pace, Work};
use super::rows::inserts;

impl SeaOrmDeviceStore {
    /// Opens a write transaction in which the store's fence is current and
    /// the device's state was not deleted ([`SeaOrmDeviceStore::retire`],
    /// [`super::OpenStores::forget`]). Commit it with [`commit`]; dropping it
    /// rolls back.
    /// Writes the received messages the session holds first: no state of
    /// the session commits before them (see `held`).
    pub(super) async fn write(&self) -> Result<DatabaseTransaction, StoreError> {
        if self.held.has_unwritten() {
            super::protocol::write_held(self).await?;
        }
        self.unheld_write().await
    }

    /// [`Self::write`] without writing the held messages first.
    pub(super) async fn unheld_write(&self) -> Result<DatabaseTransaction, StoreError> {
        let txn = self.fenced().await?;
        // Read under the transaction's lock: a write that got here before the
        // deletion was marked commits before it, any later one is refused.
        let Some(refusal) = self.deleted.refusal(&self.client_id) else {
            return Ok(txn);
        };
        let _ = txn.rollback().await;
        Err(rejected(refusal))
    }

    /// Opens a transaction in which the store's fence is current, holding
    /// the session's write lock ([`locked`]).
    pub(super) async fn fenced(&self) -> Result<DatabaseTransaction, StoreError> {
        let (txn, stored) = locked(&self.db, &self.client_id).await?;
        let refusal = match stored {
            Some(stored) if stored <= self.fence => return Ok(txn),
            Some(stored) => FenceRejected::Stale {
                client_id: self.client_id.clone(),
                ours: self.fence,
                stored,
            },
            None => FenceRejected::NoSession {
                client_id: self.client_id.clone(),
            },
        };
        // Nothing was written; a failed rollback only means the connection is gone.
        let _ = txn.rollback().await;
        Err(self.refused(refusal))
    }

    /// Runs the statements `f` makes in a fenced write transaction: in one
    /// with the writes of the process's other sessions of the moment when
    /// the store has the process's writer (`group_commit`, see
    /// `OpenStores::open`); else in one of its own ([`Self::write`]). For
    /// writes that save no decryption state: the received messages the
    /// session holds stay held.
    pub(super) async fn batched<F>(&self, f: F) -> Result<(), StoreError>
    where
        F: Fn(DbBackend) -> Vec<Statement> + Send + Sync + 'static,
    {
        self.batch(f, false, Pace::Now).await
    }

    /// [`Self::batched`] for a write the library makes behind a buffer of
    /// its own (message secrets): it may wait a moment to ride with another
    /// (`group_commit::Pace::Behind`).
    pub(super) async fn batched_behind<F>(&self, f: F) -> Result<(), StoreError>
    where
        F: Fn(DbBackend) -> Vec<Statement> + Send + Sync + 'static,
    {
        self.batch(f, false, Pace::Behind).await
    }

    /// [`Self::batched`] for a write of the keys that decrypt messages: the
    /// received messages the session holds as it runs are written first, in
    /// the same transaction (see `held`).
    pub(super) async fn batched_after_held<F>(&self, f: F) -> Result<(), StoreError>
    where
        F: Fn(DbBackend) -> Vec<Statement> + Send + Sync + 'static,
    {
        self.batch(f, true, Pace::Now).await
    }

    /// [`Self::batched_after_held`] inserting `rows`, whose `updates`
    /// overwrite a row with the same `keys`.
    pub(super) async fn fenced_upsert<A, C>(
        &self,
        rows: Vec<A>,
        keys: impl IntoIterator<Item = C>,
        updates: impl IntoIterator<Item = C>,
    ) -> Result<(), StoreError>
    where
        A: ActiveModelTrait + Clone + Send + Sync + 'static,
        C: IntoIden,
    {
        let on_conflict = OnConflict::columns(keys).update_columns(updates).to_owned();
        self.batched_after_held(move |backend| inserts(backend, &rows, Some(&on_conflict)))
            .await
    }

    /// [`Self::batched_after_held`] for one statement.
    pub(super) async fn fenced_query<Q>(&self, query: Q) -> Result<(), StoreError>
    where
        Q: QueryTrait + Send + Sync + 'static,
    {
        self.batched_after_held(move |backend| vec![query.build(backend)])
            .await
    }

    async fn batch<F>(&self, f: F, after_held: bool, pace: Pace) -> Result<(), StoreError>
    where
        F: Fn(DbBackend) -> Vec<Statement> + Send + Sync + 'static,
    {
        let Some(writer) = &self.writer else {
            let txn = self.write().await?;
            for statement in f(txn.get_database_backend()) {
                txn.execute_raw(statement).await.map_err(db_err)?;
            }
            return commit(txn).await;
        };
        let taken = Arc::new(Mutex::new(Vec::new()));
        let (held, client_id, took) = (self.held.clone(), self.id(), Arc::clone(&taken));
        let work: Work = Box::new(move |backend| {
            // Taken as the batch is written: whatever the library buffered
            // before the state this write saves.
            let rows = if after_held {
                held.take_unwritten()
            } else {
                Vec::new()
            };
            let mut statements = super::protocol::held_rows(backend, &client_id, &rows);
            *took.lock().unwrap_or_else(PoisonError::into_inner) = rows;
            statements.extend(f(backend));
            statements
        });
        writer
            .write(&self.client_id, self.fence, &self.deleted, work, pace)
            .await
            .map_err(|failure| match failure {
                Failure::Refused(refusal) => self.refused(refusal),
                Failure::Failed(e) => e,
            })?;
        let written = taken.lock().unwrap_or_else(PoisonError::into_inner);
        self.held.written(&written);
        Ok(())
    }

    /// The error of a write `refusal` refused; a newer owner's fence also
    /// tells the store's connection to close ([`Self::fenced_out`]).
    fn refused(&self, refusal: FenceRejected) -> StoreError {
        if matches!(refusal, FenceRejected::Stale { .. }) {
            self.fenced_out.send_replace(true);
        }
        // A deleted state's refusals are expected after a logout or a forget.
        if matches!(
            refusal,
            FenceRejected::Stale { .. } | FenceRejected::NoSession { .. }
        ) {
            tracing::warn!(client_id = %self.client_id, reason = %refusal, "device store write refused");
        }
        rejected(refusal)
    }
}

/// Opens a transaction holding `client_id`'s write lock: the session row's
/// (PostgreSQL) or the database's (SQLite); with the fence stored on the
/// session, if it exists.
pub(super) async fn locked(
    db: &Db,
    client_id: &str,
) -> Result<(DatabaseTransaction, Option<i64>), StoreError> {
    let txn = begin_locked(db).await?;
    let stored = sessions::Entity::find_by_id(client_id)
        .select_only()
        .column(sessions::Column::Fence)
        .lock_exclusive()
        .into_tuple()
        .one(&txn)
        .await
        .map_err(db_err)?;
    Ok((txn, stored))
}

/// Opens a write transaction; on SQLite it holds the database's write lock
/// from `BEGIN` (`IMMEDIATE`).
pub(super) async fn begin_locked(db: &Db) -> Result<DatabaseTransaction, StoreError> {
    let options = TransactionOptions {
        sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate),
        ..TransactionOptions::default()
    };
    db.conn().begin_with_options(options).await.map_err(db_err)
}

/// Commits a fenced write.
pub(super) async fn commit(txn: DatabaseTransaction) -> Result<(), StoreError> {
    txn.commit().await.map_err(db_err)
}
