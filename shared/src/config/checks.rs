//! Checking a configuration read, and its empty strings as unset.
use std::net::SocketAddr;

use super::{Config, ConfigError, invalid};

impl Config {
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
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
        if self
            .runtime_threads
            .is_some_and(|n| !(1..=1024).contains(&n))
        {
            return Err(invalid("RUNTIME_THREADS", "must be 1 to 1024"));
        }
        if !(1..=5).contains(&self.event_stream_replicas) {
            return Err(invalid("EVENT_STREAM_REPLICAS", "must be 1 to 5"));
        }
        if !(1..=100_000).contains(&self.live_feed_limit) {
            return Err(invalid("LIVE_FEED_LIMIT", "must be 1 to 100000"));
        }
        if !(1..=300).contains(&self.live_feed_heartbeat_secs) {
            return Err(invalid("LIVE_FEED_HEARTBEAT_SECS", "must be 1 to 300"));
        }
        // Announced every 500 ms: a worker trusts its membership for a
        // second less than it lasts, which must leave it a second at least.
        if !(2_000..=60_000).contains(&self.worker_membership_ms) {
            return Err(invalid(
                "WORKER_MEMBERSHIP_MS",
                "must be 2000 to 60000 (milliseconds)",
            ));
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
    pub(super) fn normalized(mut self) -> Config {
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
}
