//! Bodies of the health probes.
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Live {
    pub status: String,
    pub pod_name: String,
    /// Time since the process started, e.g. `3h12m5s`.
    pub uptime: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
pub struct SessionCounts {
    pub total: u64,
    pub connected: u64,
    /// Linked sessions that should be online but are not (reconnecting or unowned).
    pub down: u64,
    /// Sessions logged out or banned by the network: `/start` pairs them again.
    pub terminal: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Ready {
    /// `ok`, `degraded` (storage, bus, lease store or event log down) or
    /// `unavailable` (database down: 503).
    pub status: String,
    pub pod_name: String,
    pub database: bool,
    pub storage: bool,
    pub bus: bool,
    /// Whether the lease store (Redis in the cluster) answers.
    pub leases: bool,
    /// Whether the event log takes events: the database, and in the cluster
    /// the JetStream stream of event bodies.
    pub events: bool,
    pub proxy: bool,
    pub alerts: bool,
    pub sessions: SessionCounts,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientHealth {
    pub client_id: String,
    pub jid: String,
    pub status: String,
    pub connected: bool,
    pub logged_in: bool,
    pub enable_group_ai: bool,
    pub reconnects: i64,
    pub connected_at: String,
    pub last_disconnect: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Clients {
    pub pod_name: String,
    /// Sessions that are down or terminal.
    pub failed_count: u64,
    pub clients: Vec<ClientHealth>,
}
