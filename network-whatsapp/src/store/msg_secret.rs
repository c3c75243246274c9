//! `MsgSecretStore`: 32-byte message secrets (poll votes, edits, reactions need
//! the parent's), upserted with the library's merge rules in SQL: the later
//! deadline wins (0 = never wins over all), the later known parent time wins.
use std::collections::HashMap;

use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter};
use whatsapp_rust::wacore::store::error::Result;
use whatsapp_rust::wacore::store::traits::{
    MsgSecretEntry, MsgSecretStore, merge_msg_secret_expiry, merge_msg_secret_message_ts,
};

use super::SeaOrmDeviceStore;
use super::error::db_err;
use super::fence::commit;
use super::rows::inserts;
use super::tables::messages::msg_secrets::{ActiveModel, Column, Entity};

/// `merge_msg_secret_expiry(stored, incoming)` as SQL.
const MERGE_EXPIRY: &str = "CASE WHEN wa_msg_secrets.expires_at = 0 OR excluded.expires_at = 0 THEN 0 \
     WHEN excluded.expires_at > wa_msg_secrets.expires_at THEN excluded.expires_at \
     ELSE wa_msg_secrets.expires_at END";

/// `merge_msg_secret_message_ts(stored, incoming)` as SQL.
const MERGE_MESSAGE_TS: &str = "CASE WHEN excluded.message_ts > wa_msg_secrets.message_ts \
     THEN excluded.message_ts ELSE wa_msg_secrets.message_ts END";

#[async_trait::async_trait]
impl MsgSecretStore for SeaOrmDeviceStore {
    async fn put_msg_secrets(&self, entries: Vec<MsgSecretEntry>) -> Result<usize> {
        let stored = entries.len();
        let rows: Vec<_> = merge_duplicates(entries)
            .into_iter()
            .map(|e| ActiveModel {
                client_id: Set(self.id()),
                chat: Set(e.chat.to_string()),
                sender: Set(e.sender.to_string()),
                msg_id: Set(e.msg_id.to_string()),
                secret: Set(e.secret.to_vec()),
                expires_at: Set(e.expires_at),
                message_ts: Set(e.message_ts),
            })
            .collect();
        let on_conflict = OnConflict::columns([
            Column::ClientId,
            Column::Chat,
            Column::Sender,
            Column::MsgId,
        ])
        .update_column(Column::Secret)
        .value(Column::ExpiresAt, Expr::cust(MERGE_EXPIRY))
        .value(Column::MessageTs, Expr::cust(MERGE_MESSAGE_TS))
        .to_owned();
        // The library writes secrets behind its own buffer, which answers
        // reads of them until this returns.
        self.batched_behind(move |backend| inserts(backend, &rows, Some(&on_conflict)))
            .await?;
        Ok(stored)
    }

    async fn get_msg_secret(
        &self,
        chat: &str,
        sender: &str,
        msg_id: &str,
    ) -> Result<Option<Vec<u8>>> {
        Ok(self
            .get_msg_secret_with_ts(chat, sender, msg_id)
            .await?
            .map(|(secret, _)| secret))
    }

    async fn get_msg_secret_with_ts(
        &self,
        chat: &str,
        sender: &str,
        msg_id: &str,
    ) -> Result<Option<(Vec<u8>, i64)>> {
        let key = (
            self.id(),
            chat.to_string(),
            sender.to_string(),
            msg_id.to_string(),
        );
        Ok(Entity::find_by_id(key)
            .one(self.conn())
            .await
            .map_err(db_err)?
            .map(|row| (row.secret, row.message_ts)))
    }

    async fn delete_expired_msg_secrets(&self, cutoff_timestamp: i64) -> Result<u32> {
        let txn = self.write().await?;
        let res = Entity::delete_many()
            .filter(Column::ClientId.eq(self.client_id.as_str()))
            .filter(Column::ExpiresAt.ne(0))
            .filter(Column::ExpiresAt.lte(cutoff_timestamp))
            .exec(&txn)
            .await
            .map_err(db_err)?;
        commit(txn).await?;
        Ok(u32::try_from(res.rows_affected).unwrap_or(u32::MAX))
    }
}

/// One entry per key, merged as the database would merge them one by one (one
/// statement must not touch a row twice).
fn merge_duplicates(entries: Vec<MsgSecretEntry>) -> Vec<MsgSecretEntry> {
    let mut order = Vec::with_capacity(entries.len());
    let mut by_key: HashMap<(String, String, String), MsgSecretEntry> = HashMap::new();
    for entry in entries {
        let key = (
            entry.chat.to_string(),
            entry.sender.to_string(),
            entry.msg_id.to_string(),
        );
        match by_key.get_mut(&key) {
            Some(seen) => {
                seen.secret = entry.secret;
                seen.expires_at = merge_msg_secret_expiry(seen.expires_at, entry.expires_at);
                seen.message_ts = merge_msg_secret_message_ts(seen.message_ts, entry.message_ts);
            }
            None => {
                order.push(key.clone());
                by_key.insert(key, entry);
            }
        }
    }
    order
        .into_iter()
        .filter_map(|key| by_key.remove(&key))
        .collect()
}
