//! The `history_rooms` entity: one row per chat of a session.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "history_rooms")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub client_id: String,
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub chat_room_id: String,
    #[sea_orm(column_type = "Text")]
    pub org_id: String,
    #[sea_orm(column_type = "Text")]
    pub name: String,
    #[sea_orm(column_type = "Text")]
    pub my_lid: String,
    #[sea_orm(column_type = "Text")]
    pub client_lid: String,
    pub is_group: bool,
    #[sea_orm(column_type = "Text")]
    pub remote_jid: String,
    #[sea_orm(column_type = "Text")]
    pub remote_phone: String,
    #[sea_orm(column_type = "Text")]
    pub avatar_url: String,
    #[sea_orm(column_type = "Text")]
    pub last_message_id: String,
    #[sea_orm(column_type = "Text")]
    pub last_message: String,
    pub last_message_from_me: bool,
    pub last_message_at: Option<DateTimeUtc>,
    pub unread_count: i64,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
