//! A session's own network proxy (Parley's, `/set-proxy`): an HTTP
//! (`CONNECT`) or SOCKS5 proxy that carries the session's connection and
//! media requests instead of the deployment's `PARLEY_NETWORK_PROXY`. Its
//! address is a customer URL: it passes the egress guard (an internal
//! address only with `PARLEY_ALLOW_PRIVATE_EGRESS`) and must answer before
//! it is stored, sealed (it may carry credentials, which are never shown).
//! The owner then reconnects through it at once.
use std::time::Duration;

use actix_web::{HttpRequest, post, web};
use parley_contract::error::ApiError;
use parley_contract::wire::sessions::{ProxySet, ProxyState, SetProxy};
use parley_network::Proxy;
use parley_shared::db::SettingsPatch;
use parley_shared::egress::{Egress, EgressError};

use super::settings::store;
use crate::auth::authorized_client;
use crate::{AppState, HttpError};

/// How long the check at set time waits for the name and for the proxy.
const CHECK_WAIT: Duration = Duration::from_secs(5);

/// A stored proxy URL as shown; `None` for none (or one that no longer
/// parses, which the owner refuses to use).
pub fn shown(stored: &str) -> Option<ProxyState> {
    let proxy = Proxy::parse(stored).ok()?;
    Some(ProxyState {
        url: proxy.shown(),
        credentials: proxy.has_credentials(),
    })
}

/// The proxy `raw` names, checked as the owner will use it: a URL it can
/// speak, an address the egress guard lets through, and a proxy that
/// answers there (for SOCKS5, to its greeting and credentials too).
async fn checked(raw: &str, egress: &Egress) -> Result<Proxy, ApiError> {
    let proxy = Proxy::parse(raw).map_err(|e| ApiError::bad_request(format!("proxyUrl: {e}")))?;
    let addr = egress
        .allowed_address(&proxy.host, proxy.port, CHECK_WAIT)
        .await
        .map_err(|e| {
            let why = match e {
                EgressError::Forbidden(_) => format!(
                    "{} resolves to an internal address, which is refused unless PARLEY_ALLOW_PRIVATE_EGRESS is set",
                    proxy.shown()
                ),
                other => other.to_string(),
            };
            ApiError::bad_request(format!("proxyUrl: {why}"))
        })?;
    let proxy = proxy.pinned(addr);
    proxy
        .probe(CHECK_WAIT)
        .await
        .map_err(|e| ApiError::bad_request(format!("proxyUrl: {e}")))?;
    Ok(proxy)
}

#[utoipa::path(tag = "sessions", request_body = SetProxy, responses((status = 200, body = ProxySet),
    (status = 400, description = "Missing clientId; a proxyUrl that is not an http, socks5 or socks5h URL, resolves to an internal address (unless private egress is allowed) or does not answer"),
    (status = 404, description = "Unknown clientId")))]
#[post("/set-proxy")]
pub async fn set_proxy(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SetProxy>,
) -> Result<web::Json<ProxySet>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let raw = body.proxy_url.as_deref().unwrap_or_default().trim();
    // An unknown session is told so before any proxy is dialled for it.
    if state.ports.db.session(id.as_str()).await?.is_none() {
        return Err(ApiError::not_found("unknown clientId").into());
    }
    if !raw.is_empty() {
        let egress = Egress::direct(state.config.allow_private_egress);
        checked(raw, &egress).await?;
    }
    let patch = SettingsPatch {
        proxy_url: Some(raw.to_string()),
        ..Default::default()
    };
    let row = store(&state, &id, patch).await?;
    crate::audit::done(&req, "set proxy", &id);
    Ok(web::Json(ProxySet {
        ok: true,
        client_id: row.client_id,
        proxy: shown(&row.proxy_url),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proxy_is_shown_without_its_credentials() {
        let state = shown("socks5://user:pa%3Ass@proxy.example:1080").expect("shown");
        assert_eq!(state.url, "socks5://proxy.example:1080");
        assert!(state.credentials);
        assert_eq!(shown(""), None);
        let plain = shown("http://10.0.0.2:3128").expect("shown");
        assert_eq!(
            (plain.url.as_str(), plain.credentials),
            ("http://10.0.0.2:3128", false)
        );
    }

    #[tokio::test]
    async fn the_check_refuses_bad_urls_internal_addresses_and_silent_proxies() {
        let closed = {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            l.local_addr().expect("addr").port()
        };
        let strict = Egress::direct(false);
        let open = Egress::direct(true);
        for (raw, egress, says) in [
            ("ftp://proxy.example:21", &strict, "scheme"),
            ("http://proxy.example:3128/path", &strict, "no path"),
            ("http://127.0.0.1:3128", &strict, "internal address"),
            (
                "socks5://u:secret@10.0.0.9:1080",
                &strict,
                "internal address",
            ),
            (
                &*format!("http://u:secret@127.0.0.1:{closed}"),
                &open,
                "not reachable",
            ),
        ] {
            let err = checked(raw, egress).await.expect_err(raw);
            assert_eq!(err.status, 400, "{raw}");
            assert!(err.message.contains(says), "{raw}: {}", err.message);
            assert!(!err.message.contains("secret"), "{}", err.message);
        }
    }
}
