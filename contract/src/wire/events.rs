//! The event log's routes: `GET /events`, `GET /events/dead-letters`,
//! `POST /events/redeliver`.
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::inbox::Pagination;

/// `GET /events` query. Numbers are read as text so bad values are a 400 `{error}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventsQuery {
    pub client_id: Option<String>,
    /// Events after this seq (default 0: from the first kept).
    pub after: Option<String>,
    /// 1 to 500, default 100.
    pub limit: Option<String>,
}

/// `GET /events/feed` query (a `Last-Event-ID` header takes the place of `after`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeedQuery {
    pub client_id: Option<String>,
    /// Events after this seq (default 0: from the first kept).
    pub after: Option<String>,
}

/// `GET /events/dead-letters` query.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeadLettersQuery {
    pub client_id: Option<String>,
    /// 1-based, default 1.
    pub page: Option<String>,
    /// 1 to 500, default 100.
    pub limit: Option<String>,
}

/// How an event's delivery stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventDelivery {
    /// `pending`, `delivered`, `rejected`, `dead` or `none` (the session had no webhook).
    #[schema(pattern = "^(pending|delivered|rejected|dead|none)$")]
    pub state: String,
    pub attempts: u32,
    /// The HTTP status of the last attempt; null before any, and after a
    /// timeout or a refused connection.
    pub last_status: Option<u16>,
    /// RFC 3339 UTC; null before the first attempt.
    pub last_attempt_at: Option<String>,
}

/// One event of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoggedEventItem {
    pub seq: u64,
    pub event_id: String,
    /// The webhook envelope, as delivered.
    #[schema(value_type = Object)]
    pub event: serde_json::Value,
    pub delivery: EventDelivery,
}

/// `{events, next}`: oldest first; `next` is the `after` of the following
/// page, null when this page is the last.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct EventPage {
    pub events: Vec<LoggedEventItem>,
    pub next: Option<u64>,
}

/// `{events, pagination}`: the session's dead letters, oldest first.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct DeadLetterPage {
    pub events: Vec<LoggedEventItem>,
    pub pagination: Pagination,
}

/// `POST /events/redeliver`: exactly one of `eventIds` and `afterSeq`. Both
/// are read as JSON values, so a `null` is refused like any wrong type.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RedeliverRequest {
    #[serde(default)]
    pub client_id: String,
    /// 1 to 500 event ids of the session.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    pub event_ids: Option<serde_json::Value>,
    /// Every event after this seq (0: every event kept).
    #[serde(default)]
    #[schema(value_type = Option<u64>)]
    pub after_seq: Option<serde_json::Value>,
}

/// `{queued}`: how many events were queued again.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Redelivered {
    pub queued: u64,
}
