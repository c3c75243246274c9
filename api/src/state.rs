//! What every handler can reach: configuration, ports, and facts about this node.
use std::sync::Arc;
use std::time::{Duration, Instant};

use parley_shared::config::Config;
use parley_shared::ports::Ports;

use crate::feed::LiveFeeds;
use crate::{RouteSet, Surface};

pub struct AppState {
    pub config: Config,
    pub ports: Ports,
    pub pod_name: String,
    pub started: Instant,
    pub surface: Surface,
    /// SHA-256 of the account token; `None` on probe-only servers (no gateway routes).
    pub account_digest: Option<[u8; 32]>,
    /// An adapter's own routes, served beside the API's.
    pub extra: &'static RouteSet,
    /// The live feeds open on this server.
    pub feeds: Arc<LiveFeeds>,
}

impl AppState {
    pub fn new(config: Config, ports: Ports, surface: Surface) -> AppState {
        let account_digest = config
            .account_token
            .as_deref()
            .map(parley_shared::digest::sha256);
        let feeds = Arc::new(LiveFeeds::new(
            config.live_feed_limit,
            Duration::from_secs(config.live_feed_heartbeat_secs),
        ));
        AppState {
            feeds,
            pod_name: config.pod_name(),
            started: Instant::now(),
            account_digest,
            surface,
            config,
            ports,
            extra: &RouteSet::NONE,
        }
    }

    /// Serves `extra` beside the API's routes.
    pub fn with_routes(mut self, extra: &'static RouteSet) -> AppState {
        self.extra = extra;
        self
    }
}
