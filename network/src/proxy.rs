//! The egress proxy of the real network (`PARLEY_NETWORK_PROXY`): an HTTP
//! proxy reached with `CONNECT`, or a SOCKS5 proxy (RFC 1928, with RFC 1929
//! user/password when the URL carries them). [`Proxy::tunnel`] opens a TCP
//! stream to a host through it; the TLS and websocket layers run on top.
use std::fmt;

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

/// A parsed proxy URL.
#[derive(Clone, PartialEq, Eq)]
pub struct Proxy {
    pub kind: ProxyKind,
    pub host: String,
    pub port: u16,
    credentials: Option<(String, String)>,
    /// The URL as configured (for the HTTP client, which speaks to it itself).
    url: String,
}

impl fmt::Debug for Proxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Proxy")
            .field("kind", &self.kind)
            .field("host", &self.host)
            .field("port", &self.port)
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
    /// Parses `http://[user:pass@]host[:port]` or `socks5://[user:pass@]host[:port]`.
    pub fn parse(url: &str) -> Result<Proxy, String> {
        let parsed = url::Url::parse(url).map_err(|e| format!("invalid proxy URL: {e}"))?;
        let (kind, default_port) = match parsed.scheme() {
            "http" => (ProxyKind::HttpConnect, 80),
            "socks5" | "socks5h" => (ProxyKind::Socks5, 1080),
            other => return Err(format!("unsupported proxy scheme {other}")),
        };
        let host = parsed
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or("the proxy URL names no host")?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let credentials = (!parsed.username().is_empty()).then(|| {
            (
                percent_decode(parsed.username()),
                percent_decode(parsed.password().unwrap_or_default()),
            )
        });
        Ok(Proxy {
            kind,
            port: parsed.port().unwrap_or(default_port),
            host,
            credentials,
            url: url.to_string(),
        })
    }

    /// The URL as configured.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A TCP stream to `host:port` through the proxy.
    pub async fn tunnel(&self, host: &str, port: u16) -> std::io::Result<TcpStream> {
        let mut stream = TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!("proxy {}:{} not reachable: {e}", self.host, self.port),
                )
            })?;
        stream.set_nodelay(true)?;
        match self.kind {
            ProxyKind::HttpConnect => self.connect_http(&mut stream, host, port).await?,
            ProxyKind::Socks5 => self.connect_socks5(&mut stream, host, port).await?,
        }
        Ok(stream)
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
