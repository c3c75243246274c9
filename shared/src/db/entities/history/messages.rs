//! The `history_messages` entity: one row per stored message, unique on
//! `(client_id, chat_room_id, message_id)`.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "history_messages")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(column_type = "Text")]
    pub client_id: String,
    #[sea_orm(column_type = "Text")]
    pub chat_room_id: String,
    #[sea_orm(column_type = "Text")]
    pub message_id: String,
    #[sea_orm(column_type = "Text")]
    pub org_id: String,
    #[sea_orm(column_type = "Text")]
    pub body: String,
    #[sea_orm(column_type = "Text")]
    pub message_type: String,
    pub from_me: bool,
    #[sea_orm(column_type = "Text")]
    pub pushname: String,
    /// The sender's JID (for quoting).
    #[sea_orm(column_type = "Text")]
    pub sender: String,
    pub sent_at: DateTimeUtc,
    pub deleted: bool,
    pub from_ai: bool,
    /// JSON text `{mimeType, mediaType, fileName, fileSize}`.
    #[sea_orm(column_type = "Text", nullable)]
    pub media: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub media_file_id: Option<String>,
    #[sea_orm(column_type = "Text")]
    pub download_url: String,
    /// JSON text.
    #[sea_orm(column_type = "Text")]
    pub extras: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
