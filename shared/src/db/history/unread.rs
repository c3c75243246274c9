//! Unread counters: added to by writes (see `room_deltas`), reset here.

use sea_orm::sea_query::Expr;

use crate::db::entities::history::rooms;
use crate::db::{Db, DbError};

impl Db {
    /// Resets the room's unread counter; `false` when the room is not stored.
    pub async fn reset_unread(&self, client_id: &str, chat_room_id: &str) -> Result<bool, DbError> {
        self.set_room_column(
            client_id,
            chat_room_id,
            rooms::Column::UnreadCount,
            Expr::value(0i64),
        )
        .await
    }
}
