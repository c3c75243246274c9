//! The library's serialized group info per group (`wa_group_metadata`), which
//! lets it skip re-querying a group whose participant hash did not change.
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, EntityTrait};
use whatsapp_rust::wacore::store::error::Result;

use crate::store::SeaOrmDeviceStore;
use crate::store::error::db_err;
use crate::store::fence::commit;
use crate::store::tables::protocol::group_metadata::{ActiveModel, Column, Entity};

pub(super) async fn get(store: &SeaOrmDeviceStore, group_jid: &str) -> Result<Option<Vec<u8>>> {
    Ok(Entity::find_by_id((store.id(), group_jid.to_string()))
        .one(store.conn())
        .await
        .map_err(db_err)?
        .map(|row| row.info))
}

pub(super) async fn put(store: &SeaOrmDeviceStore, group_jid: &str, blob: &[u8]) -> Result<()> {
    let row = ActiveModel {
        client_id: Set(store.id()),
        group_jid: Set(group_jid.to_string()),
        info: Set(blob.to_vec()),
    };
    let txn = store.write().await?;
    Entity::insert(row)
        .on_conflict(
            OnConflict::columns([Column::ClientId, Column::GroupJid])
                .update_column(Column::Info)
                .to_owned(),
        )
        .exec_without_returning(&txn)
        .await
        .map_err(db_err)?;
    commit(txn).await
}

pub(super) async fn delete(store: &SeaOrmDeviceStore, group_jid: &str) -> Result<()> {
    let txn = store.write().await?;
    Entity::delete_by_id((store.id(), group_jid.to_string()))
        .exec(&txn)
        .await
        .map_err(db_err)?;
    commit(txn).await
}
