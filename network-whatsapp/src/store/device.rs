//! `DeviceStore`: the session's own device row (one per clientId, device id 1).
//! `snapshot_db` keeps the library's no-op default (it serves a debug feature
//! that copies a local database file; there is none here).
use std::sync::{Arc, Weak};

use parley_shared::db::Db;
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{ColumnTrait, EntityTrait, IntoActiveModel, Iterable, PaginatorTrait, QueryFilter};
use whatsapp_rust::store::persistence_manager::PersistenceManager;
use whatsapp_rust::wacore::stats::StorageResourceReport;
use whatsapp_rust::wacore::store::Device;
use whatsapp_rust::wacore::store::error::Result;
use whatsapp_rust::wacore::store::traits::DeviceStore;

use super::SeaOrmDeviceStore;
use super::device_row::{from_row, to_row};
use super::error::db_err;
use super::fence::commit;
use super::tables::device::{Column, Entity};

/// The device id `create` reports: a clientId holds exactly one device.
pub const DEVICE_ID: i32 = 1;

/// Seals every device row's private keys under the active store key
/// (`parley rekey`); returns how many rows were sealed again. A row written
/// meanwhile (by its session's owner, which seals under the active key too)
/// is left as that write made it.
pub async fn rekey(db: &Db) -> Result<usize> {
    let rows = Entity::find().all(db.conn()).await.map_err(db_err)?;
    let mut sealed = 0;
    for old in rows {
        let keys = db.keys();
        let current = [
            &old.noise_key,
            &old.identity_key,
            &old.signed_pre_key,
            &old.adv_secret_key,
        ]
        .iter()
        .all(|v| keys.is_current(v));
        if current {
            continue;
        }
        let device = from_row(keys, old.clone())?;
        let new = to_row(keys, old.client_id.clone(), &device);
        let res = Entity::update_many()
            .col_expr(Column::NoiseKey, Expr::value(new.noise_key))
            .col_expr(Column::IdentityKey, Expr::value(new.identity_key))
            .col_expr(Column::SignedPreKey, Expr::value(new.signed_pre_key))
            .col_expr(Column::AdvSecretKey, Expr::value(new.adv_secret_key))
            .filter(Column::ClientId.eq(old.client_id.as_str()))
            .filter(Column::NoiseKey.eq(old.noise_key))
            .filter(Column::IdentityKey.eq(old.identity_key))
            .filter(Column::SignedPreKey.eq(old.signed_pre_key))
            .filter(Column::AdvSecretKey.eq(old.adv_secret_key))
            .exec(db.conn())
            .await
            .map_err(db_err)?;
        sealed += usize::try_from(res.rows_affected).unwrap_or(0);
    }
    Ok(sealed)
}

/// The device's saves, one at a time, each of the client's latest state.
///
/// The client library saves its device from a background task it wakes
/// when the state changes, but a change made while that task is saving
/// wakes nothing: it stays unsaved until the library's next change or its
/// 30 s timer. The adapter flushes the client's state itself as well
/// (`live::device_saves`); two saves may then overlap, and the one that
/// read its state first could commit last. So each save writes the
/// client's state as it is when the save's turn comes, under a lock held
/// until it commits: the last commit is always of the newest state.
#[derive(Debug, Default)]
pub struct Saves {
    client: std::sync::OnceLock<Weak<PersistenceManager>>,
    turn: tokio::sync::Mutex<()>,
}

impl SeaOrmDeviceStore {
    /// Saves write `client`'s state as it is at their turn (the library's
    /// client made on this store; set once).
    pub fn saves_of(&self, client: &Arc<PersistenceManager>) {
        let _ = self.saves.client.set(Arc::downgrade(client));
    }
}

#[async_trait::async_trait]
impl DeviceStore for SeaOrmDeviceStore {
    async fn save(&self, device: &Device) -> Result<()> {
        let _turn = self.saves.turn.lock().await;
        let latest = self
            .saves
            .client
            .get()
            .and_then(Weak::upgrade)
            .map(|client| client.get_device_snapshot().to_serializable());
        let device = latest.as_ref().unwrap_or(device);
        let row = to_row(self.db.keys(), self.id(), device).into_active_model();
        let values = Column::iter().filter(|c| !matches!(c, Column::ClientId));
        let upsert = Entity::insert(row).on_conflict(
            OnConflict::column(Column::ClientId)
                .update_columns(values)
                .to_owned(),
        );
        self.fenced_query(upsert).await
    }

    async fn load(&self) -> Result<Option<Device>> {
        Entity::find_by_id(self.client_id.as_str())
            .one(self.conn())
            .await
            .map_err(db_err)?
            .map(|row| from_row(self.db.keys(), row))
            .transpose()
    }

    async fn exists(&self) -> Result<bool> {
        let rows = Entity::find_by_id(self.client_id.as_str())
            .count(self.conn())
            .await
            .map_err(db_err)?;
        Ok(rows > 0)
    }

    /// Stores a freshly generated device unless one exists (never replaces keys).
    async fn create(&self) -> Result<i32> {
        let row = to_row(self.db.keys(), self.id(), &Device::new()).into_active_model();
        let txn = self.write().await?;
        Entity::insert(row)
            .on_conflict_do_nothing()
            .exec_without_returning(&txn)
            .await
            .map_err(db_err)?;
        commit(txn).await?;
        Ok(DEVICE_ID)
    }

    /// The state lives in the shared database, not in this process's memory.
    async fn resource_report(&self) -> StorageResourceReport {
        StorageResourceReport {
            memory_bytes: Some(0),
            ..StorageResourceReport::default()
        }
    }
}
