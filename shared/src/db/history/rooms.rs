//! Room lists: a session's rooms, one room by id or by contact, and the
//! room columns set from outside a write (its avatar, a contact's name).

use chrono::Utc;
use sea_orm::sea_query::{Expr, ExprTrait, Query, SubQueryStatement};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

use super::*;
use crate::db::entities::contacts;
use crate::db::entities::history::rooms;
use crate::db::{Db, DbError};

impl Db {
    /// The rooms of a session, newest activity first.
    pub async fn chat_rooms(&self, client_id: &str) -> Result<Vec<ChatRoomRow>, DbError> {
        let mut rows: Vec<ChatRoomRow> = rooms::Entity::find()
            .filter(rooms::Column::ClientId.eq(client_id))
            .all(self.conn())
            .await?
            .into_iter()
            .map(ChatRoomRow::from)
            .collect();
        // In Rust: the databases order NULLs differently.
        rows.sort_by(|a, b| {
            b.last_message_at
                .cmp(&a.last_message_at)
                .then_with(|| a.chat_room_id.cmp(&b.chat_room_id))
        });
        Ok(rows)
    }

    pub async fn chat_room(
        &self,
        client_id: &str,
        chat_room_id: &str,
    ) -> Result<Option<ChatRoomRow>, DbError> {
        Ok(
            rooms::Entity::find_by_id((client_id.to_string(), chat_room_id.to_string()))
                .one(self.conn())
                .await?
                .map(ChatRoomRow::from),
        )
    }

    /// The room of a contact (`user` is a LID user-part or phone digits) or of a
    /// group (`user` is the group id).
    pub async fn chat_room_for(
        &self,
        client_id: &str,
        user: &str,
        is_group: bool,
    ) -> Result<Option<ChatRoomRow>, DbError> {
        let mut q = rooms::Entity::find()
            .filter(rooms::Column::ClientId.eq(client_id))
            .filter(rooms::Column::IsGroup.eq(is_group));
        q = if is_group {
            q.filter(rooms::Column::ClientLid.eq(user))
        } else {
            q.filter(
                sea_orm::Condition::any()
                    .add(rooms::Column::ClientLid.eq(user))
                    .add(rooms::Column::RemotePhone.eq(user)),
            )
        };
        Ok(q.order_by_desc(rooms::Column::LastMessageAt)
            .one(self.conn())
            .await?
            .map(ChatRoomRow::from))
    }

    /// Sets the room's `avatarUrl` (empty: no picture); `false` when the room is
    /// not stored.
    pub async fn set_room_avatar(
        &self,
        client_id: &str,
        chat_room_id: &str,
        avatar_url: &str,
    ) -> Result<bool, DbError> {
        self.set_room_column(
            client_id,
            chat_room_id,
            rooms::Column::AvatarUrl,
            Expr::value(avatar_url),
        )
        .await
    }

    /// Names the session's unnamed direct rooms after the names learned for
    /// their contacts (`contacts.name`, from a history's push names); a room
    /// with a name keeps it. Returns how many rooms it named.
    pub async fn name_rooms_after_contacts(&self, client_id: &str) -> Result<u64, DbError> {
        let name = Query::select()
            .column((contacts::Entity, contacts::Column::Name))
            .from(contacts::Entity)
            .and_where(
                Expr::col((contacts::Entity, contacts::Column::ClientId))
                    .equals((rooms::Entity, rooms::Column::ClientId)),
            )
            .and_where(
                Expr::col((contacts::Entity, contacts::Column::Lid))
                    .equals((rooms::Entity, rooms::Column::ClientLid)),
            )
            .and_where(Expr::col((contacts::Entity, contacts::Column::Name)).ne(""))
            .to_owned();
        let res = rooms::Entity::update_many()
            .col_expr(
                rooms::Column::Name,
                Expr::SubQuery(
                    None,
                    Box::new(SubQueryStatement::SelectStatement(name.clone())),
                ),
            )
            .col_expr(rooms::Column::UpdatedAt, Expr::value(Utc::now()))
            .filter(rooms::Column::ClientId.eq(client_id))
            .filter(rooms::Column::IsGroup.eq(false))
            .filter(rooms::Column::Name.eq(""))
            .filter(rooms::Column::ClientLid.ne(""))
            .filter(Expr::exists(name))
            .exec(self.conn())
            .await?;
        Ok(res.rows_affected)
    }

    /// Sets one column of a room (and its `updated_at`); `false` when the
    /// room is not stored.
    pub(super) async fn set_room_column(
        &self,
        client_id: &str,
        chat_room_id: &str,
        column: rooms::Column,
        value: Expr,
    ) -> Result<bool, DbError> {
        let res = rooms::Entity::update_many()
            .col_expr(column, value)
            .col_expr(rooms::Column::UpdatedAt, Expr::value(Utc::now()))
            .filter(rooms::Column::ClientId.eq(client_id))
            .filter(rooms::Column::ChatRoomId.eq(chat_room_id))
            .exec(self.conn())
            .await?;
        Ok(res.rows_affected > 0)
    }
}
