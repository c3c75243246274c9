//! What the hosted inbox's reads answer: rooms, messages and media-library
//! records, built from their stored rows.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::*;
use crate::db::entities::history::{media_files, messages, rooms};

/// A stored chat room.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRoomRow {
    pub client_id: String,
    pub chat_room_id: String,
    pub org_id: String,
    pub name: String,
    pub my_lid: String,
    pub client_lid: String,
    pub is_group: bool,
    pub remote_jid: String,
    pub avatar_url: String,
    pub last_message_id: String,
    pub last_message: String,
    pub last_message_from_me: bool,
    pub last_message_at: Option<DateTime<Utc>>,
    pub unread_count: i64,
}

/// A stored message.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRow {
    pub client_id: String,
    pub chat_room_id: String,
    pub message_id: String,
    pub org_id: String,
    pub body: String,
    pub message_type: String,
    pub from_me: bool,
    pub pushname: String,
    pub sender: String,
    pub sent_at: DateTime<Utc>,
    pub deleted: bool,
    pub from_ai: bool,
    pub media: Option<MessageMedia>,
    pub media_file_id: Option<String>,
    pub download_url: String,
    pub extras: Value,
}

/// A media-library record.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaFileRow {
    pub id: String,
    pub client_id: String,
    pub org_id: String,
    pub chat_room_id: String,
    pub message_id: String,
    pub storage_key: String,
    pub url: String,
    pub mime_type: String,
    pub media_type: String,
    pub file_name: String,
    pub file_size: i64,
    pub caption: String,
    pub sha256: String,
    pub created_at: DateTime<Utc>,
}

/// One page of the media library.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaPage {
    pub files: Vec<MediaFileRow>,
    pub total: u64,
}

impl From<rooms::Model> for ChatRoomRow {
    fn from(m: rooms::Model) -> Self {
        ChatRoomRow {
            client_id: m.client_id,
            chat_room_id: m.chat_room_id,
            org_id: m.org_id,
            name: m.name,
            my_lid: m.my_lid,
            client_lid: m.client_lid,
            is_group: m.is_group,
            remote_jid: m.remote_jid,
            avatar_url: m.avatar_url,
            last_message_id: m.last_message_id,
            last_message: m.last_message,
            last_message_from_me: m.last_message_from_me,
            last_message_at: m.last_message_at,
            unread_count: m.unread_count,
        }
    }
}

impl From<messages::Model> for MessageRow {
    fn from(m: messages::Model) -> Self {
        MessageRow {
            client_id: m.client_id,
            chat_room_id: m.chat_room_id,
            message_id: m.message_id,
            org_id: m.org_id,
            body: m.body,
            message_type: m.message_type,
            from_me: m.from_me,
            pushname: m.pushname,
            sender: m.sender,
            sent_at: m.sent_at,
            deleted: m.deleted,
            from_ai: m.from_ai,
            media: m.media.and_then(|t| serde_json::from_str(&t).ok()),
            media_file_id: m.media_file_id,
            download_url: m.download_url,
            extras: serde_json::from_str(&m.extras).unwrap_or_else(|_| json!({})),
        }
    }
}

impl From<media_files::Model> for MediaFileRow {
    fn from(m: media_files::Model) -> Self {
        MediaFileRow {
            id: m.id,
            client_id: m.client_id,
            org_id: m.org_id,
            chat_room_id: m.chat_room_id,
            message_id: m.message_id,
            storage_key: m.storage_key,
            url: m.url,
            mime_type: m.mime_type,
            media_type: m.media_type,
            file_name: m.file_name,
            file_size: m.file_size,
            caption: m.caption,
            sha256: m.sha256,
            created_at: m.created_at,
        }
    }
}
