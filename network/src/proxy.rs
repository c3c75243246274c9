//! A proxy the network is reached through: the deployment's
//! (`PARLEY_NETWORK_PROXY`) or a session's own (`/set-proxy`). An HTTP proxy
//! reached with `CONNECT`, or a SOCKS5 proxy (RFC 1928, with RFC 1929
//! user/password when the URL carries them). [`Proxy::tunnel`] opens a TCP
//! stream to a host through it; the TLS and websocket layers run on top.
//! Its credentials never leave it: `Debug`, [`Proxy::shown`] and every error
//! name the proxy by scheme, host and port only.
use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How the proxy is spoken to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyKind {
    /// `http://`: `CONNECT host:port`.
    HttpConnect,
    /// `socks5://` or `socks5h://`: the proxy resolves the host name.
    Socks5,
}

/// What went wrong with a proxy, as a session's health names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyFault {
    /// Its address does not answer.
    Unreachable,
    /// It answered but would not open the tunnel (credentials, its policy,
    /// or it could not reach the other end).
    Refused,
    /// Its address is one the egress guard refuses (an internal address
    /// while private egress is not allowed), or its stored URL is unusable.
    Forbidden,
}

impl ProxyFault {
    /// The session's `lastDisconnect` for it.
    pub fn reason(self) -> &'static str {
        match self {
            ProxyFault::Unreachable => "proxy-unreachable",
            ProxyFault::Refused => "proxy-refused",
            ProxyFault::Forbidden => "proxy-forbidden",
        }
    }
}

/// A proxy's failure: which kind, and why (never its credentials).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{detail}")]
pub struct ProxyError {
    pub fault: ProxyFault,
    pub detail: String,
}

impl ProxyError {
    pub fn new(fault: ProxyFault, detail: impl Into<String>) -> Self {
        Self {
            fault,
            detail: detail.into(),
        }
    }
}

impl From<ProxyError> for std::io::Error {
    fn from(e: ProxyError) -> Self {
        let kind = match e.fault {
            ProxyFault::Unreachable => std::io::ErrorKind::ConnectionRefused,
            ProxyFault::Refused | ProxyFault::Forbidden => std::io::ErrorKind::PermissionDenied,
        };
        std::io::Error::new(kind, e)
    }
}

/// The longest proxy URL taken.
pub const PROXY_URL_MAX: usize = 2048;

/// A parsed proxy URL.
#[derive(Clone, PartialEq, Eq)]
pub struct Proxy {
    pub kind: ProxyKind,
    pub host: String,
    pub port: u16,
    credentials: Option<(String, String)>,
    /// The URL as configured (for the HTTP client, which speaks to it itself).
    url: String,
    /// The address connections go to, checked when the proxy was resolved
    /// (see [`Proxy::pinned`]); `None`: `host` is resolved at each connect.
    pinned: Option<SocketAddr>,
}

impl fmt::Debug for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Proxy")
            .field("kind", &self.kind)
            .field("host", &self.host)
            .field("port", &self.port)
            .field("pinned", &self.pinned)
            .field(
                "credentials",
                &self.credentials.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// The longest proxy answer header read before giving up.
const MAX_ANSWER: usize = 8 * 1024;

impl Proxy {
    /// Parses `http://[user:pass@]host[:port]` or
    /// `socks5://[user:pass@]host[:port]` (`socks5h://` alike): nothing
    /// after the port but an optional `/`.
    pub fn parse(url: &str) -> Result<Proxy, String> {
        if url.len() > PROXY_URL_MAX {
            return Err(format!("a proxy URL is at most {PROXY_URL_MAX} bytes"));
        }
        let parsed = url::Url::parse(url).map_err(|e| format!("invalid proxy URL: {e}"))?;
        let (kind, default_port) = match parsed.scheme() {
            "http" => (ProxyKind::HttpConnect, 80),
            "socks5" | "socks5h" => (ProxyKind::Socks5, 1080),
            other => {
                return Err(format!(
                    "unsupported proxy scheme {other:?} (http, socks5 or socks5h)"
                ));
            }
        };
        let host = parsed
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or("the proxy URL names no host")?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        if !matches!(parsed.path(), "" | "/")
            || parsed.query().is_some()
            || parsed.fragment().is_some()
        {
            return Err(
                "a proxy URL names a scheme, credentials, a host and a port, no path".into(),
            );
        }
        let credentials = (!parsed.username().is_empty()).then(|| {
            (
                percent_decode(parsed.username()),
                percent_decode(parsed.password().unwrap_or_default()),
            )
        });
        if kind == ProxyKind::Socks5
            && let Some((user, pass)) = &credentials
            && (user.len() > 255 || pass.len() > 255)
        {
            return Err("SOCKS5 credentials are at most 255 bytes each".into());
        }
        Ok(Proxy {
            kind,
            port: parsed.port().unwrap_or(default_port),
            host,
            credentials,
            url: url.to_string(),
            pinned: None,
        })
    }

    /// The URL as configured, credentials included: for the HTTP client
    /// only, never to show (see [`Proxy::shown`]).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// `scheme://host:port`: the proxy named without its credentials.
    pub fn shown(&self) -> String {
        let scheme = self.url.split(':').next().unwrap_or("http");
        if self.host.contains(':') {
            format!("{scheme}://[{}]:{}", self.host, self.port)
        } else {
            format!("{scheme}://{}:{}", self.host, self.port)
        }
    }

    /// Whether the URL carries a user name (and password).
    pub fn has_credentials(&self) -> bool {
        self.credentials.is_some()
    }

    /// The proxy reached at `addr` from now on (an address of its host that
    /// a check let through): every connection, the HTTP client's too, goes
    /// there and never resolves the name again.
    pub fn pinned(mut self, addr: SocketAddr) -> Proxy {
        if let Ok(mut url) = url::Url::parse(&self.url)
            && url.set_ip_host(addr.ip()).is_ok()
            && url.set_port(Some(addr.port())).is_ok()
        {
            self.url = url.into();
        }
        self.pinned = Some(addr);
        self
    }

    /// A TCP connection to the proxy itself.
    async fn reach(&self) -> Result<TcpStream, ProxyError> {
        let shown = self.shown();
        let dialled = match self.pinned {
            Some(addr) => TcpStream::connect(addr).await,
            None => TcpStream::connect((self.host.as_str(), self.port)).await,
        };
        let stream = dialled.map_err(|e| {
            ProxyError::new(
                ProxyFault::Unreachable,
                format!("proxy {shown} not reachable: {e}"),
            )
        })?;
        let _ = stream.set_nodelay(true);
        Ok(stream)
    }

    /// A TCP stream to `host:port` through the proxy.
    pub async fn tunnel(&self, host: &str, port: u16) -> Result<TcpStream, ProxyError> {
        let mut stream = self.reach().await?;
        let opened = match self.kind {
            ProxyKind::HttpConnect => self.connect_http(&mut stream, host, port).await,
            ProxyKind::Socks5 => self.connect_socks5(&mut stream, host, port).await,
        };
        opened.map_err(|e| self.refused(&e.to_string()))?;
        Ok(stream)
    }

    /// Whether the proxy answers, within `wait`: a TCP connection, and for
    /// SOCKS5 its greeting and credentials (an HTTP proxy checks credentials
    /// only with a `CONNECT`, which needs a destination).
    pub async fn probe(&self, wait: Duration) -> Result<(), ProxyError> {
        let checked = async {
            let mut stream = self.reach().await?;
            if self.kind == ProxyKind::Socks5 {
                self.greet_socks5(&mut stream)
                    .await
                    .map_err(|e| self.refused(&e.to_string()))?;
            }
            Ok(())
        };
        tokio::time::timeout(wait, checked)
            .await
            .unwrap_or_else(|_| {
                Err(ProxyError::new(
                    ProxyFault::Unreachable,
                    format!("proxy {} did not answer within {wait:?}", self.shown()),
                ))
            })
    }

    fn refused(&self, why: &str) -> ProxyError {
        ProxyError::new(
            ProxyFault::Refused,
            format!("proxy {}: {why}", self.shown()),
        )
    }

    async fn connect_http(
        &self,
        stream: &mut TcpStream,
        host: &str,
        port: u16,
    ) -> std::io::Result<()> {
        let authority = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let mut request = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n");
        if let Some((user, pass)) = &self.credentials {
            let token = STANDARD.encode(format!("{user}:{pass}"));
            request.push_str(&format!("Proxy-Authorization: Basic {token}\r\n"));
        }
        request.push_str("\r\n");
        stream.write_all(request.as_bytes()).await?;
        // Byte by byte up to the blank line: nothing of the tunnel may be consumed.
        let mut answer = Vec::with_capacity(128);
        while !answer.ends_with(b"\r\n\r\n") {
            if answer.len() >= MAX_ANSWER {
                return Err(refused("the proxy's CONNECT answer is too long"));
            }
            let byte = stream.read_u8().await.map_err(|e| {
                std::io::Error::new(e.kind(), "the proxy closed the connection during CONNECT")
            })?;
            answer.push(byte);
        }
        let status_line = String::from_utf8_lossy(&answer);
        let status_line = status_line.lines().next().unwrap_or_default();
        let code = status_line.split_whitespace().nth(1).unwrap_or_default();
        if code == "200" {
            Ok(())
        } else {
            Err(refused(&format!(
                "the proxy refused CONNECT: {status_line}"
            )))
        }
    }

    async fn connect_socks5(
        &self,
        stream: &mut TcpStream,
        host: &str,
        port: u16,
    ) -> std::io::Result<()> {
        self.greet_socks5(stream).await?;
        let Ok(len) = u8::try_from(host.len()) else {
            return Err(refused("host name longer than 255 bytes"));
        };
        let mut request = vec![5, 1, 0, 3, len];
        request.extend_from_slice(host.as_bytes());
        request.extend_from_slice(&port.to_be_bytes());
        stream.write_all(&request).await?;
        let mut head = [0u8; 4];
        stream.read_exact(&mut head).await?;
        if head[1] != 0 {
            return Err(refused(&format!(
                "the SOCKS5 proxy refused the connection (reply {})",
                head[1]
            )));
        }
        let addr_len = match head[3] {
            1 => 4,
            4 => 16,
            3 => usize::from(stream.read_u8().await?),
            other => return Err(refused(&format!("SOCKS5 address type {other}"))),
        };
        let mut rest = vec![0u8; addr_len + 2];
        stream.read_exact(&mut rest).await?;
        Ok(())
    }

    /// The SOCKS5 greeting, and the credentials when the URL has them.
    async fn greet_socks5(&self, stream: &mut TcpStream) -> std::io::Result<()> {
        let method = if self.credentials.is_some() { 2 } else { 0 };
        stream.write_all(&[5, 1, method]).await?;
        let mut choice = [0u8; 2];
        stream.read_exact(&mut choice).await?;
        if choice[0] != 5 || choice[1] != method {
            return Err(refused(
                "the SOCKS5 proxy accepts none of the offered methods",
            ));
        }
        if let Some((user, pass)) = &self.credentials {
            let (user, pass) = (user.as_bytes(), pass.as_bytes());
            let (Ok(ulen), Ok(plen)) = (u8::try_from(user.len()), u8::try_from(pass.len())) else {
                return Err(refused("SOCKS5 credentials longer than 255 bytes"));
            };
            let mut auth = vec![1, ulen];
            auth.extend_from_slice(user);
            auth.push(plen);
            auth.extend_from_slice(pass);
            stream.write_all(&auth).await?;
            let mut status = [0u8; 2];
            stream.read_exact(&mut status).await?;
            if status[1] != 0 {
                return Err(refused("the SOCKS5 proxy refused the credentials"));
            }
        }
        Ok(())
    }
}

/// `%XX` escapes of a URL's user or password decoded (invalid ones kept as written).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn refused(why: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::ConnectionRefused, why.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_urls_parse_with_defaults_and_redacted_credentials() {
        let p = Proxy::parse("http://proxy.example").expect("http");
        assert_eq!(
            (p.kind, p.host.as_str(), p.port),
            (ProxyKind::HttpConnect, "proxy.example", 80)
        );
        assert!(!p.has_credentials());
        let s = Proxy::parse("socks5://us%40er:p%3Ass@10.0.0.1:1081").expect("socks");
        assert_eq!(
            (s.kind, s.host.as_str(), s.port),
            (ProxyKind::Socks5, "10.0.0.1", 1081)
        );
        assert!(s.has_credentials());
        assert_eq!(s.shown(), "socks5://10.0.0.1:1081");
        let shown = format!("{s:?}");
        assert!(
            !shown.contains("p:ss") && shown.contains("<redacted>"),
            "{shown}"
        );
        for bad in [
            "ftp://proxy:21",
            "https://proxy:443",
            "no url",
            "http://",
            "http://proxy:3128/path",
            "http://proxy:3128?x=1",
            "http://proxy:3128#f",
        ] {
            assert!(Proxy::parse(bad).is_err(), "{bad} accepted");
        }
        let long = format!("socks5://{}:p@proxy", "u".repeat(256));
        assert!(Proxy::parse(&long).is_err(), "a SOCKS5 user over 255 bytes");
    }

    #[test]
    fn a_pinned_proxy_keeps_its_credentials_and_names_its_host_without_them() {
        let p = Proxy::parse("http://user:secret@proxy.example:3128/").expect("http");
        let pinned = p.pinned("192.0.2.7:3128".parse().expect("addr"));
        assert_eq!(pinned.url(), "http://user:secret@192.0.2.7:3128/");
        assert_eq!(pinned.shown(), "http://proxy.example:3128");
        let v6 = Proxy::parse("socks5h://[2001:db8::1]:1080").expect("v6");
        assert_eq!(v6.shown(), "socks5h://[2001:db8::1]:1080");
    }

    #[tokio::test]
    async fn a_closed_port_is_unreachable_and_errors_name_no_credentials() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        drop(listener);
        let p = Proxy::parse(&format!("http://user:secret@127.0.0.1:{port}")).expect("http");
        let err = p.probe(Duration::from_secs(5)).await.expect_err("closed");
        assert_eq!(err.fault, ProxyFault::Unreachable);
        let err = p.tunnel("example.org", 443).await.expect_err("closed");
        assert_eq!(err.fault, ProxyFault::Unreachable);
        assert!(!err.to_string().contains("secret"), "{err}");
        assert_eq!(ProxyFault::Unreachable.reason(), "proxy-unreachable");
    }
}
