//! The route of a session's connection: its own proxy (`/set-proxy`), its
//! address resolved and checked by the egress guard at every connect (fail
//! closed: a name that now resolves to an internal address is not dialled)
//! and pinned for the connection; a change of it reconnects at once.
use std::time::Duration;

use parley_shared::db::StatePatch;
use parley_shared::egress::EgressError;
use tokio::time::Instant;

use super::actor::{Actor, Flow, INITIALIZING};
use crate::network::{Proxy, ProxyError, ProxyFault};

/// How long the proxy's name may take to resolve.
const RESOLVE_WAIT: Duration = Duration::from_secs(5);

/// `lastDisconnect` when the session leaves a connection for a new route.
pub const PROXY_CHANGED: &str = "proxy-changed";

impl Actor {
    /// The session's own proxy, pinned to an address the egress guard
    /// allows; `None` when it has none.
    pub(super) async fn own_proxy(&self) -> Result<Option<Proxy>, ProxyError> {
        if self.row.proxy_url.is_empty() {
            return Ok(None);
        }
        let proxy = Proxy::parse(&self.row.proxy_url).map_err(|e| {
            ProxyError::new(ProxyFault::Forbidden, format!("the stored proxy URL: {e}"))
        })?;
        let egress = self.deps.fetcher.egress();
        match egress
            .allowed_address(&proxy.host, proxy.port, RESOLVE_WAIT)
            .await
        {
            Ok(addr) => Ok(Some(proxy.pinned(addr))),
            Err(EgressError::Forbidden(ip)) => Err(ProxyError::new(
                ProxyFault::Forbidden,
                format!(
                    "proxy {} resolves to {ip}, an internal address (PARLEY_ALLOW_PRIVATE_EGRESS is off)",
                    proxy.shown()
                ),
            )),
            Err(e) => Err(ProxyError::new(
                ProxyFault::Unreachable,
                format!("proxy {}: {e}", proxy.shown()),
            )),
        }
    }

    /// After a settings reload: when the proxy changed, leaves the current
    /// connection (if any) and connects again at once through the new route.
    pub(super) async fn on_route(&mut self, before: &str) -> Flow {
        if self.row.proxy_url == before {
            return Ok(());
        }
        tracing::info!(client_id = %self.id, "the session's proxy changed: reconnecting through it");
        if let Some(link) = self.link.take() {
            self.close(link).await;
            self.online_since = None;
            self.qr.clear();
            self.set_status(INITIALIZING);
            let patch = StatePatch {
                status: Some(INITIALIZING.into()),
                connected: Some(false),
                last_disconnect: Some(PROXY_CHANGED.into()),
                ..StatePatch::default()
            };
            self.write(patch).await?;
            PROXY_CHANGED.clone_into(&mut self.last_disconnect);
        }
        self.backoff.reset();
        self.retry_at = Some(Instant::now());
        Ok(())
    }
}
