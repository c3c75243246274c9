//! Base keys saved for retry collision detection (`wa_base_keys`).
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, EntityTrait};
use whatsapp_rust::wacore::store::error::Result;

use crate::store::SeaOrmDeviceStore;
use crate::store::error::db_err;
use crate::store::fence::commit;
use crate::store::tables::protocol::base_keys::{ActiveModel, Column, Entity};

pub(super) async fn save(
    store: &SeaOrmDeviceStore,
    address: &str,
    message_id: &str,
    base_key: &[u8],
) -> Result<()> {
    let row = ActiveModel {
        client_id: Set(store.id()),
        address: Set(address.to_string()),
        message_id: Set(message_id.to_string()),
        base_key: Set(base_key.to_vec()),
    };
    let txn = store.write().await?;
    Entity::insert(row)
        .on_conflict(
            OnConflict::columns([Column::ClientId, Column::Address, Column::MessageId])
                .update_column(Column::BaseKey)
                .to_owned(),
        )
        .exec_without_returning(&txn)
        .await
        .map_err(db_err)?;
    commit(txn).await
}

/// Whether a base key was saved for the pair and equals `current`.
pub(super) async fn is_same(
    store: &SeaOrmDeviceStore,
    address: &str,
    message_id: &str,
    current: &[u8],
) -> Result<bool> {
    let saved = Entity::find_by_id((store.id(), address.to_string(), message_id.to_string()))
        .one(store.conn())
        .await
        .map_err(db_err)?;
    Ok(saved.is_some_and(|row| row.base_key == current))
}

pub(super) async fn delete(
    store: &SeaOrmDeviceStore,
    address: &str,
    message_id: &str,
) -> Result<()> {
    let txn = store.write().await?;
    Entity::delete_by_id((store.id(), address.to_string(), message_id.to_string()))
        .exec(&txn)
        .await
        .map_err(db_err)?;
    commit(txn).await
}
