//! Message pages: the last messages of a room, one stored message, and what
//! other features read from stored messages (poll options).

use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect};
use serde_json::Value;

use super::updates::find_message;
use super::*;
use crate::db::entities::history::messages;
use crate::db::{Db, DbError};

impl Db {
    /// The last `limit` messages of a room, oldest first.
    pub async fn last_messages(
        &self,
        client_id: &str,
        chat_room_id: &str,
        limit: u64,
    ) -> Result<Vec<MessageRow>, DbError> {
        let mut rows: Vec<MessageRow> = messages::Entity::find()
            .filter(messages::Column::ClientId.eq(client_id))
            .filter(messages::Column::ChatRoomId.eq(chat_room_id))
            .order_by_desc(messages::Column::SentAt)
            .order_by_desc(messages::Column::Id)
            .limit(limit)
            .all(self.conn())
            .await?
            .into_iter()
            .map(MessageRow::from)
            .collect();
        rows.reverse();
        Ok(rows)
    }

    pub async fn history_message(
        &self,
        client_id: &str,
        chat_room_id: &str,
        message_id: &str,
    ) -> Result<Option<MessageRow>, DbError> {
        Ok(
            find_message(self.conn(), client_id, chat_room_id, message_id)
                .await?
                .map(MessageRow::from),
        )
    }

    /// Whether the room has at least one stored message.
    pub async fn room_has_messages(
        &self,
        client_id: &str,
        chat_room_id: &str,
    ) -> Result<bool, DbError> {
        let n = messages::Entity::find()
            .filter(messages::Column::ClientId.eq(client_id))
            .filter(messages::Column::ChatRoomId.eq(chat_room_id))
            .limit(1)
            .count(self.conn())
            .await?;
        Ok(n > 0)
    }

    /// The options of a stored poll of the session (any room), in their order.
    pub async fn poll_options(
        &self,
        client_id: &str,
        poll_message_id: &str,
    ) -> Result<Option<Vec<String>>, DbError> {
        let row = messages::Entity::find()
            .filter(messages::Column::ClientId.eq(client_id))
            .filter(messages::Column::MessageId.eq(poll_message_id))
            .filter(messages::Column::MessageType.eq("poll"))
            .one(self.conn())
            .await?;
        Ok(row.and_then(|m| {
            let extras: Value = serde_json::from_str(&m.extras).ok()?;
            let options = extras.get("poll")?.get("options")?.as_array()?;
            Some(
                options
                    .iter()
                    .filter_map(|o| o.as_str().map(str::to_string))
                    .collect(),
            )
        }))
    }
}
