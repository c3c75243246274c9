//! Bodies of the hosted inbox and media library routes.
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `GET /chatrooms` query (and the optional `orgId` check of the other inbox routes).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InboxQuery {
    /// Required on `GET /chatrooms`; optional elsewhere (a session secret needs it
    /// on `/media-files/{messageId}/url`).
    pub client_id: Option<String>,
    /// When given, it must be the session's workspace id (else 404).
    pub org_id: Option<String>,
    /// `GET /chatrooms` only (Parley's): the rooms of chats with this label.
    pub label_id: Option<String>,
}

/// `GET /media-files` query. Numbers are read as text so bad values are a 400 `{error}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaFilesQuery {
    pub client_id: Option<String>,
    pub org_id: Option<String>,
    /// 1-based, default 1.
    pub page: Option<String>,
    /// Default 50, at most 200 (larger values are capped).
    pub limit: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatRoom {
    pub chat_room_id: String,
    pub client_id: String,
    pub name: String,
    pub my_lid: String,
    pub client_lid: String,
    pub is_group: bool,
    pub remote_jid: String,
    pub last_message: String,
    pub last_message_from_me: bool,
    /// RFC 3339; empty when the room has no message yet.
    pub last_message_at: String,
    pub unread_count: i64,
    pub avatar_url: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatRoomList {
    pub chat_rooms: Vec<ChatRoom>,
}

/// `{mimeType, mediaType, fileName, fileSize}` of a media message.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MessageMediaInfo {
    pub mime_type: String,
    pub media_type: String,
    pub file_name: String,
    pub file_size: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryMessage {
    pub message_id: String,
    pub chat_room_id: String,
    pub client_id: String,
    pub body: String,
    /// `chat`, `image`, `video`, `audio`, `document`, `sticker`, `contact`,
    /// `location`, `poll`, `vote_update`, `interactive` or `interactive_reply`.
    pub message_type: String,
    pub from_me: bool,
    pub pushname: String,
    pub sent_at: String,
    pub deleted: bool,
    pub from_ai: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media: Option<MessageMediaInfo>,
    /// Permanent public link of the stored file (media messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub download_url: Option<String>,
    #[schema(value_type = Object)]
    pub extras: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct MessageList {
    pub messages: Vec<HistoryMessage>,
}

/// A media-library record; `messageId` is the storage UUID.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MediaFile {
    pub message_id: String,
    pub client_id: String,
    pub mime_type: String,
    pub media_type: String,
    pub file_name: String,
    pub file_size: i64,
    pub caption: String,
    pub created_at: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Pagination {
    pub page: u64,
    pub limit: u64,
    pub total: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct MediaFileList {
    pub ok: bool,
    pub files: Vec<MediaFile>,
    pub pagination: Pagination,
}

/// `{ok: true, url}`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct MediaUrl {
    pub ok: bool,
    pub url: String,
}

/// `POST /refresh-avatars`.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefreshAvatars {
    #[serde(default)]
    pub client_id: String,
    /// Also look up rooms that already have a picture (an unchanged picture is
    /// not copied again).
    #[serde(default)]
    pub force: Option<bool>,
}

/// What `/refresh-avatars` did, per room: `rooms = updated + skipped + noPhoto + failed`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefreshedAvatars {
    /// The session's hosted-inbox rooms walked.
    pub rooms: u64,
    /// Rooms that got a new picture link (a picture version copied once).
    pub updated: u64,
    /// Rooms that kept their picture: not looked up (they had one and `force`
    /// was not set), or looked up and unchanged.
    pub skipped: u64,
    /// Rooms without a visible picture (none, or hidden by privacy): `avatarUrl` is empty.
    pub no_photo: u64,
    /// Rooms whose lookup or copy failed; they keep what they had.
    pub failed: u64,
}
