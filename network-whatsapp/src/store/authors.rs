//! The authors of the group messages a session received, beside its device
//! state: written under the session's fence like every other device write, so
//! a session that moves to another worker still knows who wrote what.
use std::collections::HashMap;

use chrono::Utc;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QuerySelect};
use whatsapp_rust::wacore::store::error::Result;

use super::SeaOrmDeviceStore;
use super::error::db_err;
use super::fence::commit;
use super::rows::{insert_rows, last_per_key};
use super::tables::messages::group_authors::{ActiveModel, Column, Entity};

/// One received group message and its author (full JIDs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupAuthor {
    pub chat: String,
    pub message_id: String,
    pub author: String,
}

impl SeaOrmDeviceStore {
    /// Records the authors of received group messages (a repeat keeps the last).
    pub async fn put_group_authors(&self, authors: Vec<GroupAuthor>) -> Result<()> {
        if authors.is_empty() {
            return Ok(());
        }
        let now = Utc::now().timestamp();
        let authors = last_per_key(authors, |a| (a.chat.clone(), a.message_id.clone()));
        let rows: Vec<ActiveModel> = authors
            .into_iter()
            .map(|a| ActiveModel {
                client_id: Set(self.id()),
                chat: Set(a.chat),
                message_id: Set(a.message_id),
                author: Set(a.author),
                noted_at: Set(now),
            })
            .collect();
        let txn = self.write().await?;
        insert_rows(
            &txn,
            &rows,
            Some(
                &OnConflict::columns([Column::ClientId, Column::Chat, Column::MessageId])
                    .update_columns([Column::Author, Column::NotedAt])
                    .to_owned(),
            ),
        )
        .await?;
        commit(txn).await
    }

    /// The author of `message_id` in the group `chat`, when it was recorded.
    pub async fn group_author(&self, chat: &str, message_id: &str) -> Result<Option<String>> {
        let mut found = self.group_authors(chat, &[message_id]).await?;
        Ok(found.remove(message_id))
    }

    /// The recorded authors of `message_ids` in the group `chat`, by message id
    /// (one query; ids without a record are absent).
    pub async fn group_authors(
        &self,
        chat: &str,
        message_ids: &[&str],
    ) -> Result<HashMap<String, String>> {
        if message_ids.is_empty() {
            return Ok(HashMap::new());
        }
        let rows: Vec<(String, String)> = Entity::find()
            .select_only()
            .column(Column::MessageId)
            .column(Column::Author)
            .filter(Column::ClientId.eq(self.client_id()))
            .filter(Column::Chat.eq(chat))
            .filter(Column::MessageId.is_in(message_ids.iter().copied()))
            .into_tuple()
            .all(self.conn())
            .await
            .map_err(db_err)?;
        Ok(rows.into_iter().collect())
    }

    /// Forgets the authors noted before `before` (unix seconds); returns how many.
    pub async fn prune_group_authors(&self, before: i64) -> Result<u64> {
        let txn = self.write().await?;
        let gone = Entity::delete_many()
            .filter(Column::ClientId.eq(self.client_id()))
            .filter(Column::NotedAt.lt(before))
            .exec(&txn)
            .await
            .map_err(db_err)?;
        commit(txn).await?;
        Ok(gone.rows_affected)
    }
}
