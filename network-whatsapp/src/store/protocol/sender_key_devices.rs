//! Which devices of a group hold our current sender key (`wa_sender_key_devices`).
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use whatsapp_rust::wacore::store::error::Result;

use crate::store::SeaOrmDeviceStore;
use crate::store::error::db_err;
use crate::store::fence::commit;
use crate::store::rows::{CHUNK, insert_rows, last_per_key};
use crate::store::tables::protocol::sender_key_devices::{ActiveModel, Column, Entity};

pub(super) async fn get(store: &SeaOrmDeviceStore, group_jid: &str) -> Result<Vec<(String, bool)>> {
    Ok(Entity::find()
        .filter(Column::ClientId.eq(store.client_id.as_str()))
        .filter(Column::GroupJid.eq(group_jid))
        .order_by_asc(Column::DeviceJid)
        .all(store.conn())
        .await
        .map_err(db_err)?
        .into_iter()
        .map(|row| (row.device_jid, row.has_key))
        .collect())
}

pub(super) async fn set(
    store: &SeaOrmDeviceStore,
    group_jid: &str,
    entries: &[(&str, bool)],
) -> Result<()> {
    let rows: Vec<_> = last_per_key(entries.to_vec(), |(device, _)| *device)
        .into_iter()
        .map(|(device_jid, has_key)| ActiveModel {
            client_id: Set(store.id()),
            group_jid: Set(group_jid.to_string()),
            device_jid: Set(device_jid.to_string()),
            has_key: Set(has_key),
        })
        .collect();
    let txn = store.write().await?;
    insert_rows(
        &txn,
        &rows,
        Some(
            &OnConflict::columns([Column::ClientId, Column::GroupJid, Column::DeviceJid])
                .update_column(Column::HasKey)
                .to_owned(),
        ),
    )
    .await?;
    commit(txn).await
}

pub(super) async fn clear_group(store: &SeaOrmDeviceStore, group_jid: &str) -> Result<()> {
    let txn = store.write().await?;
    Entity::delete_many()
        .filter(Column::ClientId.eq(store.client_id.as_str()))
        .filter(Column::GroupJid.eq(group_jid))
        .exec(&txn)
        .await
        .map_err(db_err)?;
    commit(txn).await
}

/// Forgets the listed devices in every group.
pub(super) async fn delete_devices(store: &SeaOrmDeviceStore, device_jids: &[&str]) -> Result<()> {
    if device_jids.is_empty() {
        return Ok(());
    }
    let txn = store.write().await?;
    for chunk in device_jids.chunks(CHUNK) {
        Entity::delete_many()
            .filter(Column::ClientId.eq(store.client_id.as_str()))
            .filter(Column::DeviceJid.is_in(chunk.iter().copied()))
            .exec(&txn)
            .await
            .map_err(db_err)?;
    }
    commit(txn).await
}

pub(super) async fn clear_all(store: &SeaOrmDeviceStore) -> Result<()> {
    let txn = store.write().await?;
    Entity::delete_many()
        .filter(Column::ClientId.eq(store.client_id.as_str()))
        .exec(&txn)
        .await
        .map_err(db_err)?;
    commit(txn).await
}
