//! What the other parts ask of the configuration: names, addresses and the
//! settings of each adapter, derived from the raw settings.
use std::net::SocketAddr;

use super::{Config, ConfigError, LogFormat, invalid};
use crate::media::s3::S3Settings;
use crate::store_keys::StoreKeys;

impl Config {
    /// The cluster's event stream: its age limit is the event log's retention.
    pub fn event_stream(&self) -> crate::event_stream::StreamSettings {
        crate::event_stream::StreamSettings {
            max_age: std::time::Duration::from_secs(self.event_retention_hours * 3600),
            max_bytes: self.event_stream_max_bytes,
            replicas: usize::try_from(self.event_stream_replicas).unwrap_or(1),
        }
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
    pub fn s3(&self) -> Result<Option<S3Settings>, ConfigError> {
        let Some(endpoint) = self.s3_endpoint.clone() else {
            return Ok(None);
        };
        let need = |name: &str, v: &Option<String>| {
            v.clone()
                .ok_or_else(|| invalid(name, "required when PARLEY_S3_ENDPOINT is set"))
        };
        Ok(Some(S3Settings {
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

    /// The async runtime's threads: as set, else one per core for a cluster
    /// role and half the cores (at least one) for `serve`. In `serve` the
    /// runtime shares the cores with the HTTP server's threads and SQLite's
    /// connection threads, and a second runtime thread mostly wakes up to
    /// find its work taken: measured on two cores, it took the process's
    /// context switches per send from 29.6 to 40 and about a fifth more CPU
    /// at 200 sends/s, for no more throughput at 2,000/s
    /// (docs/benchmarks.md).
    pub fn runtime_threads(&self, cluster_role: bool, cores: usize) -> usize {
        match self.runtime_threads {
            Some(n) => usize::try_from(n).unwrap_or(1).max(1),
            None if cluster_role => cores.max(1),
            None => (cores / 2).max(1),
        }
    }
}
