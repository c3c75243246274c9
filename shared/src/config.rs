//! Configuration: embedded defaults, then an optional `parley.toml`, then `PARLEY_*` variables.
use std::net::SocketAddr;
use std::path::PathBuf;

use figment::Figment;
use figment::providers::{Format, Serialized, Toml};
use serde::{Deserialize, Serialize};

use crate::store_keys::StoreKeys;

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
    /// The keys secrets are sealed with at rest: `id:base64key` entries,
    /// comma-separated (`serve` generates a key file when unset).
    pub store_keys: Option<String>,
    /// The id of the key new writes use (default: the only one).
    pub store_key_id: Option<String>,
    /// Prefix of NATS subjects and Redis keys, so clusters can share servers.
    pub cluster_name: String,
    pub log_format: LogFormat,
}
crate::debug_redacted!(Config { bind, ops_bind, data_dir, network, public_url, hosted_receiver_url, pod_name, database_url, nats_url, redis_url, s3_endpoint, s3_bucket, s3_region, s3_public_url, allow_http_webhooks, allow_private_egress, sandbox_qr_first_secs, sandbox_qr_next_secs, sandbox_picture_link_secs, otlp_endpoint, egress_proxy, network_proxy, network_url, network_control_url, media_mirror_max_bytes, media_mirror_transfers, media_send_transfers, event_retention_hours, event_session_cap, event_stream_replicas, event_stream_max_bytes, store_key_id, cluster_name, log_format; account_token, s3_access_key, s3_secret_key, store_keys });

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
            store_keys: None,
            store_key_id: None,
            cluster_name: "parley".into(),
            log_format: LogFormat::Auto,
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
    "STORE_KEYS",
    "STORE_KEY_ID",
    "CLUSTER_NAME",
    "LOG_FORMAT",
    "CONFIG",
];

/// A configuration that cannot be used; the message names the variable.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

fn invalid(name: &str, why: impl std::fmt::Display) -> ConfigError {
    ConfigError(format!("invalid PARLEY_{name}: {why}"))
}

/// Settings the S3 adapter needs, present only when all are configured.
#[derive(Clone)]
pub struct S3Config {
    pub endpoint: String,
    pub bucket: String,
    pub region: String,
    pub access_key: String,
    pub secret_key: String,
    pub public_url: Option<String>,
}
crate::debug_redacted!(S3Config { endpoint, bucket, region, public_url; access_key, secret_key });

impl Config {
    /// Loads from the process environment and `parley.toml` (or `$PARLEY_CONFIG`).
    /// Returns the configuration and warnings to log (unknown `PARLEY_*` names).
    pub fn load() -> Result<(Config, Vec<String>), ConfigError> {
        let vars: Vec<(String, String)> = std::env::vars().collect();
        Self::load_from(&vars)
    }

    /// As [`Config::load`], from the given variables (tests).
    pub fn load_from(vars: &[(String, String)]) -> Result<(Config, Vec<String>), ConfigError> {
        let file = vars
            .iter()
            .find(|(k, _)| k == "PARLEY_CONFIG")
            .map(|(_, v)| PathBuf::from(v));
        if let Some(path) = &file
            && !path.is_file()
        {
            return Err(invalid("CONFIG", format!("no file at {}", path.display())));
        }
        let mut figment = Figment::from(Serialized::defaults(Config::default())).merge(Toml::file(
            file.unwrap_or_else(|| PathBuf::from("parley.toml")),
        ));
        // Only known names are merged, each as a string, so that a token of digits stays text.
        for (key, value) in vars {
            let Some(name) = key.strip_prefix("PARLEY_") else {
                continue;
            };
            if name == "CONFIG" || !KNOWN.contains(&name) || value.is_empty() {
                continue;
            }
            let field = name.to_ascii_lowercase();
            let value = typed_value(&field, value).map_err(|why| invalid(name, why))?;
            figment = figment.merge(Serialized::default(&field, value));
        }
        let config: Config = figment.extract().map_err(|e| {
            let name = e.path.join("_").to_ascii_uppercase();
            if name.is_empty() {
                ConfigError(format!("invalid configuration: {e}"))
            } else {
                invalid(&name, e.kind)
            }
        })?;
        config.validate()?;
        let warnings = vars
            .iter()
            .filter_map(|(k, _)| k.strip_prefix("PARLEY_"))
            .filter(|name| !KNOWN.contains(name))
            .map(|name| format!("unknown setting PARLEY_{name} is ignored"))
            .collect();
        Ok((config.normalized(), warnings))
    }

    /// The cluster's event stream: its age limit is the event log's retention.
    pub fn event_stream(&self) -> crate::event_stream::StreamSettings {
        crate::event_stream::StreamSettings {
            max_age: std::time::Duration::from_secs(self.event_retention_hours * 3600),
            max_bytes: self.event_stream_max_bytes,
            replicas: usize::try_from(self.event_stream_replicas).unwrap_or(1),
        }
    }

    fn validate(&self) -> Result<(), ConfigError> {
        self.bind.parse::<SocketAddr>().map_err(|e| {
            invalid(
                "BIND",
                format!("{e} (expected host:port, e.g. 0.0.0.0:8080)"),
            )
        })?;
        if let Some(ops) = &self.ops_bind {
            ops.parse::<SocketAddr>().map_err(|e| {
                invalid(
                    "OPS_BIND",
                    format!("{e} (expected host:port, e.g. 127.0.0.1:9464)"),
                )
            })?;
        }
        self.store_keys()?;
        if self.media_mirror_transfers == 0 {
            return Err(invalid("MEDIA_MIRROR_TRANSFERS", "must be at least 1"));
        }
        if self.media_send_transfers == 0 {
            return Err(invalid("MEDIA_SEND_TRANSFERS", "must be at least 1"));
        }
        if !(1..=24 * 366).contains(&self.event_retention_hours) {
            return Err(invalid(
                "EVENT_RETENTION_HOURS",
                "must be 1 to 8784 (a year)",
            ));
        }
        if !(1..=5).contains(&self.event_stream_replicas) {
            return Err(invalid("EVENT_STREAM_REPLICAS", "must be 1 to 5"));
        }
        if !(1 << 20..=i64::MAX as u64).contains(&self.event_stream_max_bytes) {
            return Err(invalid(
                "EVENT_STREAM_MAX_BYTES",
                "must be at least 1048576 (1 MiB)",
            ));
        }
        for (name, value) in [
            ("PUBLIC_URL", &self.public_url),
            ("HOSTED_RECEIVER_URL", &self.hosted_receiver_url),
            ("S3_ENDPOINT", &self.s3_endpoint),
            ("S3_PUBLIC_URL", &self.s3_public_url),
            ("OTLP_ENDPOINT", &self.otlp_endpoint),
            ("EGRESS_PROXY", &self.egress_proxy),
        ] {
            if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
                let url = url::Url::parse(v).map_err(|e| invalid(name, e))?;
                if !matches!(url.scheme(), "http" | "https") {
                    return Err(invalid(name, "expected an http(s) URL"));
                }
            }
        }
        for (name, value, schemes) in [
            (
                "NATS_URL",
                &self.nats_url,
                &["nats", "tls", "ws", "wss"][..],
            ),
            ("REDIS_URL", &self.redis_url, &["redis", "rediss"][..]),
            (
                "DATABASE_URL",
                &self.database_url,
                &["postgres", "postgresql", "sqlite"][..],
            ),
        ] {
            if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
                let scheme = v.split(':').next().unwrap_or_default();
                if !schemes.contains(&scheme) {
                    return Err(invalid(
                        name,
                        format!("expected a {} URL", schemes.join("/")),
                    ));
                }
            }
        }
        if let Some(v) = self
            .network_proxy
            .as_deref()
            .filter(|v| !v.trim().is_empty())
        {
            let url = url::Url::parse(v).map_err(|e| invalid("NETWORK_PROXY", e))?;
            if !matches!(url.scheme(), "http" | "socks5" | "socks5h") {
                return Err(invalid(
                    "NETWORK_PROXY",
                    "expected an http:// (CONNECT) or socks5:// URL",
                ));
            }
            if url.host_str().is_none_or(str::is_empty) {
                return Err(invalid("NETWORK_PROXY", "the URL names no host"));
            }
        }
        if let Some(v) = self.network_url.as_deref().filter(|v| !v.trim().is_empty()) {
            let url = url::Url::parse(v).map_err(|e| invalid("NETWORK_URL", e))?;
            if !matches!(url.scheme(), "ws" | "wss") {
                return Err(invalid("NETWORK_URL", "expected a ws:// or wss:// URL"));
            }
            if url.host_str().is_none_or(str::is_empty) {
                return Err(invalid("NETWORK_URL", "the URL names no host"));
            }
        }
        if let Some(v) = self
            .network_control_url
            .as_deref()
            .filter(|v| !v.trim().is_empty())
        {
            let url = url::Url::parse(v).map_err(|e| invalid("NETWORK_CONTROL_URL", e))?;
            if url.scheme() != "http" || url.host_str().is_none_or(str::is_empty) {
                return Err(invalid(
                    "NETWORK_CONTROL_URL",
                    "expected an http:// URL with a host",
                ));
            }
            if self.network_url.is_none() {
                return Err(invalid(
                    "NETWORK_CONTROL_URL",
                    "needs PARLEY_NETWORK_URL, the test network it controls",
                ));
            }
        }
        if self.sandbox_qr_first_secs == 0 {
            return Err(invalid("SANDBOX_QR_FIRST_SECS", "must be at least 1"));
        }
        if self.sandbox_qr_next_secs == 0 {
            return Err(invalid("SANDBOX_QR_NEXT_SECS", "must be at least 1"));
        }
        if self.sandbox_picture_link_secs == 0 {
            return Err(invalid("SANDBOX_PICTURE_LINK_SECS", "must be at least 1"));
        }
        if self.cluster_name.is_empty()
            || !self
                .cluster_name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(invalid("CLUSTER_NAME", "letters, digits, '-' and '_' only"));
        }
        Ok(())
    }

    /// Empty strings mean "unset".
    fn normalized(mut self) -> Config {
        for v in [
            &mut self.ops_bind,
            &mut self.account_token,
            &mut self.public_url,
            &mut self.hosted_receiver_url,
            &mut self.pod_name,
            &mut self.database_url,
            &mut self.nats_url,
            &mut self.redis_url,
            &mut self.s3_endpoint,
            &mut self.s3_bucket,
            &mut self.s3_access_key,
            &mut self.s3_secret_key,
            &mut self.s3_public_url,
            &mut self.otlp_endpoint,
            &mut self.egress_proxy,
            &mut self.network_proxy,
            &mut self.network_url,
            &mut self.network_control_url,
        ] {
            if v.as_deref().is_some_and(|s| s.trim().is_empty()) {
                *v = None;
            }
        }
        for s in [
            &mut self.public_url,
            &mut self.s3_public_url,
            &mut self.s3_endpoint,
        ]
        .into_iter()
        .flatten()
        {
            *s = s.trim_end_matches('/').to_string();
        }
        self
    }

    /// This node's name: `PARLEY_POD_NAME`, else the host name.
    pub fn pod_name(&self) -> String {
        self.pod_name.clone().unwrap_or_else(|| {
            std::env::var("HOSTNAME")
                .ok()
                .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty())
                .unwrap_or_else(|| "parley".into())
        })
    }

    /// The base URL clients reach this gateway at (for permanent media links).
    pub fn public_url(&self) -> String {
        self.public_url.clone().unwrap_or_else(|| {
            let addr: SocketAddr = self
                .bind
                .parse()
                .unwrap_or_else(|_| ([127, 0, 0, 1], 8080).into());
            let host = if addr.ip().is_unspecified() {
                "127.0.0.1".to_string()
            } else {
                addr.ip().to_string()
            };
            format!("http://{host}:{}", addr.port())
        })
    }

    /// The database URL: the configured one, else a SQLite file in the data dir.
    pub fn database_url(&self) -> String {
        self.database_url.clone().unwrap_or_else(|| {
            format!("sqlite://{}", self.data_dir.join("parley.sqlite").display())
        })
    }

    /// S3 settings when an endpoint is configured; an error names what is missing.
    pub fn s3(&self) -> Result<Option<S3Config>, ConfigError> {
        let Some(endpoint) = self.s3_endpoint.clone() else {
            return Ok(None);
        };
        let need = |name: &str, v: &Option<String>| {
            v.clone()
                .ok_or_else(|| invalid(name, "required when PARLEY_S3_ENDPOINT is set"))
        };
        Ok(Some(S3Config {
            endpoint,
            bucket: need("S3_BUCKET", &self.s3_bucket)?,
            region: self.s3_region.clone(),
            access_key: need("S3_ACCESS_KEY", &self.s3_access_key)?,
            secret_key: need("S3_SECRET_KEY", &self.s3_secret_key)?,
            public_url: self.s3_public_url.clone(),
        }))
    }

    /// Where the operations listener binds: `PARLEY_OPS_BIND`, else loopback
    /// for `serve` and every interface for the cluster roles (the chart
    /// scrapes it; no Service exposes it).
    pub fn ops_bind(&self, cluster_role: bool) -> String {
        match &self.ops_bind {
            Some(bind) => bind.clone(),
            None if cluster_role => "0.0.0.0:9464".into(),
            None => "127.0.0.1:9464".into(),
        }
    }

    /// The egress proxy for customer URLs, when one is set.
    pub fn egress_proxy(&self) -> Result<Option<url::Url>, ConfigError> {
        self.egress_proxy
            .as_deref()
            .map(|v| url::Url::parse(v).map_err(|e| invalid("EGRESS_PROXY", e)))
            .transpose()
    }

    /// What the cluster roles (`api`, `worker`) cannot run without.
    pub fn require_cluster(&self) -> Result<(), ConfigError> {
        for (name, v) in [
            ("DATABASE_URL", &self.database_url),
            ("NATS_URL", &self.nats_url),
            ("REDIS_URL", &self.redis_url),
            ("S3_ENDPOINT", &self.s3_endpoint),
        ] {
            if v.is_none() {
                return Err(ConfigError(format!(
                    "PARLEY_{name} is required for the cluster roles (api, worker)"
                )));
            }
        }
        self.s3()?;
        match self.store_keys()? {
            Some(_) => Ok(()),
            None => Err(ConfigError(
                "PARLEY_STORE_KEYS is required for the cluster roles (api, worker): secrets \
                 are sealed with it at rest (see docs/security.md)"
                    .into(),
            )),
        }
    }

    /// The store keys, when set.
    pub fn store_keys(&self) -> Result<Option<StoreKeys>, ConfigError> {
        self.store_keys
            .as_deref()
            .filter(|k| !k.trim().is_empty())
            .map(|k| {
                StoreKeys::parse(k, self.store_key_id.as_deref())
                    .map_err(|e| ConfigError(e.to_string()))
            })
            .transpose()
    }

    /// JSON logs for cluster roles unless told otherwise.
    pub fn json_logs(&self, cluster_role: bool) -> bool {
        match self.log_format {
            LogFormat::Json => true,
            LogFormat::Text => false,
            LogFormat::Auto => cluster_role,
        }
    }
}

/// Turns an environment string into the type its field expects, so errors name the variable.
fn typed_value(field: &str, raw: &str) -> Result<serde_json::Value, String> {
    let bools = ["allow_http_webhooks", "allow_private_egress"];
    let numbers = [
        "sandbox_qr_first_secs",
        "sandbox_qr_next_secs",
        "sandbox_picture_link_secs",
        "media_mirror_max_bytes",
        "media_mirror_transfers",
        "media_send_transfers",
        "event_retention_hours",
        "event_session_cap",
        "event_stream_replicas",
        "event_stream_max_bytes",
    ];
    if bools.contains(&field) {
        match raw.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => Ok(true.into()),
            "false" | "0" | "no" | "off" => Ok(false.into()),
            _ => Err(format!("expected true or false, got {raw:?}")),
        }
    } else if numbers.contains(&field) {
        raw.trim()
            .parse::<u64>()
            .map(Into::into)
            .map_err(|_| format!("expected a whole number, got {raw:?}"))
    } else {
        Ok(raw.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_without_anything() {
        let (c, warnings) = Config::load_from(&[]).unwrap();
        assert_eq!(c.bind, "0.0.0.0:8080");
        assert_eq!(c.network, Network::Whatsapp);
        assert!(c.nats_url.is_none());
        assert!(warnings.is_empty());
    }

    #[test]
    fn env_overrides_and_digit_token_stays_text() {
        let (c, _) = Config::load_from(&vars(&[
            ("PARLEY_ACCOUNT_TOKEN", "12345678901234567890"),
            ("PARLEY_NETWORK", "sandbox"),
            ("PARLEY_ALLOW_HTTP_WEBHOOKS", "true"),
            ("PARLEY_SANDBOX_QR_FIRST_SECS", "3"),
        ]))
        .unwrap();
        assert_eq!(c.account_token.as_deref(), Some("12345678901234567890"));
        assert_eq!(c.network, Network::Sandbox);
        assert!(c.allow_http_webhooks);
        assert_eq!(c.sandbox_qr_first_secs, 3);
    }

    #[test]
    fn invalid_values_name_the_variable() {
        for (k, v) in [
            ("PARLEY_NETWORK", "carrier-pigeon"),
            ("PARLEY_BIND", "nowhere"),
            ("PARLEY_ALLOW_PRIVATE_EGRESS", "maybe"),
            ("PARLEY_SANDBOX_QR_NEXT_SECS", "-1"),
            ("PARLEY_PUBLIC_URL", "ftp://x"),
            ("PARLEY_NATS_URL", "http://x"),
            ("PARLEY_NETWORK_PROXY", "ftp://proxy:21"),
            ("PARLEY_NETWORK_PROXY", "not a url"),
        ] {
            let err = Config::load_from(&vars(&[(k, v)])).unwrap_err();
            assert!(err.0.contains(k), "{k}: {}", err.0);
        }
    }

    #[test]
    fn secrets_never_print_and_the_operations_port_has_defaults() {
        let vars: Vec<(String, String)> = [
            ("PARLEY_ACCOUNT_TOKEN", "account-token-0123456789"),
            ("PARLEY_S3_SECRET_KEY", "s3-secret-0123456789"),
            ("PARLEY_EGRESS_PROXY", "http://proxy.internal:3128"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let (c, _) = Config::load_from(&vars).unwrap();
        let shown = format!("{c:?}");
        assert!(!shown.contains("account-token-"), "{shown}");
        assert!(!shown.contains("s3-secret-"), "{shown}");
        assert_eq!(c.ops_bind(false), "127.0.0.1:9464");
        assert_eq!(c.ops_bind(true), "0.0.0.0:9464");
        assert_eq!(
            c.egress_proxy().unwrap().map(|u| u.to_string()),
            Some("http://proxy.internal:3128/".to_string())
        );
        let bad: Vec<(String, String)> = vec![("PARLEY_OPS_BIND".into(), "nowhere".into())];
        assert!(Config::load_from(&bad).is_err());
    }

    #[test]
    fn a_network_proxy_is_a_known_setting() {
        for url in ["http://127.0.0.1:3128", "socks5://u:p@proxy.example:1080"] {
            let (c, warnings) = Config::load_from(&vars(&[("PARLEY_NETWORK_PROXY", url)])).unwrap();
            assert_eq!(c.network_proxy.as_deref(), Some(url));
            assert!(warnings.is_empty(), "{warnings:?}");
        }
        let (c, _) = Config::load_from(&vars(&[("PARLEY_NETWORK_PROXY", " ")])).unwrap();
        assert_eq!(c.network_proxy, None);
    }

    #[test]
    fn a_network_url_is_a_known_setting() {
        for url in [
            "ws://127.0.0.1:4567/ws/chat",
            "wss://localhost/ws/chat",
            "ws://[::1]:5/x",
        ] {
            let (c, warnings) = Config::load_from(&vars(&[("PARLEY_NETWORK_URL", url)])).unwrap();
            assert_eq!(c.network_url.as_deref(), Some(url));
            assert!(warnings.is_empty(), "{warnings:?}");
        }
        let (c, _) = Config::load_from(&[]).unwrap();
        assert_eq!(c.network_url, None);
        let (c, _) = Config::load_from(&vars(&[("PARLEY_NETWORK_URL", " ")])).unwrap();
        assert_eq!(c.network_url, None);
    }

    #[test]
    fn a_network_url_must_be_a_websocket_url_with_a_host() {
        for v in [
            "http://127.0.0.1:4567/ws/chat",
            "https://localhost/ws/chat",
            "tcp://127.0.0.1:1",
            "ws://:4567/ws/chat",
            "ws://",
            "127.0.0.1:4567",
            "not a url",
        ] {
            let err = Config::load_from(&vars(&[("PARLEY_NETWORK_URL", v)])).unwrap_err();
            assert!(err.0.contains("PARLEY_NETWORK_URL"), "{v}: {}", err.0);
        }
    }

    #[test]
    fn a_network_control_url_is_an_http_url_beside_a_network_url() {
        let net = ("PARLEY_NETWORK_URL", "ws://127.0.0.1:4567/ws/chat");
        let control = "http://127.0.0.1:4568";
        let (c, warnings) =
            Config::load_from(&vars(&[net, ("PARLEY_NETWORK_CONTROL_URL", control)])).unwrap();
        assert_eq!(c.network_control_url.as_deref(), Some(control));
        assert!(warnings.is_empty(), "{warnings:?}");
        for v in ["ws://127.0.0.1:4568", "http://", "not a url"] {
            let err =
                Config::load_from(&vars(&[net, ("PARLEY_NETWORK_CONTROL_URL", v)])).unwrap_err();
            assert!(
                err.0.contains("PARLEY_NETWORK_CONTROL_URL"),
                "{v}: {}",
                err.0
            );
        }
        let alone = Config::load_from(&vars(&[("PARLEY_NETWORK_CONTROL_URL", control)]));
        assert!(alone.unwrap_err().0.contains("needs PARLEY_NETWORK_URL"));
    }

    #[test]
    fn unknown_names_are_warned_about() {
        let (_, warnings) = Config::load_from(&vars(&[("PARLEY_NATS_ULR", "x")])).unwrap();
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("PARLEY_NATS_ULR"));
    }

    #[test]
    fn cluster_roles_require_their_services() {
        let (c, _) =
            Config::load_from(&vars(&[("PARLEY_NATS_URL", "nats://127.0.0.1:4222")])).unwrap();
        let err = c.require_cluster().unwrap_err();
        assert!(err.0.contains("PARLEY_DATABASE_URL"));
    }
}
