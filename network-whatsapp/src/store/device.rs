//! `DeviceStore`: the session's own device row (one per clientId, device id 1).
//! `snapshot_db` keeps the library's no-op default (it serves a debug feature
//! that copies a local database file; there is none here).
use sea_orm::sea_query::OnConflict;
use sea_orm::{EntityTrait, IntoActiveModel, Iterable, PaginatorTrait};
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

#[async_trait::async_trait]
impl DeviceStore for SeaOrmDeviceStore {
    async fn save(&self, device: &Device) -> Result<()> {
        let row = to_row(self.id(), device).into_active_model();
        let values = Column::iter().filter(|c| !matches!(c, Column::ClientId));
        let txn = self.write().await?;
        Entity::insert(row)
            .on_conflict(
                OnConflict::column(Column::ClientId)
                    .update_columns(values)
                    .to_owned(),
            )
            .exec_without_returning(&txn)
            .await
            .map_err(db_err)?;
        commit(txn).await
    }

    async fn load(&self) -> Result<Option<Device>> {
        Entity::find_by_id(self.client_id.as_str())
            .one(self.conn())
            .await
            .map_err(db_err)?
            .map(from_row)
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
        let row = to_row(self.id(), &Device::new()).into_active_model();
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
