//! Tests of the live adapter that never reach the real network: the event
//! mapping on the library's own event structs, the proxy tunnel against tiny
//! local proxies, and connects that find the network unreachable.
mod calls;
mod connect;
mod history;
mod history_names;
mod lifecycle;
mod mentions;
mod proxy;
mod pump;
mod sends;
mod votes;
mod ws_url;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A loopback port nothing listens on (bound, then released).
pub(super) async fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    port
}

/// A whatsapp-rust client over `store` whose network is out of reach (a proxy
/// on a closed port): it builds, reads and writes its store, and never connects.
pub(super) async fn offline_bot(store: crate::store::SeaOrmDeviceStore) -> whatsapp_rust::bot::Bot {
    use crate::live::Proxy;
    use crate::live::transport::ProxiedTransport;
    let dead = Proxy::parse(&format!("http://127.0.0.1:{}", closed_port().await)).expect("proxy");
    whatsapp_rust::bot::Bot::builder()
        .with_backend(store)
        .with_transport_factory(ProxiedTransport::new(dead))
        .with_http_client(whatsapp_rust::http::UreqHttpClient::new())
        .with_runtime(whatsapp_rust::TokioRuntime)
        .build()
        .await
        .expect("client")
}

/// Reads an HTTP request head (up to the blank line).
pub(super) async fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte).await {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// A local CONNECT proxy: answers `status` to each CONNECT; on 200 it relays
/// the tunnel to the requested loopback target. Counts connections.
pub(super) struct ConnectProxy {
    pub port: u16,
    pub connections: Arc<AtomicUsize>,
    pub requests: Arc<std::sync::Mutex<Vec<String>>>,
}

impl ConnectProxy {
    pub async fn start(status: &'static str) -> ConnectProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (count, seen) = (Arc::clone(&connections), Arc::clone(&requests));
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                let seen = Arc::clone(&seen);
                tokio::spawn(async move {
                    let head = read_head(&mut client).await;
                    seen.lock().expect("lock").push(head.clone());
                    let target = head
                        .split_whitespace()
                        .nth(1)
                        .unwrap_or_default()
                        .to_string();
                    let _ = client
                        .write_all(format!("HTTP/1.1 {status}\r\n\r\n").as_bytes())
                        .await;
                    if !status.starts_with("200") {
                        return;
                    }
                    if let Ok(mut upstream) = TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                    }
                });
            }
        });
        ConnectProxy {
            port,
            connections,
            requests,
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}
