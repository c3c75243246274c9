//! The pending inbound buffer (`wa_pending_inbound`): decrypted messages kept
//! until their durability hook commits, keyed by chat, sender and stanza id.
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter};
use whatsapp_rust::wacore::store::error::Result;
use whatsapp_rust::wacore::store::traits::{PendingInboundKey, PendingInboundRow};

use crate::store::SeaOrmDeviceStore;
use crate::store::error::db_err;
use crate::store::fence::commit;
use crate::store::rows::{insert_rows, last_per_key};
use crate::store::tables::messages::pending_inbound::{ActiveModel, Column, Entity};
use crate::store::values::now_secs;

/// Stores (or replaces) the rows in one transaction.
pub(super) async fn store(store: &SeaOrmDeviceStore, rows: &[PendingInboundRow<'_>]) -> Result<()> {
    let now = now_secs();
    let models: Vec<_> = last_per_key(rows.to_vec(), |r| (r.chat, r.sender, r.id))
        .into_iter()
        .map(|row| ActiveModel {
            client_id: Set(store.id()),
            chat: Set(row.chat.to_string()),
            sender: Set(row.sender.to_string()),
            message_id: Set(row.id.to_string()),
            message: Set(row.message.to_vec()),
            inserted_at: Set(now),
        })
        .collect();
    let txn = store.write().await?;
    insert_rows(
        &txn,
        &models,
        Some(
            &OnConflict::columns([
                Column::ClientId,
                Column::Chat,
                Column::Sender,
                Column::MessageId,
            ])
            .update_columns([Column::Message, Column::InsertedAt])
            .to_owned(),
        ),
    )
    .await?;
    commit(txn).await
}

pub(super) async fn get(
    store: &SeaOrmDeviceStore,
    chat: &str,
    sender: &str,
    id: &str,
) -> Result<Option<Vec<u8>>> {
    let key = (
        store.id(),
        chat.to_string(),
        sender.to_string(),
        id.to_string(),
    );
    Ok(Entity::find_by_id(key)
        .one(store.conn())
        .await
        .map_err(db_err)?
        .map(|row| row.message))
}

/// Deletes the rows in one transaction.
pub(super) async fn delete(
    store: &SeaOrmDeviceStore,
    keys: &[PendingInboundKey<'_>],
) -> Result<()> {
    let txn = store.write().await?;
    for key in keys {
        let key = (
            store.id(),
            key.chat.to_string(),
            key.sender.to_string(),
            key.id.to_string(),
        );
        Entity::delete_by_id(key).exec(&txn).await.map_err(db_err)?;
    }
    commit(txn).await
}

/// Deletes rows buffered before `cutoff` (unix seconds).
pub(super) async fn delete_expired(store: &SeaOrmDeviceStore, cutoff: i64) -> Result<u32> {
    let txn = store.write().await?;
    let res = Entity::delete_many()
        .filter(Column::ClientId.eq(store.client_id.as_str()))
        .filter(Column::InsertedAt.lt(cutoff))
        .exec(&txn)
        .await
        .map_err(db_err)?;
    commit(txn).await?;
    Ok(u32::try_from(res.rows_affected).unwrap_or(u32::MAX))
}
