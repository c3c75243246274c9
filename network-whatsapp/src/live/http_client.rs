//! The HTTP client for media (upload, download) and the version check: the
//! library's ureq client, with an agent that goes through the proxy when one
//! is configured (ureq speaks both `CONNECT` and SOCKS5 itself).
use whatsapp_rust::http::UreqHttpClient;

use parley_network::proxy::Proxy;

/// Media files the network allows are at most 2 GiB.
const MAX_BODY_BYTES: u64 = 2 * 1024 * 1024 * 1024;

/// The HTTP client, through `proxy` when given.
pub fn http_client(proxy: Option<&Proxy>) -> Result<UreqHttpClient, String> {
    let Some(proxy) = proxy else {
        return Ok(UreqHttpClient::new());
    };
    let ureq_proxy = ureq::Proxy::new(proxy.url())
        .map_err(|e| format!("the proxy URL is not usable for HTTP: {e}"))?;
    let agent: ureq::Agent = ureq::config::Config::builder()
        .proxy(Some(ureq_proxy))
        .max_idle_connections(3)
        .build()
        .into();
    Ok(UreqHttpClient::with_agent(agent).with_max_body_bytes(MAX_BODY_BYTES))
}
