//! The pending inbound buffer (`wa_pending_inbound`): decrypted messages kept
//! until their durability hook commits, keyed by chat, sender and stanza id;
//! in memory while the disk has no room for them (`store::held`).
use std::sync::Arc;

use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, DatabaseTransaction, EntityTrait, QueryFilter};
use whatsapp_rust::wacore::store::error::Result;
use whatsapp_rust::wacore::store::traits::{PendingInboundKey, PendingInboundRow};

use crate::store::SeaOrmDeviceStore;
use crate::store::error::db_err;
use crate::store::fence::commit;
use crate::store::held::{Key, Row, is_disk_full};
use crate::store::rows::{insert_rows, last_per_key};
use crate::store::tables::messages::pending_inbound::{ActiveModel, Column, Entity};
use crate::store::values::now_secs;

/// Stores (or replaces) the rows in one transaction; holds them in memory
/// when the disk has no room for them (see `store::held`).
pub(super) async fn store(store: &SeaOrmDeviceStore, rows: &[PendingInboundRow<'_>]) -> Result<()> {
    let now = now_secs();
    let rows: Vec<(Key, Row)> = last_per_key(rows.to_vec(), |r| (r.chat, r.sender, r.id))
        .into_iter()
        .map(|row| {
            let key = (row.chat.into(), row.sender.into(), row.id.into());
            let row = Row {
                message: row.message.to_vec(),
                inserted_at: now,
            };
            (key, row)
        })
        .collect();
    let models = Arc::new(models(store, &rows));
    let written = store.batched(move |txn| {
        let models = Arc::clone(&models);
        Box::pin(async move { upsert(txn, &models).await })
    });
    match written.await {
        Err(e) if is_disk_full(&e) => {
            tracing::warn!(client_id = %store.client_id, messages = rows.len(),
                "the disk is full: received messages are held in memory until it has room");
            store.held.hold(rows);
            Ok(())
        }
        done => done,
    }
}

/// Writes the held rows (before any other write of the session's state).
pub(in crate::store) async fn write_held(store: &SeaOrmDeviceStore) -> Result<()> {
    let rows = store.held.snapshot();
    let txn = store.unheld_write().await?;
    upsert(&txn, &models(store, &rows)).await?;
    commit(txn).await?;
    store.held.written(&rows);
    tracing::info!(client_id = %store.client_id, messages = rows.len(),
        "received messages held in memory for want of space are written");
    Ok(())
}

/// The rows of `store`'s session.
fn models(store: &SeaOrmDeviceStore, rows: &[(Key, Row)]) -> Vec<ActiveModel> {
    rows.iter()
        .map(|((chat, sender, id), row)| ActiveModel {
            client_id: Set(store.id()),
            chat: Set(chat.clone()),
            sender: Set(sender.clone()),
            message_id: Set(id.clone()),
            message: Set(row.message.clone()),
            inserted_at: Set(row.inserted_at),
        })
        .collect()
}

async fn upsert(txn: &DatabaseTransaction, models: &[ActiveModel]) -> Result<()> {
    insert_rows(
        txn,
        models,
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
    .await
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
    let (chat, sender, id) = key;
    Ok(Entity::find_by_id((store.id(), chat, sender, id))
        .one(store.conn())
        .await
        .map_err(db_err)?
        .map(|row| row.message))
}

/// Deletes the rows in one transaction (held ones at once).
pub(super) async fn delete(
    store: &SeaOrmDeviceStore,
    keys: &[PendingInboundKey<'_>],
) -> Result<()> {
    for key in keys {
        store
            .held
            .remove(&(key.chat.into(), key.sender.into(), key.id.into()));
    }
    let keys: Arc<[_]> = keys
        .iter()
        .map(|key| {
            let (chat, sender, id) = (
                key.chat.to_string(),
                key.sender.to_string(),
                key.id.to_string(),
            );
            (store.id(), chat, sender, id)
        })
        .collect();
    store
        .batched(move |txn| {
            let keys = Arc::clone(&keys);
            Box::pin(async move {
                for key in keys.iter() {
                    Entity::delete_by_id(key.clone())
                        .exec(txn)
                        .await
                        .map_err(db_err)?;
                }
                Ok(())
            })
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
