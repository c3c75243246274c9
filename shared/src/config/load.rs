//! Reading the configuration: embedded defaults, `parley.toml` (or
//! `$PARLEY_CONFIG`), then the known `PARLEY_*` variables, each typed so that
//! an error names its variable.
use std::path::PathBuf;

use figment::Figment;
use figment::providers::{Format, Serialized, Toml};

use super::{Config, ConfigError, KNOWN, invalid};

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
        "live_feed_limit",
        "live_feed_heartbeat_secs",
        "worker_membership_ms",
        "runtime_threads",
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
