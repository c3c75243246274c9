//! The overview routes the console is built on (public API like the rest):
//! `GET /sessions` (searched and paged, with health and webhook state),
//! `GET /session-history` and `GET /cluster`.
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::inbox::Pagination;

/// `GET /sessions` query. Numbers are read as text so bad values are a 400 `{error}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionsQuery {
    /// Only this session (required with a session's secret, which names it).
    pub client_id: Option<String>,
    /// Part of a clientId, JID or orgId, any case; empty or absent: every session.
    pub q: Option<String>,
    /// 1-based, default 1.
    pub page: Option<String>,
    /// 1 to 200, default 50.
    pub limit: Option<String>,
}

/// How a session's webhook stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookState {
    /// Empty when delivery is disabled.
    pub url: String,
    pub poll_lookup_url: String,
    /// `none` (no URL), `dead-letters` (some events are dead letters),
    /// `retrying` (some events wait for a delivery) or `ok`.
    #[schema(pattern = "^(none|dead-letters|retrying|ok)$")]
    pub state: String,
    /// Events waiting for their first or next attempt.
    pub pending: u64,
    /// Events rejected by the receiver or out of attempts.
    pub dead_letters: u64,
    /// The event types the webhook takes (`/set-webhook-types`); `null`:
    /// every type.
    pub types: Option<Vec<String>>,
}

/// A session's call setting, as `GET /sessions` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallSettings {
    /// Calls are rejected as they come.
    pub reject: bool,
    /// The text sent to a rejected call's caller; empty: none.
    pub reply_text: String,
}

/// One session of `GET /sessions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionOverview {
    pub client_id: String,
    pub jid: String,
    pub status: String,
    pub connected: bool,
    pub logged_in: bool,
    /// The worker that owns it; empty when none does.
    pub pod_name: String,
    /// RFC 3339; empty when not connected.
    pub connected_at: String,
    pub reconnects: i64,
    /// The last disconnect reason; empty when none.
    pub last_disconnect: String,
    pub org_id: String,
    pub has_secret: bool,
    /// The presence the session set (`/set-presence`): `available`,
    /// `unavailable`, or empty when it never set one.
    pub presence: String,
    /// What it does with the calls that ring it (`/set-call-rejection`).
    pub calls: CallSettings,
    /// Its own network proxy (`/set-proxy`); `null` when it has none.
    pub proxy: Option<crate::wire::sessions::ProxyState>,
    /// RFC 3339.
    pub created_at: String,
    /// The newest `seq` of its event log; 0 when it has none.
    pub last_event_seq: u64,
    pub webhook: WebhookState,
}

/// `{sessions, pagination}`, ordered by clientId.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SessionOverviewPage {
    pub sessions: Vec<SessionOverview>,
    pub pagination: Pagination,
}

/// `GET /session-history` query.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryQuery {
    pub client_id: Option<String>,
}

/// One state change of a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StateChangeItem {
    /// RFC 3339 UTC.
    pub at: String,
    pub status: String,
    pub connected: bool,
    /// The disconnect reason this change brought; empty when none.
    pub reason: String,
    /// The owning pod after the change; empty when none.
    pub pod_name: String,
}

/// `{clientId, changes}`: the last 50 state changes, newest first.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionHistory {
    pub client_id: String,
    pub changes: Vec<StateChangeItem>,
}

/// A live API pod.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ApiPod {
    pub name: String,
}

/// A live worker with what it owns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct WorkerSummary {
    pub name: String,
    /// The load it announces (the sessions it runs).
    pub load: u64,
    /// Sessions the database names it the owner of.
    pub sessions: u64,
    /// Of those, connected now.
    pub connected: u64,
}

/// Whether each dependency answers now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Dependencies {
    pub database: bool,
    pub bus: bool,
    pub leases: bool,
    pub storage: bool,
    /// The event log takes events (the database, and in the cluster the JetStream stream).
    pub events: bool,
}

/// Sessions across the deployment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SessionTotals {
    pub total: u64,
    pub connected: u64,
    /// Down (reconnecting or unowned) or terminal (logged out).
    pub failed: u64,
    /// Waiting for a QR scan or a phone code.
    pub pairing: u64,
    /// Reconnects counted over every session's life.
    pub reconnects: u64,
}

/// Events across the deployment that still need something.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventTotals {
    pub pending: u64,
    pub dead_letters: u64,
}

/// `GET /cluster`: the deployment at a glance.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSummary {
    /// The pod that answered.
    pub pod_name: String,
    /// `serve` (one process) or `cluster`.
    #[schema(pattern = "^(serve|cluster)$")]
    pub mode: String,
    pub api_pods: Vec<ApiPod>,
    pub workers: Vec<WorkerSummary>,
    pub dependencies: Dependencies,
    pub sessions: SessionTotals,
    pub events: EventTotals,
    /// Disconnects across the deployment in the last hour.
    pub disconnects_last_hour: u64,
}
