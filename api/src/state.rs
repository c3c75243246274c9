//! What every handler can reach: configuration, ports, and facts about this node.
use std::time::Instant;

use parley_shared::config::{Config, Network};
use parley_shared::ports::Ports;

use crate::Surface;

pub struct AppState {
    pub config: Config,
    pub ports: Ports,
    pub pod_name: String,
    pub started: Instant,
    pub surface: Surface,
    /// SHA-256 of the account token; `None` on probe-only servers (no gateway routes).
    pub account_digest: Option<[u8; 32]>,
}

impl AppState {
    pub fn new(config: Config, ports: Ports, surface: Surface) -> AppState {
        let account_digest = config
            .account_token
            .as_deref()
            .map(parley_shared::digest::sha256);
        AppState {
            pod_name: config.pod_name(),
            started: Instant::now(),
            account_digest,
            surface,
            config,
            ports,
        }
    }

    /// `/sandbox/*` routes exist only with the sandbox network, on gateway servers.
    /// Whether the sandbox's routes are served (probe-only servers serve only
    /// its picture links).
    pub fn sandbox_routes(&self) -> bool {
        self.config.network == Network::Sandbox
    }
}
