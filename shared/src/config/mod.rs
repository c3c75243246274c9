//! Configuration: embedded defaults, then an optional `parley.toml`, then `PARLEY_*` variables.
//! The settings and their defaults here; reading them in `load`, checking
//! them in `checks`, and what the other parts ask of them in `derived`.
mod checks;
mod derived;
mod load;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Which network sessions talk to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Network {
    Whatsapp,
    Sandbox,
}

/// Log line format; `auto` is JSON for the cluster roles and text for `serve`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Auto,
    Json,
    Text,
}

/// Every setting. The names are a public contract: `PARLEY_<NAME>` in the
/// environment, `<name>` in `parley.toml`.
#[derive(Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub bind: String,
    /// The operations listener (`/metrics`), apart from the customer-facing
    /// port; unset: `127.0.0.1:9464` for `serve`, `0.0.0.0:9464` for the
    /// cluster roles.
    pub ops_bind: Option<String>,
    pub account_token: Option<String>,
    pub data_dir: PathBuf,
    pub network: Network,
    pub public_url: Option<String>,
    pub hosted_receiver_url: Option<String>,
    pub pod_name: Option<String>,
    pub database_url: Option<String>,
    pub nats_url: Option<String>,
    pub redis_url: Option<String>,
    pub s3_endpoint: Option<String>,
    pub s3_bucket: Option<String>,
    pub s3_region: String,
    pub s3_access_key: Option<String>,
    pub s3_secret_key: Option<String>,
    pub s3_public_url: Option<String>,
    pub allow_http_webhooks: bool,
    pub allow_private_egress: bool,
    pub sandbox_qr_first_secs: u64,
    pub sandbox_qr_next_secs: u64,
    /// How long the sandbox's signed profile-picture links stay valid.
    pub sandbox_picture_link_secs: u64,
    pub otlp_endpoint: Option<String>,
    /// The proxy every customer URL (webhooks, poll lookups, media by URL)
    /// goes through; unset: direct connections, whatever the environment's
    /// proxy variables say.
    pub egress_proxy: Option<String>,
    /// Egress proxy for the real network (websocket and media HTTP):
    /// `http://host:port` (CONNECT) or `socks5://[user:pass@]host:port`.
    pub network_proxy: Option<String>,
    /// Tests only: a test network server's websocket (`ws://` or `wss://` on
    /// loopback) dialled instead of the network; honoured only by a build with
    /// the `test-network` feature, refused at start by any other.
    pub network_url: Option<String>,
    /// Tests only: the control API of the test network (`http://` on
    /// loopback) that `PARLEY_NETWORK_URL` names; with it the test-network
    /// build serves the sandbox's `/sandbox/*` routes over the real adapter.
    /// Refused at start by any other build.
    pub network_control_url: Option<String>,
    /// Inbound files larger than this are not copied to the hosted inbox's
    /// media store (default 2 GiB, the network's largest document).
    pub media_mirror_max_bytes: u64,
    /// Inbound files copied to the media store at once, per worker.
    pub media_mirror_transfers: u64,
    /// Media sends fetching, spooling and uploading at once, per worker.
    pub media_send_transfers: u64,
    /// How long the event log keeps an event (and a dead letter), in hours.
    pub event_retention_hours: u64,
    /// Undelivered events a session may have in the log before new ones are
    /// refused (backpressure); also how many it keeps without a webhook.
    pub event_session_cap: u64,
    /// Copies JetStream keeps of each event body (the cluster): 1 on one
    /// NATS server, 3 on a NATS cluster.
    pub event_stream_replicas: u64,
    /// Bytes the cluster's event stream may hold; past it new events are
    /// refused (backpressure).
    pub event_stream_max_bytes: u64,
    /// Live feeds (`GET /events/feed`) one API server keeps open at once;
    /// past it a new one is answered 503.
    pub live_feed_limit: u64,
    /// Seconds between the comments that keep an idle live feed's
    /// connection open through proxies.
    pub live_feed_heartbeat_secs: u64,
    /// How long a worker's announcement of its membership lasts, in
    /// milliseconds (announced every 500 ms): a dead worker's sessions move
    /// this long after its last announcement, and a worker whose
    /// announcements fail for this long less a second closes its sessions.
    pub worker_membership_ms: u64,
    /// The keys secrets are sealed with at rest: `id:base64key` entries,
    /// comma-separated (`serve` generates a key file when unset).
    pub store_keys: Option<String>,
    /// The id of the key new writes use (default: the only one).
    pub store_key_id: Option<String>,
    /// Prefix of NATS subjects and Redis keys, so clusters can share servers.
    pub cluster_name: String,
    pub log_format: LogFormat,
    /// Threads of the async runtime; unset: one per core for the cluster
    /// roles, half the cores (at least one) for `serve`, whose HTTP server
    /// and SQLite connections have threads of their own.
    pub runtime_threads: Option<u64>,
}
parley_contract::debug_redacted!(Config { bind, ops_bind, data_dir, network, public_url, hosted_receiver_url, pod_name, database_url, nats_url, redis_url, s3_endpoint, s3_bucket, s3_region, s3_public_url, allow_http_webhooks, allow_private_egress, sandbox_qr_first_secs, sandbox_qr_next_secs, sandbox_picture_link_secs, otlp_endpoint, network_url, network_control_url, media_mirror_max_bytes, media_mirror_transfers, media_send_transfers, event_retention_hours, event_session_cap, event_stream_replicas, event_stream_max_bytes, live_feed_limit, live_feed_heartbeat_secs, worker_membership_ms, store_key_id, cluster_name, log_format, runtime_threads; account_token, s3_access_key, s3_secret_key, store_keys, egress_proxy, network_proxy });

impl Default for Config {
    fn default() -> Self {
        Config {
            bind: "0.0.0.0:8080".into(),
            ops_bind: None,
            account_token: None,
            data_dir: PathBuf::from("./parley-data"),
            network: Network::Whatsapp,
            public_url: None,
            hosted_receiver_url: None,
            pod_name: None,
            database_url: None,
            nats_url: None,
            redis_url: None,
            s3_endpoint: None,
            s3_bucket: None,
            s3_region: "eu-west-1".into(),
            s3_access_key: None,
            s3_secret_key: None,
            s3_public_url: None,
            allow_http_webhooks: false,
            allow_private_egress: false,
            sandbox_qr_first_secs: 60,
            sandbox_qr_next_secs: 20,
            sandbox_picture_link_secs: crate::picture_links::DEFAULT_TTL_SECS,
            otlp_endpoint: None,
            egress_proxy: None,
            network_proxy: None,
            network_url: None,
            network_control_url: None,
            media_mirror_max_bytes: 2 << 30,
            media_mirror_transfers: 4,
            media_send_transfers: 8,
            event_retention_hours: 7 * 24,
            event_session_cap: 100_000,
            event_stream_replicas: 1,
            event_stream_max_bytes: 8 << 30,
            live_feed_limit: 1_000,
            live_feed_heartbeat_secs: 15,
            worker_membership_ms: 3_500,
            store_keys: None,
            store_key_id: None,
            cluster_name: "parley".into(),
            log_format: LogFormat::Auto,
            runtime_threads: None,
        }
    }
}

/// Names of every known variable (besides `PARLEY_CONFIG`, the file's path).
pub const KNOWN: &[&str] = &[
    "BIND",
    "OPS_BIND",
    "ACCOUNT_TOKEN",
    "DATA_DIR",
    "NETWORK",
    "PUBLIC_URL",
    "HOSTED_RECEIVER_URL",
    "POD_NAME",
    "DATABASE_URL",
    "NATS_URL",
    "REDIS_URL",
    "S3_ENDPOINT",
    "S3_BUCKET",
    "S3_REGION",
    "S3_ACCESS_KEY",
    "S3_SECRET_KEY",
    "S3_PUBLIC_URL",
    "ALLOW_HTTP_WEBHOOKS",
    "ALLOW_PRIVATE_EGRESS",
    "SANDBOX_QR_FIRST_SECS",
    "SANDBOX_QR_NEXT_SECS",
    "SANDBOX_PICTURE_LINK_SECS",
    "OTLP_ENDPOINT",
    "EGRESS_PROXY",
    "NETWORK_PROXY",
    "NETWORK_URL",
    "NETWORK_CONTROL_URL",
    "MEDIA_MIRROR_MAX_BYTES",
    "MEDIA_MIRROR_TRANSFERS",
    "MEDIA_SEND_TRANSFERS",
    "EVENT_RETENTION_HOURS",
    "EVENT_SESSION_CAP",
    "EVENT_STREAM_REPLICAS",
    "EVENT_STREAM_MAX_BYTES",
    "LIVE_FEED_LIMIT",
    "LIVE_FEED_HEARTBEAT_SECS",
    "WORKER_MEMBERSHIP_MS",
    "STORE_KEYS",
    "STORE_KEY_ID",
    "CLUSTER_NAME",
    "LOG_FORMAT",
    "RUNTIME_THREADS",
    "CONFIG",
];

/// A configuration that cannot be used; the message names the variable.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

fn invalid(name: &str, why: impl std::fmt::Display) -> ConfigError {
    ConfigError(format!("invalid PARLEY_{name}: {why}"))
}
