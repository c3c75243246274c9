//! A webhook receiver for tests: a real HTTP/1.1 server on loopback that answers
//! with scripted behaviours and hands every request back over a channel.
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// How the receiver answers one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Behaviour {
    Status(u16),
    /// A status with a `Retry-After` header (seconds).
    RetryAfter(u16, u64),
    /// Never answers (the connection stays open).
    Hang,
    /// A status and a JSON body.
    Json(u16, String),
    /// This status to the first request of each `webhook-id`, `200` to the
    /// ones after it: every event goes into retry once, then is delivered.
    FailFirst(u16),
    /// This status, once the request has waited this long (it is reported
    /// as received at once: the attempt is under way meanwhile).
    Slow(Duration, u16),
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// Lower-case header names.
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
    pub at: Instant,
    /// The status answered (none for [`Behaviour::Hang`]).
    pub status: Option<u16>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("JSON body")
    }
}

pub struct Receiver {
    pub url: String,
    script: Arc<Mutex<VecDeque<Behaviour>>>,
    default: Arc<Mutex<Behaviour>>,
    rx: mpsc::UnboundedReceiver<Received>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Receiver {
    /// Starts a receiver answering `200` unless scripted otherwise.
    pub async fn start() -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind receiver");
        let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
        let script = Arc::new(Mutex::new(VecDeque::new()));
        let default = Arc::new(Mutex::new(Behaviour::Status(200)));
        let (tx, rx) = mpsc::unbounded_channel();
        let state = State {
            script: script.clone(),
            default: default.clone(),
            failed_once: Arc::default(),
        };
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, state.clone(), tx.clone()));
            }
        });
        Receiver {
            url,
            script,
            default,
            rx,
            task,
        }
    }

    /// The next requests get these behaviours, in order; then the default.
    pub fn script(&self, behaviours: impl IntoIterator<Item = Behaviour>) {
        self.script.lock().unwrap().extend(behaviours);
    }

    pub fn set_default(&self, behaviour: Behaviour) {
        *self.default.lock().unwrap() = behaviour;
    }

    /// The next request, failing the test after `deadline`.
    pub async fn next(&mut self, deadline: Duration) -> Received {
        tokio::time::timeout(deadline, self.rx.recv())
            .await
            .unwrap_or_else(|_| panic!("no webhook request within {deadline:?}"))
            .expect("receiver running")
    }

    /// Whether another request arrives within `wait` (for asserting that none does).
    pub async fn maybe_next(&mut self, wait: Duration) -> Option<Received> {
        tokio::time::timeout(wait, self.rx.recv())
            .await
            .ok()
            .flatten()
    }
}

/// What every connection of one receiver shares.
#[derive(Clone)]
struct State {
    script: Arc<Mutex<VecDeque<Behaviour>>>,
    default: Arc<Mutex<Behaviour>>,
    /// The `webhook-id`s [`Behaviour::FailFirst`] has failed once.
    failed_once: Arc<Mutex<HashSet<String>>>,
}

impl State {
    /// The behaviour for the next request, with a first-attempt failure
    /// resolved into the status it gets.
    fn behaviour(&self, headers: &HashMap<String, String>) -> Behaviour {
        let next = self
            .script
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| self.default.lock().unwrap().clone());
        let Behaviour::FailFirst(code) = next else {
            return next;
        };
        let id = headers.get("webhook-id").cloned().unwrap_or_default();
        if self.failed_once.lock().unwrap().insert(id) {
            Behaviour::Status(code)
        } else {
            Behaviour::Status(200)
        }
    }
}

async fn serve(stream: TcpStream, state: State, tx: mpsc::UnboundedSender<Received>) {
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let (method, path) = (
            parts.next().unwrap_or("").to_string(),
            parts.next().unwrap_or("").to_string(),
        );
        let mut headers = HashMap::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).await.unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
            }
        }
        let len: usize = headers
            .get("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        if reader.read_exact(&mut body).await.is_err() {
            return;
        }
        let behaviour = state.behaviour(&headers);
        let status = match &behaviour {
            Behaviour::Status(code)
            | Behaviour::RetryAfter(code, _)
            | Behaviour::Json(code, _)
            | Behaviour::Slow(_, code) => Some(*code),
            Behaviour::Hang | Behaviour::FailFirst(_) => None,
        };
        let _ = tx.send(Received {
            method,
            path,
            headers,
            body,
            at: Instant::now(),
            status,
        });
        let response = match behaviour {
            Behaviour::Hang => {
                std::future::pending::<()>().await;
                return;
            }
            Behaviour::Status(code) | Behaviour::FailFirst(code) => {
                format!("HTTP/1.1 {code} X\r\ncontent-length: 0\r\n\r\n")
            }
            Behaviour::Slow(wait, code) => {
                tokio::time::sleep(wait).await;
                format!("HTTP/1.1 {code} X\r\ncontent-length: 0\r\n\r\n")
            }
            Behaviour::RetryAfter(code, secs) => {
                format!("HTTP/1.1 {code} X\r\nretry-after: {secs}\r\ncontent-length: 0\r\n\r\n")
            }
            Behaviour::Json(code, body) => format!(
                "HTTP/1.1 {code} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            ),
        };
        if reader
            .get_mut()
            .write_all(response.as_bytes())
            .await
            .is_err()
        {
            return;
        }
    }
}
