//! A forwarding HTTP proxy on loopback for tests: `CONNECT` tunnels and
//! absolute-form requests (`GET http://host/...`, what an HTTP client sends
//! a proxy for a plain-HTTP URL), optionally behind Basic credentials
//! (`407` without them). It notes every destination it reached, so a test
//! can tell what went through it.
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The longest request head read.
const HEAD_MAX: usize = 16 * 1024;

/// One destination the proxy reached for a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forwarded {
    /// `host:port`.
    pub target: String,
    /// `true` for a `CONNECT` tunnel, `false` for a forwarded request.
    pub tunnel: bool,
}

/// A running proxy; it stops with the test's runtime.
pub struct ForwardProxy {
    port: u16,
    credentials: Option<(String, String)>,
    seen: Arc<Mutex<Vec<Forwarded>>>,
}

impl ForwardProxy {
    /// Starts one on 127.0.0.1; with `credentials`, only requests that
    /// carry them in `Proxy-Authorization` are served.
    pub async fn start(credentials: Option<(&str, &str)>) -> ForwardProxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a proxy");
        let port = listener.local_addr().expect("its address").port();
        let credentials = credentials.map(|(u, p)| (u.to_string(), p.to_string()));
        let expected = credentials
            .as_ref()
            .map(|(u, p)| format!("Basic {}", STANDARD.encode(format!("{u}:{p}"))));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(serve(client, expected.clone(), Arc::clone(&log)));
            }
        });
        ForwardProxy {
            port,
            credentials,
            seen,
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its URL, with its credentials when it has them.
    pub fn url(&self) -> String {
        match &self.credentials {
            Some((user, pass)) => self.url_with(user, pass),
            None => format!("http://127.0.0.1:{}", self.port),
        }
    }

    /// Its URL with the given credentials.
    pub fn url_with(&self, user: &str, pass: &str) -> String {
        format!("http://{user}:{pass}@127.0.0.1:{}", self.port)
    }

    /// Every destination reached so far, oldest first.
    pub fn forwarded(&self) -> Vec<Forwarded> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many tunnels it opened.
    pub fn tunnels(&self) -> usize {
        self.forwarded().iter().filter(|f| f.tunnel).count()
    }
}

async fn serve(mut client: TcpStream, expected: Option<String>, log: Arc<Mutex<Vec<Forwarded>>>) {
    let Some(head) = read_head(&mut client).await else {
        return;
    };
    let text = String::from_utf8_lossy(&head).into_owned();
    let mut words = text.split_whitespace();
    let (method, target) = (
        words.next().unwrap_or_default(),
        words.next().unwrap_or_default(),
    );
    if let Some(expected) = expected {
        let given = text.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("proxy-authorization")
                .then(|| value.trim().to_string())
        });
        if given.as_deref() != Some(expected.as_str()) {
            let _ = client
                .write_all(b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\nContent-Length: 0\r\n\r\n")
                .await;
            return;
        }
    }
    let tunnel = method.eq_ignore_ascii_case("CONNECT");
    let authority = if tunnel {
        target.to_string()
    } else {
        let rest = target.strip_prefix("http://").unwrap_or(target);
        let host = rest.split('/').next().unwrap_or_default();
        if host.contains(':') {
            host.to_string()
        } else {
            format!("{host}:80")
        }
    };
    let Ok(mut upstream) = TcpStream::connect(authority.as_str()).await else {
        let _ = client
            .write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            .await;
        return;
    };
    log.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(Forwarded {
            target: authority,
            tunnel,
        });
    let ready = if tunnel {
        client
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await
    } else {
        upstream.write_all(&head).await
    };
    if ready.is_ok() {
        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
    }
}

/// The request head, up to and with its blank line, read byte by byte so
/// that nothing after it is consumed; `None` when the client went away.
async fn read_head(client: &mut TcpStream) -> Option<Vec<u8>> {
    let mut head = Vec::with_capacity(256);
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() >= HEAD_MAX {
            return None;
        }
        head.push(client.read_u8().await.ok()?);
    }
    Some(head)
}
