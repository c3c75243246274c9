//! The CDN stand-in: plain HTTP/1.1 on loopback. Clients upload encrypted
//! media (`POST /mms/{kind}/{token}?auth=..`, a Content-Length or chunked
//! body) and get back `{url, direct_path}`; `GET {direct_path}` with the
//! media auth, or the signed `url` as is, returns the stored bytes.
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
    blobs: Blobs,
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
        let served = Arc::clone(&blobs);
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let blobs = Arc::clone(&served);
                tokio::spawn(async move {
                    if let Err(e) = serve(tcp, addr, blobs).await {
                        tracing::debug!(error = %e, "wire CDN: request failed");
                    }
                });
            }
        });
        Ok(Self { addr, blobs, task })
    }

    /// What the server itself publishes (profile pictures): its shelf.
    pub fn shelf(&self) -> Shelf {
        Shelf {
            addr: self.addr,
            blobs: Arc::clone(&self.blobs),
        }
    }
}

/// Puts files on the CDN from the server's side.
pub struct Shelf {
    addr: SocketAddr,
    blobs: Blobs,
}

impl Shelf {
    /// Stores `data` at `path`; returns its signed URL.
    pub fn publish(&self, path: &str, data: Vec<u8>) -> String {
        self.blobs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(path.to_string(), data);
        format!("https://{}{path}?oh={}", self.addr, signature(path))
    }

    /// Takes the file at `path` down.
    pub fn withdraw(&self, path: &str) {
        self.blobs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(path);
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
        let mut chunked = false;
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).await?;
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                } else if name.eq_ignore_ascii_case("transfer-encoding") {
                    chunked = value.trim().eq_ignore_ascii_case("chunked");
                }
            }
        }
        let (path, query) = target.split_once('?').unwrap_or((&target, ""));
        let has = |param: String| query.split('&').any(|kv| kv == param);
        // The media auth, or (downloads) the signature the upload's `url` carries.
        let authorised = has(format!("auth={AUTH}"))
            || (method == "GET" && has(format!("oh={}", signature(path))));
        let (status, body, kind) = if !authorised {
            (401, b"unauthorised".to_vec(), "text/plain")
        } else if method == "POST" && path.starts_with("/mms/") && length <= MAX_BODY {
            let data = if chunked {
                read_chunked(&mut reader).await?
            } else {
                let mut data = vec![0; length];
                reader.read_exact(&mut data).await?;
                data
            };
            let direct_path = format!("/v/t62.wire/{}", uuid_like());
            blobs
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(direct_path.clone(), data);
            let json = format!(
                "{{\"url\":\"https://{addr}{direct_path}?oh={}\",\"direct_path\":\"{direct_path}\"}}",
                signature(&direct_path)
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

/// A `Transfer-Encoding: chunked` body (clients that stream their upload).
async fn read_chunked(reader: &mut BufReader<TcpStream>) -> anyhow::Result<Vec<u8>> {
    let mut data = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size).await?;
        let size = size.trim().split(';').next().unwrap_or_default();
        let size = usize::from_str_radix(size, 16)
            .map_err(|_| anyhow::anyhow!("bad chunk size {size:?}"))?;
        if data.len() + size > MAX_BODY {
            anyhow::bail!("upload over {MAX_BODY} bytes");
        }
        let start = data.len();
        data.resize(start + size, 0);
        reader.read_exact(&mut data[start..]).await?;
        let mut end = String::new();
        reader.read_line(&mut end).await?;
        if size == 0 {
            return Ok(data);
        }
    }
}

/// The download signature of `path` (a real CDN signs its URLs; clients that
/// fetch the upload's `url` as is send no media auth).
fn signature(path: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("{AUTH}{path}").as_bytes());
    digest[..12].iter().map(|b| format!("{b:02x}")).collect()
}

fn uuid_like() -> String {
    rand10::random::<[u8; 16]>()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
