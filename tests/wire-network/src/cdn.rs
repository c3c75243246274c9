//! The CDN stand-in: plain HTTP/1.1 on loopback. Clients upload encrypted
//! media (`POST /mms/{kind}/{token}?auth=..`, a Content-Length body) and get
//! back `{url, direct_path}`; `GET {direct_path}` returns the stored bytes.
//! The server never sees plaintext: what it stores is what clients encrypted.
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// The media auth token `media_conn` hands out.
pub const AUTH: &str = "wire-media-auth";
/// The largest upload it takes.
const MAX_BODY: usize = 64 * 1024 * 1024;

pub struct Cdn {
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Cdn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

type Blobs = Arc<Mutex<HashMap<String, Vec<u8>>>>;

impl Cdn {
    pub async fn start() -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let blobs = Blobs::default();
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let blobs = Arc::clone(&blobs);
                tokio::spawn(async move {
                    if let Err(e) = serve(tcp, addr, blobs).await {
                        tracing::debug!(error = %e, "wire CDN: request failed");
                    }
                });
            }
        });
        Ok(Self { addr, task })
    }
}

async fn serve(tcp: TcpStream, addr: SocketAddr, blobs: Blobs) -> anyhow::Result<()> {
    let mut reader = BufReader::new(tcp);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or_default().to_string();
        let target = parts.next().unwrap_or_default().to_string();
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).await?;
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let (path, query) = target.split_once('?').unwrap_or((&target, ""));
        let authorised = query.split('&').any(|kv| kv == format!("auth={AUTH}"));
        let (status, body, kind) = if !authorised {
            (401, b"unauthorised".to_vec(), "text/plain")
        } else if method == "POST" && path.starts_with("/mms/") && length <= MAX_BODY {
            let mut data = vec![0; length];
            reader.read_exact(&mut data).await?;
            let direct_path = format!("/v/t62.wire/{}", uuid_like());
            blobs
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(direct_path.clone(), data);
            let json = format!(
                "{{\"url\":\"https://{addr}{direct_path}\",\"direct_path\":\"{direct_path}\"}}"
            );
            (200, json.into_bytes(), "application/json")
        } else if method == "GET" {
            match blobs.lock().unwrap_or_else(|p| p.into_inner()).get(path) {
                Some(data) => (200, data.clone(), "application/octet-stream"),
                None => (404, b"not found".to_vec(), "text/plain"),
            }
        } else {
            (400, b"bad request".to_vec(), "text/plain")
        };
        let head = format!(
            "HTTP/1.1 {status} {}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n",
            if status == 200 { "OK" } else { "Error" },
            body.len()
        );
        let stream = reader.get_mut();
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(&body).await?;
        stream.flush().await?;
    }
}

fn uuid_like() -> String {
    rand10::random::<[u8; 16]>()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
