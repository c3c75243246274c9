//! The pending inbound buffer (`wa_pending_inbound`): decrypted messages kept
//! until their durability hook commits, keyed by chat, sender and stanza id;
//! held in memory and written with the session's next write of its device
//! state, if one comes before their delete (`store::held`).
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, QueryFilter,
    QueryTrait, Statement,
};
use whatsapp_rust::wacore::store::error::Result;
use whatsapp_rust::wacore::store::traits::{PendingInboundKey, PendingInboundRow};

use crate::store::SeaOrmDeviceStore;
use crate::store::error::db_err;
use crate::store::fence::commit;
use crate::store::held::{Key, Row, is_disk_full};
use crate::store::rows::{inserts, last_per_key};
use crate::store::tables::messages::pending_inbound::{ActiveModel, Column, Entity};
use crate::store::values::now_secs;

/// Holds the rows (the last of a key wins) until the session's next write.
pub(super) fn store(store: &SeaOrmDeviceStore, rows: &[PendingInboundRow<'_>]) {
    let now = now_secs();
    let rows = last_per_key(rows.to_vec(), |r| (r.chat, r.sender, r.id))
        .into_iter()
        .map(|row| {
            let key = (row.chat.into(), row.sender.into(), row.id.into());
            let row = Row {
                message: row.message.to_vec(),
                inserted_at: now,
            };
            (key, row)
        });
    store.held.hold(rows);
}

/// Writes the held rows in a transaction of their own (before a write that
/// is not batched).
pub(in crate::store) async fn write_held(store: &SeaOrmDeviceStore) -> Result<()> {
    let rows = store.held.take_unwritten();
    let written = async {
        let txn = store.unheld_write().await?;
        let backend = txn.get_database_backend();
        for statement in held_rows(backend, &store.client_id, &rows) {
            txn.execute_raw(statement).await.map_err(db_err)?;
        }
        commit(txn).await
    };
    match written.await {
        Ok(()) => {
            store.held.written(&rows);
            Ok(())
        }
        Err(e) => {
            if is_disk_full(&e) {
                tracing::warn!(client_id = %store.client_id, messages = rows.len(),
                    "the disk is full: received messages are held in memory, and the session's state is not saved, until it has room");
            }
            Err(e)
        }
    }
}

/// The statements writing `rows` of session `client_id` (none for none).
pub(in crate::store) fn held_rows(
    backend: DbBackend,
    client_id: &str,
    rows: &[(Key, Row)],
) -> Vec<Statement> {
    inserts(backend, &models(client_id, rows), Some(&on_conflict()))
}

/// The rows of session `client_id`.
fn models(client_id: &str, rows: &[(Key, Row)]) -> Vec<ActiveModel> {
    rows.iter()
        .map(|((chat, sender, id), row)| ActiveModel {
            client_id: Set(client_id.to_string()),
            chat: Set(chat.clone()),
            sender: Set(sender.clone()),
            message_id: Set(id.clone()),
            message: Set(row.message.clone()),
            inserted_at: Set(row.inserted_at),
        })
        .collect()
}

/// A row buffered again replaces the one stored.
fn on_conflict() -> OnConflict {
    OnConflict::columns([
        Column::ClientId,
        Column::Chat,
        Column::Sender,
        Column::MessageId,
    ])
    .update_columns([Column::Message, Column::InsertedAt])
    .to_owned()
}

pub(super) async fn get(
    store: &SeaOrmDeviceStore,
    chat: &str,
    sender: &str,
    id: &str,
) -> Result<Option<Vec<u8>>> {
    let key = (chat.to_string(), sender.to_string(), id.to_string());
    if let Some(held) = store.held.get(&key) {
        return Ok(Some(held));
    }
    let (chat, sender, id) = key.clone();
    let row = Entity::find_by_id((store.id(), chat, sender, id))
        .one(store.conn())
        .await
        .map_err(db_err)?;
    Ok(row.map(|row| {
        // A delete of the key must reach the database (a replay buffers the
        // message again).
        store.held.stored(&key, row.inserted_at);
        row.message
    }))
}

/// Deletes the rows: held ones at once, those the database may have in one
/// transaction.
pub(super) async fn delete(
    store: &SeaOrmDeviceStore,
    keys: &[PendingInboundKey<'_>],
) -> Result<()> {
    let keys: Vec<_> = keys
        .iter()
        .map(|key| {
            (
                key.chat.to_string(),
                key.sender.to_string(),
                key.id.to_string(),
            )
        })
        .filter(|key| store.held.remove(key))
        .map(|(chat, sender, id)| (store.id(), chat, sender, id))
        .collect();
    if keys.is_empty() {
        return Ok(());
    }
    store
        .batched(move |backend| {
            keys.iter()
                .map(|key| Entity::delete_by_id(key.clone()).build(backend))
                .collect()
        })
        .await
}

/// Deletes rows buffered before `cutoff` (unix seconds).
pub(super) async fn delete_expired(store: &SeaOrmDeviceStore, cutoff: i64) -> Result<u32> {
    let held = store.held.expire(cutoff);
    let txn = store.write().await?;
    let res = Entity::delete_many()
        .filter(Column::ClientId.eq(store.client_id.as_str()))
        .filter(Column::InsertedAt.lt(cutoff))
        .exec(&txn)
        .await
        .map_err(db_err)?;
    commit(txn).await?;
    Ok(u32::try_from(res.rows_affected)
        .unwrap_or(u32::MAX)
        .saturating_add(held))
}
