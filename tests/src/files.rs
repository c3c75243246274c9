//! A hand-written HTTP/1.1 file server on loopback, for tests of downloads: a
//! full response (after an optional delay), a status, headers then a body that
//! never ends, or silence. It counts the requests it gets.
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How the server answers every request.
#[derive(Clone, Debug)]
pub enum Answer {
    /// A complete response, sent after `delay`.
    Full {
        status: u16,
        content_type: &'static str,
        body: Vec<u8>,
        delay: Duration,
    },
    /// 200 with this Content-Length (or none), then zeros until the client leaves.
    Endless { content_length: Option<u64> },
    /// Reads the request and never answers.
    Silent,
}

impl Answer {
    /// 200 with `body`, at once.
    pub fn file(content_type: &'static str, body: impl Into<Vec<u8>>) -> Answer {
        Answer::Full {
            status: 200,
            content_type,
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    /// `status` with an empty body.
    pub fn status(status: u16) -> Answer {
        Answer::Full {
            status,
            content_type: "text/plain",
            body: Vec::new(),
            delay: Duration::ZERO,
        }
    }
}

/// A running server.
pub struct FileServer {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    pub port: u16,
    hits: Arc<AtomicUsize>,
}

impl FileServer {
    /// Requests received so far.
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// Starts a server answering every request with `answer`.
pub async fn serve(answer: Answer) -> FileServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&hits);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(respond(stream, answer.clone()));
        }
    });
    FileServer {
        base: format!("http://127.0.0.1:{port}"),
        port,
        hits,
    }
}

async fn respond(mut stream: TcpStream, answer: Answer) {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    match answer {
        Answer::Full {
            status,
            content_type,
            body,
            delay,
        } => {
            tokio::time::sleep(delay).await;
            let head = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes()).await;
            let _ = stream.write_all(&body).await;
        }
        Answer::Endless { content_length } => {
            let length = content_length
                .map(|n| format!("content-length: {n}\r\n"))
                .unwrap_or_default();
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: video/mp4\r\n{length}connection: close\r\n\r\n"
            );
            if stream.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            let chunk = vec![0u8; 64 * 1024];
            while stream.write_all(&chunk).await.is_ok() {}
        }
        Answer::Silent => tokio::time::sleep(Duration::from_secs(3600)).await,
    }
}
