//! Sent messages kept for retry receipts (`wa_sent_messages`). `take` hands a
//! message out at most once, also under concurrency: inside the fenced write
//! transaction it reads the row and deletes it, and answers with the payload only
//! when its own DELETE removed the row (a concurrent taker's DELETE affects 0 rows).
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter};
use whatsapp_rust::wacore::store::error::Result;

use crate::store::SeaOrmDeviceStore;
use crate::store::error::db_err;
use crate::store::fence::commit;
use crate::store::rows::inserts;
use crate::store::tables::messages::sent_messages::{ActiveModel, Column, Entity};
use crate::store::values::now_secs;

pub(super) async fn store(
    store: &SeaOrmDeviceStore,
    chat_jid: &str,
    message_id: &str,
    payload: &[u8],
) -> Result<()> {
    let row = ActiveModel {
        client_id: Set(store.id()),
        chat_jid: Set(chat_jid.to_string()),
        message_id: Set(message_id.to_string()),
        payload: Set(payload.to_vec()),
        created_at: Set(now_secs()),
    };
    let on_conflict = OnConflict::columns([Column::ClientId, Column::ChatJid, Column::MessageId])
        .update_columns([Column::Payload, Column::CreatedAt])
        .to_owned();
    store
        .batched(move |backend| inserts(backend, std::slice::from_ref(&row), Some(&on_conflict)))
        .await
}

pub(super) async fn take(
    store: &SeaOrmDeviceStore,
    chat_jid: &str,
    message_id: &str,
) -> Result<Option<Vec<u8>>> {
    let key = (store.id(), chat_jid.to_string(), message_id.to_string());
    let txn = store.write().await?;
    let Some(row) = Entity::find_by_id(key.clone())
        .one(&txn)
        .await
        .map_err(db_err)?
    else {
        return Ok(None);
    };
    let deleted = Entity::delete_by_id(key)
        .exec(&txn)
        .await
        .map_err(db_err)?
        .rows_affected;
    commit(txn).await?;
    Ok((deleted == 1).then_some(row.payload))
}

/// Deletes messages stored before `cutoff` (unix seconds).
pub(super) async fn delete_expired(store: &SeaOrmDeviceStore, cutoff: i64) -> Result<u32> {
    let txn = store.write().await?;
    let res = Entity::delete_many()
        .filter(Column::ClientId.eq(store.client_id.as_str()))
        .filter(Column::CreatedAt.lt(cutoff))
        .exec(&txn)
        .await
        .map_err(db_err)?;
    commit(txn).await?;
    Ok(u32::try_from(res.rows_affected).unwrap_or(u32::MAX))
}
