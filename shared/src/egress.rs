//! The egress guard: every URL the gateway fetches (webhooks, poll lookups, media
//! downloads) goes through a client that only speaks http(s) and refuses loopback,
//! private, link-local, metadata and other internal destinations, checked on the
//! resolved address of every connection (so DNS rebinding and redirects to internal
//! hosts do not pass), unless `PARLEY_ALLOW_PRIVATE_EGRESS` is set.
//!
//! Connections are direct: the environment's proxy variables (`HTTP_PROXY`,
//! `HTTPS_PROXY`, `ALL_PROXY`) are ignored, since a proxy would resolve the
//! name itself and so skip the check. An operator who routes egress through
//! a proxy names it (`PARLEY_EGRESS_PROXY`); that proxy then resolves the
//! names and must enforce its own policy (literal addresses, schemes and
//! redirects are still checked here). A client that cannot be built with
//! the guard is an error at start-up, never a client without it.
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Why a destination was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EgressError {
    #[error("only http and https URLs can be fetched")]
    Scheme,
    #[error("destination {0} is not allowed (internal address)")]
    Forbidden(String),
    #[error("invalid URL: {0}")]
    Invalid(String),
    #[error("the guarded HTTP client cannot be built: {0}")]
    Client(String),
}

/// Whether connections to `ip` are refused when private egress is not allowed.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => internal_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return internal_v4(v4);
            }
            let seg = v6.segments();
            // NAT64 (64:ff9b::/96) wraps an IPv4 address.
            if seg[0] == 0x64 && seg[1] == 0xff9b && seg[2..6] == [0, 0, 0, 0] {
                let [a, b] = seg[6].to_be_bytes();
                let [c, d] = seg[7].to_be_bytes();
                return internal_v4(Ipv4Addr::new(a, b, c, d));
            }
            // 6to4 (2002::/16) carries an IPv4 address in its next 32 bits.
            if seg[0] == 0x2002 {
                let [a, b] = seg[1].to_be_bytes();
                let [c, d] = seg[2].to_be_bytes();
                return internal_v4(Ipv4Addr::new(a, b, c, d));
            }
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || seg[..6] == [0, 0, 0, 0, 0, 0] // IPv4-compatible (deprecated)
                || (seg[0] == 0x2001 && seg[1] == 0) // Teredo: tunnels to any IPv4
                || (seg[0] == 0x2001 && seg[1] == 0x0db8) // documentation
                || (seg[0] == 0x64 && seg[1] == 0xff9b && seg[2] == 1) // local NAT64
                || (seg[0] == 0x100 && seg[1..4] == [0, 0, 0]) // discard-only
                || (seg[0] & 0xfe00) == 0xfc00 // unique local, incl. fd00:ec2::254
                || (seg[0] & 0xffc0) == 0xfe80 // link local
                || (seg[0] & 0xffc0) == 0xfec0 // site local (deprecated)
        }
    }
}

fn internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local() // 169.254/16, incl. cloud metadata
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // carrier-grade NAT
        || (a == 192 && b == 0 && ip.octets()[2] == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240
}

/// The destination policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Egress {
    pub allow_private: bool,
    /// The operator's egress proxy (`PARLEY_EGRESS_PROXY`); `None`: direct.
    pub proxy: Option<url::Url>,
}

impl Egress {
    /// Direct connections, internal destinations refused unless `allow_private`.
    pub fn direct(allow_private: bool) -> Egress {
        Egress {
            allow_private,
            proxy: None,
        }
    }

    /// Checks what can be checked before connecting: the scheme, and a literal IP host.
    pub fn check_url(&self, url: &url::Url) -> Result<(), EgressError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(EgressError::Scheme);
        }
        let host = url
            .host()
            .ok_or_else(|| EgressError::Invalid("no host".into()))?;
        let literal = match host {
            url::Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
            url::Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
            url::Host::Domain(_) => None,
        };
        match literal {
            Some(ip) if !self.allow_private && is_internal(ip) => {
                Err(EgressError::Forbidden(ip.to_string()))
            }
            _ => Ok(()),
        }
    }

    /// The address a connection to `host:port` goes to (a name resolved
    /// once, within `wait`): the first one this policy allows. A name that
    /// does not resolve, or only to internal addresses (unless allowed), is
    /// refused: the caller then connects to nothing (fail closed). For a
    /// connection made outside the guarded client (a session's proxy).
    pub async fn allowed_address(
        &self,
        host: &str,
        port: u16,
        wait: Duration,
    ) -> Result<SocketAddr, EgressError> {
        let lookup = tokio::time::timeout(wait, tokio::net::lookup_host((host, port)));
        let found: Vec<SocketAddr> = match lookup.await {
            Ok(Ok(found)) => found.collect(),
            Ok(Err(e)) => {
                return Err(EgressError::Invalid(format!(
                    "{host} does not resolve: {e}"
                )));
            }
            Err(_) => {
                return Err(EgressError::Invalid(format!(
                    "{host} did not resolve within {wait:?}"
                )));
            }
        };
        found
            .iter()
            .find(|a| self.allow_private || !is_internal(a.ip()))
            .copied()
            .ok_or_else(|| match found.first() {
                Some(first) => EgressError::Forbidden(first.ip().to_string()),
                None => EgressError::Invalid(format!("{host} resolves to no address")),
            })
    }

    /// An HTTP client bound to this policy: `timeout` per request, at most
    /// `redirects` redirects (each one checked too), direct unless the
    /// policy names a proxy.
    pub fn client(
        &self,
        timeout: Duration,
        redirects: usize,
    ) -> Result<reqwest::Client, EgressError> {
        let policy = self.clone();
        let redirect = if redirects == 0 {
            reqwest::redirect::Policy::none()
        } else {
            reqwest::redirect::Policy::custom(move |attempt| {
                if attempt.previous().len() > redirects {
                    return attempt.error(EgressError::Invalid("too many redirects".into()));
                }
                match policy.check_url(attempt.url()) {
                    Ok(()) => attempt.follow(),
                    Err(e) => attempt.error(e),
                }
            })
        };
        let proxy_host = self
            .proxy
            .as_ref()
            .and_then(|p| p.host_str())
            .map(str::to_string);
        let mut builder = reqwest::Client::builder()
            .no_proxy()
            .dns_resolver(Arc::new(GuardedResolver {
                allow_private: self.allow_private,
                proxy_host,
            }))
            .redirect(redirect)
            .timeout(timeout)
            .connect_timeout(Duration::from_secs(10))
            .user_agent("Parley-Messaging/1");
        if let Some(proxy) = &self.proxy {
            if !matches!(proxy.scheme(), "http" | "https") || proxy.host_str().is_none() {
                return Err(EgressError::Client(format!(
                    "egress proxy {}: expected an http(s)://host:port URL",
                    proxy.scheme()
                )));
            }
            let proxy = reqwest::Proxy::all(proxy.as_str())
                .map_err(|e| EgressError::Client(format!("egress proxy: {e}")))?;
            builder = builder.proxy(proxy);
        }
        builder
            .build()
            .map_err(|e| EgressError::Client(e.to_string()))
    }
}

/// Resolves names and drops every internal address (unless allowed); a name that
/// resolves only to internal addresses fails to resolve.
/// The operator's proxy is the one internal name it resolves.
struct GuardedResolver {
    allow_private: bool,
    proxy_host: Option<String>,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        let allow_private = self.allow_private || self.proxy_host.as_deref() == Some(&host);
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|a| allow_private || !is_internal(a.ip()))
                .collect();
            if allowed.is_empty() {
                return Err(Box::new(EgressError::Forbidden(host))
                    as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// The egress refusal inside a request error, if that is why it failed.
pub fn refusal(err: &reqwest::Error) -> Option<EgressError> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = source {
        if let Some(refused) = e.downcast_ref::<EgressError>() {
            return Some(refused.clone());
        }
        source = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_ranges() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fd00:ec2::254",
            "fe80::1",
            "::ffff:127.0.0.1",
            "64:ff9b::a00:1",
            "::127.0.0.1",
            "::10.0.0.1",
            "::8.8.8.8",
            "2002:7f00:1::",
            "2002:a9fe:a9fe::1",
            "2002:c0a8:101::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:db8::1",
            "64:ff9b:1::a00:1",
            "100::1",
            "fec0::1",
        ] {
            assert!(is_internal(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "93.184.216.34",
            "8.8.8.8",
            "2606:4700::1111",
            "2002:5db8:d822::1",
            "2001:4860:4860::8888",
        ] {
            assert!(!is_internal(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn urls_are_checked_before_connecting() {
        let guard = Egress::direct(false);
        let url = |s: &str| url::Url::parse(s).unwrap();
        assert_eq!(
            guard.check_url(&url("ftp://example.com/x")),
            Err(EgressError::Scheme)
        );
        assert!(matches!(
            guard.check_url(&url("http://127.0.0.1/x")),
            Err(EgressError::Forbidden(_))
        ));
        assert!(matches!(
            guard.check_url(&url("http://[::1]/x")),
            Err(EgressError::Forbidden(_))
        ));
        assert!(guard.check_url(&url("https://example.com/x")).is_ok());
        let open = Egress::direct(true);
        assert!(open.check_url(&url("http://127.0.0.1/x")).is_ok());
    }

    #[tokio::test]
    async fn a_name_resolving_to_loopback_is_refused_on_the_resolved_address() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let guard = Egress::direct(false);
        let err = guard
            .client(Duration::from_secs(5), 0)
            .expect("client")
            .get(format!("http://localhost:{port}/"))
            .send()
            .await
            .unwrap_err();
        assert!(
            matches!(refusal(&err), Some(EgressError::Forbidden(h)) if h == "localhost"),
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn an_address_for_a_connection_of_its_own_is_checked_too() {
        let wait = Duration::from_secs(5);
        let guard = Egress::direct(false);
        for host in [
            "localhost",
            "127.0.0.1",
            "::1",
            "10.1.2.3",
            "169.254.169.254",
        ] {
            assert!(
                matches!(
                    guard.allowed_address(host, 3128, wait).await,
                    Err(EgressError::Forbidden(_))
                ),
                "{host} allowed"
            );
        }
        assert!(matches!(
            guard
                .allowed_address("no-such-host.invalid", 1080, wait)
                .await,
            Err(EgressError::Invalid(_))
        ));
        let open = Egress::direct(true);
        let addr = open
            .allowed_address("127.0.0.1", 3128, wait)
            .await
            .expect("private egress allowed");
        assert_eq!(addr, "127.0.0.1:3128".parse().unwrap());
    }

    /// A proxy listener that records whether anyone connected.
    async fn recording_proxy() -> (String, tokio::sync::oneshot::Receiver<()>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            if let Ok((mut socket, _)) = listener.accept().await {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let _ = tx.send(());
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = socket
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                    .await;
            }
        });
        (url, rx)
    }

    #[tokio::test]
    async fn an_egress_proxy_the_operator_names_is_used() {
        let (proxy, used) = recording_proxy().await;
        let guard = Egress {
            allow_private: false,
            proxy: Some(url::Url::parse(&proxy).unwrap()),
        };
        let res = guard
            .client(Duration::from_secs(5), 0)
            .expect("client")
            .get("http://hooks.example/hook")
            .send()
            .await
            .expect("through the proxy");
        assert_eq!(res.status(), 200);
        assert!(used.await.is_ok(), "the proxy was asked");
    }

    #[test]
    fn a_client_that_cannot_be_guarded_is_an_error() {
        let guard = Egress {
            allow_private: false,
            proxy: Some(url::Url::parse("socks5://proxy.internal:1080").unwrap()),
        };
        assert!(matches!(
            guard.client(Duration::from_secs(5), 0),
            Err(EgressError::Client(_))
        ));
    }
}
