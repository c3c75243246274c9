//! The CDN stand-in: plain HTTP/1.1 on loopback, checking what the real CDN
//! checks. Clients upload encrypted media (`POST /mms/{kind}/{token}?auth=..
//! &token=..`, a Content-Length or chunked body) and get back `{url,
//! direct_path}`; `GET {direct_path}` with a media auth, or the signed `url`
//! as is, returns the stored bytes. The media auth must be one `media_conn`
//! handed out and has not expired (401 otherwise, which sends a client back
//! for a new one); the token is the body's SHA-256 (400 otherwise, and
//! nothing is stored); a file of 5 MiB or more is asked about first
//! (`&resume=1`: `complete`, or the offset to resume from) and an upload cut
//! off part way is kept, so the client sends the rest (`&file_offset=`).
//! The server never sees plaintext: what it stores is what clients encrypted.
mod http;
mod uploads;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

use http::{Body, Request};
use uploads::{Progress, Refusal, Store};

/// The largest upload it takes.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// The largest body of a refused request that is read and dropped to keep
/// its connection; after a larger one the connection ends.
const DRAIN_MAX: usize = 1024 * 1024;

/// The key the CDN signs its download URLs with.
const URL_KEY: &str = "wire-cdn-url-key";

pub struct Cdn {
    pub addr: SocketAddr,
    store: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Cdn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Store>>);

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Store> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Cdn {
    pub async fn start() -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let store = Shared::default();
        let served = store.clone();
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let store = served.clone();
                tokio::spawn(async move {
                    if let Err(e) = serve(tcp, addr, store).await {
                        tracing::debug!(error = %e, "wire CDN: request failed");
                    }
                });
            }
        });
        Ok(Self { addr, store, task })
    }

    /// The server's own handle on the CDN.
    pub fn shelf(&self) -> Shelf {
        Shelf {
            addr: self.addr,
            store: self.store.clone(),
        }
    }
}

/// The server's side of the CDN: what it publishes itself (profile
/// pictures), and the media auths it hands out.
pub struct Shelf {
    addr: SocketAddr,
    store: Shared,
}

impl Shelf {
    /// Stores `data` at `path`; returns its signed URL.
    pub fn publish(&self, path: &str, data: Vec<u8>) -> String {
        self.store.lock().put(path.to_string(), data);
        signed_url(self.addr, path)
    }

    /// Takes the file at `path` down.
    pub fn withdraw(&self, path: &str) {
        self.store.lock().remove(path);
    }

    /// A new media auth, as `media_conn` hands it out.
    pub fn issue_auth(&self) -> String {
        self.store.lock().issue_auth()
    }

    /// Every media auth handed out so far stops working (as the real ones
    /// do when their `auth_ttl` runs out).
    pub fn expire_auths(&self) {
        self.store.lock().expire_auths();
    }
}

/// An answer: status, body, content type.
type Answer = (u16, Vec<u8>, &'static str);

fn text(status: u16, body: &str) -> Answer {
    (status, body.as_bytes().to_vec(), "text/plain")
}

fn json(value: serde_json::Value) -> Answer {
    (200, value.to_string().into_bytes(), "application/json")
}

async fn serve(tcp: TcpStream, addr: SocketAddr, store: Shared) -> anyhow::Result<()> {
    let mut reader = BufReader::new(tcp);
    while let Some(request) = Request::read(&mut reader).await? {
        let mut body_read = false;
        let answer = if !authorised(&request, &store) {
            text(401, "unauthorised")
        } else if request.method == "POST" && request.path.starts_with("/mms/") {
            match upload(&request, &mut reader, addr, &store).await? {
                Uploaded::Answer { answer, read } => {
                    body_read = read;
                    answer
                }
                // Cut off: nobody is left to answer.
                Uploaded::Cut => return Ok(()),
            }
        } else if request.method == "GET" {
            match store.lock().blob(&request.path) {
                Some(data) => (200, data.clone(), "application/octet-stream"),
                None => text(404, "not found"),
            }
        } else {
            text(400, "bad request")
        };
        // Refused before its body was read: a small body is read and
        // dropped; after a large one's refusal the connection ends.
        let close = request.has_body() && !body_read && !drained(&request, &mut reader).await;
        write(reader.get_mut(), answer, close).await?;
        if close {
            return Ok(());
        }
    }
    Ok(())
}

/// Reads and drops the body of a request refused before it was read, when
/// it is small (at most `DRAIN_MAX`); whether the connection can go on.
async fn drained(request: &Request, reader: &mut BufReader<TcpStream>) -> bool {
    if request.length > DRAIN_MAX {
        return false;
    }
    matches!(request.body(reader, DRAIN_MAX).await, Ok(Body::Whole(_)))
}

/// A current media auth, or (downloads) the signature the upload's `url` carries.
fn authorised(request: &Request, store: &Shared) -> bool {
    let by_auth = request
        .param("auth")
        .is_some_and(|auth| store.lock().knows_auth(auth));
    by_auth || (request.method == "GET" && request.param("oh") == Some(&signature(&request.path)))
}

/// What became of an upload or a resume check.
enum Uploaded {
    /// The answer, and whether the request's body was read.
    Answer { answer: Answer, read: bool },
    /// The client went away part way through its body.
    Cut,
}

/// An answer given without reading the request's body.
fn unread(answer: Answer) -> Uploaded {
    Uploaded::Answer {
        answer,
        read: false,
    }
}

async fn upload(
    request: &Request,
    reader: &mut BufReader<TcpStream>,
    addr: SocketAddr,
    store: &Shared,
) -> anyhow::Result<Uploaded> {
    let token = request.path.rsplit('/').next().unwrap_or_default();
    if request.param("token") != Some(token) {
        return Ok(unread(text(400, "the token does not name the upload")));
    }
    if request.param("resume") == Some("1") {
        let answer = match store.lock().progress(token) {
            Progress::Unknown => text(404, "no such upload"),
            Progress::Partial(held) => json(serde_json::json!({"resume": held.to_string()})),
            Progress::Done(path) => json(uploaded(addr, &path, Some("complete"))),
        };
        return Ok(unread(answer));
    }
    let offset: usize = match request.param("file_offset").map(str::parse) {
        None => 0,
        Some(Ok(offset)) => offset,
        Some(Err(_)) => return Ok(unread(text(400, "bad file_offset"))),
    };
    if request.length > MAX_BODY {
        return Ok(unread(text(413, "too large")));
    }
    if let Err(Refusal::WrongOffset { held }) = store.lock().may_start(token, offset) {
        return Ok(unread(text(400, &format!("resume from {held}"))));
    }
    let body = match request.body(reader, MAX_BODY).await? {
        Body::Whole(body) => body,
        Body::Cut(part) => {
            store.lock().cut(token, offset, part);
            return Ok(Uploaded::Cut);
        }
    };
    let path = format!("/v/t62.wire/{}", hex::encode(rand10::random::<[u8; 16]>()));
    let answer = match store.lock().finish(token, offset, body, path.clone()) {
        Ok(()) => json(uploaded(addr, &path, None)),
        Err(_) => text(400, "the body does not hash to its token"),
    };
    Ok(Uploaded::Answer { answer, read: true })
}

fn uploaded(addr: SocketAddr, path: &str, resume: Option<&str>) -> serde_json::Value {
    let mut body = serde_json::json!({"url": signed_url(addr, path), "direct_path": path});
    if let Some(resume) = resume {
        body["resume"] = resume.into();
    }
    body
}

async fn write(
    stream: &mut TcpStream,
    (status, body, kind): Answer,
    close: bool,
) -> anyhow::Result<()> {
    let head = format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n{}\r\n",
        if status == 200 { "OK" } else { "Error" },
        body.len(),
        if close { "connection: close\r\n" } else { "" }
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(&body).await?;
    stream.flush().await?;
    Ok(())
}

fn signed_url(addr: SocketAddr, path: &str) -> String {
    format!("https://{addr}{path}?oh={}", signature(path))
}

/// The download signature of `path` (a real CDN signs its URLs; clients that
/// fetch the upload's `url` as is send no media auth).
fn signature(path: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("{URL_KEY}{path}").as_bytes());
    hex::encode(&digest[..12])
}
