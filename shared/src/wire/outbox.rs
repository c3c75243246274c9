//! Bodies of `GET /sandbox/outbox`: what a session put on the simulated network.
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutboxQuery {
    #[serde(default)]
    pub client_id: String,
    /// A chat JID, a user-part or a `+phone`.
    pub to: Option<String>,
    /// RFC 3339: only entries at or after this time.
    pub since: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutboxEntry {
    /// The network's id; empty for typing, receipts and delete-for-me, which have none.
    pub message_id: String,
    /// The chat JID.
    pub to: String,
    /// `text`, `image`, `video`, `audio`, `document`, `sticker`, `poll`, `interactive`,
    /// `reaction`, `edit`, `location`, `contact`, `typing`, `revoke`, `delete_for_me`,
    /// `read` or `unread`.
    pub kind: String,
    /// What was sent.
    #[schema(value_type = Object)]
    pub payload: Value,
    pub at: DateTime<Utc>,
}

/// Oldest first.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Outbox {
    pub messages: Vec<OutboxEntry>,
}
