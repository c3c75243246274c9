//! Trusted-contact tokens (`wa_tc_tokens`). The two concurrent writers (the
//! received-token path and the sender-timestamp path) are single atomic upserts
//! (`INSERT ... ON CONFLICT DO UPDATE`), each touching only its own fields, so
//! neither can drop what the other wrote.
use sea_orm::sea_query::{Expr, ExprTrait, Func, OnConflict};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, Condition, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};
use whatsapp_rust::wacore::store::error::Result;
use whatsapp_rust::wacore::store::traits::TcTokenEntry;

use crate::store::SeaOrmDeviceStore;
use crate::store::error::db_err;
use crate::store::fence::commit;
use crate::store::tables::protocol::tc_tokens::{ActiveModel, Column, Entity};

/// The sender bucket only moves forward.
const MAX_SENDER_TIMESTAMP: &str = "CASE WHEN wa_tc_tokens.sender_timestamp IS NULL \
     OR excluded.sender_timestamp > wa_tc_tokens.sender_timestamp \
     THEN excluded.sender_timestamp ELSE wa_tc_tokens.sender_timestamp END";

/// A received token replaces a placeholder, or a token at least as old.
const NEWER_TOKEN_WINS: &str = "length(wa_tc_tokens.token) = 0 \
     OR excluded.token_timestamp >= wa_tc_tokens.token_timestamp";

fn key() -> OnConflict {
    OnConflict::columns([Column::ClientId, Column::Jid])
}

/// `jid`'s token, from the session's cache when it has it (see `tc_cache`).
pub(super) async fn get(store: &SeaOrmDeviceStore, jid: &str) -> Result<Option<TcTokenEntry>> {
    let cache = &store.tc_cache;
    if let Some(entry) = cache.get(store.fence, jid) {
        return Ok(entry);
    }
    let began = cache.generation();
    let entry = Entity::find_by_id((store.id(), jid.to_string()))
        .one(store.conn())
        .await
        .map_err(db_err)?
        .map(|row| TcTokenEntry {
            token: row.token,
            token_timestamp: row.token_timestamp,
            sender_timestamp: row.sender_timestamp,
        });
    cache.keep(store.fence, began, jid, entry.clone());
    Ok(entry)
}

/// Runs a write of `jid`'s token (every contact's: `None`), then drops what
/// the cache has of it, whether the write committed or not.
pub(super) async fn dropping<T>(
    store: &SeaOrmDeviceStore,
    jid: Option<&str>,
    write: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    let written = write.await;
    store.tc_cache.drop_entry(jid);
    written
}

pub(super) async fn put(store: &SeaOrmDeviceStore, jid: &str, entry: &TcTokenEntry) -> Result<()> {
    let row = ActiveModel {
        client_id: Set(store.id()),
        jid: Set(jid.to_string()),
        token: Set(entry.token.clone()),
        token_timestamp: Set(entry.token_timestamp),
        sender_timestamp: Set(entry.sender_timestamp),
    };
    let txn = store.write().await?;
    Entity::insert(row)
        .on_conflict(
            key()
                .update_columns([
                    Column::Token,
                    Column::TokenTimestamp,
                    Column::SenderTimestamp,
                ])
                .to_owned(),
        )
        .exec_without_returning(&txn)
        .await
        .map_err(db_err)?;
    commit(txn).await
}

pub(super) async fn delete(store: &SeaOrmDeviceStore, jid: &str) -> Result<()> {
    let txn = store.write().await?;
    Entity::delete_by_id((store.id(), jid.to_string()))
        .exec(&txn)
        .await
        .map_err(db_err)?;
    commit(txn).await
}

pub(super) async fn all_jids(store: &SeaOrmDeviceStore) -> Result<Vec<String>> {
    Entity::find()
        .select_only()
        .column(Column::Jid)
        .filter(Column::ClientId.eq(store.client_id.as_str()))
        .order_by_asc(Column::Jid)
        .into_tuple()
        .all(store.conn())
        .await
        .map_err(db_err)
}

/// Deletes rows whose received token is expired or absent AND whose sender
/// bucket is expired or absent.
pub(super) async fn delete_expired(
    store: &SeaOrmDeviceStore,
    token_cutoff: i64,
    sender_cutoff: i64,
) -> Result<u32> {
    let token_dead = Condition::any()
        .add(Expr::expr(Func::cust("length").arg(Expr::col(Column::Token))).eq(0))
        .add(Column::TokenTimestamp.lt(token_cutoff));
    let sender_dead = Condition::any()
        .add(Column::SenderTimestamp.is_null())
        .add(Column::SenderTimestamp.lt(sender_cutoff));
    let dead = Condition::all()
        .add(Column::ClientId.eq(store.client_id.as_str()))
        .add(token_dead)
        .add(sender_dead);
    // Pruned at every login, and mostly nothing to prune: a read first,
    // a fenced write only when there is.
    let any = Entity::find()
        .select_only()
        .column(Column::Jid)
        .filter(dead.clone())
        .limit(1)
        .into_tuple::<String>()
        .one(store.conn())
        .await
        .map_err(db_err)?;
    if any.is_none() {
        return Ok(0);
    }
    let txn = store.write().await?;
    let res = Entity::delete_many()
        .filter(dead)
        .exec(&txn)
        .await
        .map_err(db_err)?;
    commit(txn).await?;
    Ok(u32::try_from(res.rows_affected).unwrap_or(u32::MAX))
}

/// Inserts a byte-less placeholder or advances `sender_timestamp` (max), keeping
/// any stored token.
pub(super) async fn touch_sender(
    store: &SeaOrmDeviceStore,
    jid: &str,
    sender_timestamp: i64,
) -> Result<()> {
    let row = ActiveModel {
        client_id: Set(store.id()),
        jid: Set(jid.to_string()),
        token: Set(Vec::new()),
        token_timestamp: Set(sender_timestamp),
        sender_timestamp: Set(Some(sender_timestamp)),
    };
    let txn = store.write().await?;
    Entity::insert(row)
        .on_conflict(
            key()
                .value(Column::SenderTimestamp, Expr::cust(MAX_SENDER_TIMESTAMP))
                .to_owned(),
        )
        .exec_without_returning(&txn)
        .await
        .map_err(db_err)?;
    commit(txn).await
}

/// Stores a received token (newer wins), keeping any stored `sender_timestamp`.
pub(super) async fn store_received(
    store: &SeaOrmDeviceStore,
    jid: &str,
    token: &[u8],
    token_timestamp: i64,
) -> Result<()> {
    let row = ActiveModel {
        client_id: Set(store.id()),
        jid: Set(jid.to_string()),
        token: Set(token.to_vec()),
        token_timestamp: Set(token_timestamp),
        sender_timestamp: Set(None),
    };
    let txn = store.write().await?;
    Entity::insert(row)
        .on_conflict(
            key()
                .update_columns([Column::Token, Column::TokenTimestamp])
                .action_and_where(Expr::cust(NEWER_TOKEN_WINS))
                .to_owned(),
        )
        .exec_without_returning(&txn)
        .await
        .map_err(db_err)?;
    commit(txn).await
}
