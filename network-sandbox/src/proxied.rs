//! A session's own proxy on the sandbox: the simulated network lives at the
//! gateway's public URL (where its routes and picture CDN are served), so a
//! connection through a proxy opens a real tunnel there at each connect. A
//! proxy that does not answer, or will not open the tunnel, fails the
//! connect as it would fail a socket to the real network; nothing else goes
//! through the tunnel (the simulation runs in the gateway's database).
use std::time::Duration;

use parley_network::{NetworkError, Proxy, ProxyError, ProxyFault};

/// How long a tunnel may take to open.
const TUNNEL_WAIT: Duration = Duration::from_secs(10);

/// Opens (and closes) a tunnel through `proxy` to `base`'s host and port.
pub async fn tunnel_to(base: &str, proxy: &Proxy) -> Result<(), NetworkError> {
    let url = url::Url::parse(base).map_err(|e| {
        NetworkError::Unreachable(format!("the sandbox's address {base:?} is not a URL: {e}"))
    })?;
    let host = url
        .host_str()
        .unwrap_or("127.0.0.1")
        .trim_matches(['[', ']']);
    let port = url.port_or_known_default().unwrap_or(80);
    match tokio::time::timeout(TUNNEL_WAIT, proxy.tunnel(host, port)).await {
        Ok(Ok(_stream)) => Ok(()),
        Ok(Err(e)) => Err(NetworkError::Proxy(e)),
        Err(_) => Err(NetworkError::Proxy(ProxyError::new(
            ProxyFault::Unreachable,
            format!(
                "proxy {} opened no tunnel within {TUNNEL_WAIT:?}",
                proxy.shown()
            ),
        ))),
    }
}
