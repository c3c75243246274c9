//! The fault run's steady load: customers send (texts, and every tenth a
//! file through the multipart upload) and contacts write, at fixed rates
//! through the API rotation, from the first fault to the last; every answer
//! is kept, and the webhook receiver counts each message's events by the
//! number in its body.
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use parley_tests::multipart::{Part, multipart};
use parley_tests::receiver::Receiver;
use serde_json::json;

use super::super::TOKEN;
use super::super::events::SENDER;
use super::pods::Rotation;

/// How long the harness waits for an answer: past the timeouts the docs
/// name (the owner's 10 s per attempt, 25 s in all), so a request still
/// open then hung.
const ANSWER_WITHIN: Duration = Duration::from_secs(45);

/// The same for a file send: the docs give its owner 150 s in all (its file
/// fetched and handed to the network).
const FILE_ANSWER_WITHIN: Duration = Duration::from_secs(160);

/// Every how many customer sends one is a file.
const FILE_EVERY: usize = 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// `/send-message`.
    Send,
    /// `/send-media-message`, multipart: the file goes through the media store.
    File,
    /// A contact's message (`/sandbox/messages`).
    Inbound,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Send => "send-message",
            Kind::File => "send-media-message",
            Kind::Inbound => "contact writes",
        }
    }
}

#[derive(Clone, Debug)]
pub enum Answer {
    Ok,
    Refused {
        status: u16,
        error: String,
        retry_after: bool,
    },
    /// No answer: the connection failed, or nothing came within
    /// [`ANSWER_WITHIN`].
    None(String),
}

#[derive(Clone, Debug)]
pub struct Outcome {
    pub n: usize,
    pub kind: Kind,
    pub session: usize,
    pub started: Instant,
    pub took: Duration,
    pub answer: Answer,
}

/// The load while it runs.
pub struct Load {
    stop: Arc<AtomicBool>,
    /// Requests sent and not answered yet.
    open: Arc<AtomicUsize>,
    generator: tokio::task::JoinHandle<()>,
    collector: tokio::task::JoinHandle<()>,
    pub outcomes: Arc<Mutex<Vec<Outcome>>>,
    /// Events delivered (answered 200 by the receiver) per message number.
    pub deliveries: Arc<Mutex<HashMap<usize, u32>>>,
}

/// The first line of a file each file send uploads (its number follows).
const FILE_TEXT: &str = "a file of the fault run, number";

impl Load {
    /// Starts `rate` requests a second (open model: request n is due at
    /// n/rate whatever came before), customers' sends and contacts'
    /// messages in turn, over `sessions`.
    pub fn start(
        http: &reqwest::Client,
        rotation: Rotation,
        sessions: Vec<String>,
        rate: f64,
        mut rx: Receiver,
    ) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let open: Arc<AtomicUsize> = Arc::default();
        let outcomes: Arc<Mutex<Vec<Outcome>>> = Arc::default();
        let deliveries: Arc<Mutex<HashMap<usize, u32>>> = Arc::default();
        let collector = {
            let deliveries = Arc::clone(&deliveries);
            tokio::spawn(async move {
                while let Some(req) = rx.maybe_next(Duration::from_secs(3600)).await {
                    if req.status != Some(200) {
                        continue;
                    }
                    if let Some(n) = number(&req.json()["body"]) {
                        *lock(&deliveries).entry(n).or_default() += 1;
                    }
                }
            })
        };
        let generator = {
            let (stop, outcomes, http) = (Arc::clone(&stop), Arc::clone(&outcomes), http.clone());
            let open = Arc::clone(&open);
            let sessions = Arc::new(sessions);
            tokio::spawn(async move {
                let t0 = tokio::time::Instant::now();
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    tokio::time::sleep_until(t0 + Duration::from_secs_f64(n as f64 / rate)).await;
                    let kind = match n % 2 {
                        1 => Kind::Inbound,
                        _ if (n / 2) % FILE_EVERY == FILE_EVERY - 1 => Kind::File,
                        _ => Kind::Send,
                    };
                    let session = (n / 2) % sessions.len();
                    let (http, base) = (http.clone(), rotation.pick(n));
                    let (sessions, outcomes) = (Arc::clone(&sessions), Arc::clone(&outcomes));
                    let open = Arc::clone(&open);
                    open.fetch_add(1, Ordering::SeqCst);
                    tokio::spawn(async move {
                        let started = Instant::now();
                        let answer = request(&http, &base, kind, &sessions[session], n).await;
                        lock(&outcomes).push(Outcome {
                            n,
                            kind,
                            session,
                            started,
                            took: started.elapsed(),
                            answer,
                        });
                        open.fetch_sub(1, Ordering::SeqCst);
                    });
                    n += 1;
                }
            })
        };
        Load {
            stop,
            open,
            generator,
            collector,
            outcomes,
            deliveries,
        }
    }

    /// Stops making requests; waits for the open ones' answers (each ends
    /// within its limit).
    pub async fn stop(&mut self) -> anyhow::Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        (&mut self.generator).await?;
        while self.open.load(Ordering::SeqCst) > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }

    /// Waits until every accepted message's event was delivered, at most
    /// `within`; returns how many were not.
    pub async fn drain(&self, within: Duration) -> usize {
        let until = Instant::now() + within;
        loop {
            let missing = self.undelivered();
            if missing == 0 || Instant::now() > until {
                return missing;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn undelivered(&self) -> usize {
        let delivered = lock(&self.deliveries);
        lock(&self.outcomes)
            .iter()
            .filter(|o| matches!(o.answer, Answer::Ok))
            .filter(|o| delivered.get(&o.n).is_none_or(|d| *d == 0))
            .count()
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.generator.abort();
        self.collector.abort();
    }
}

pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The message number an event's body carries (`fault <n>`, or a file's
/// caption).
fn number(body: &serde_json::Value) -> Option<usize> {
    body.as_str()?.strip_prefix("fault ")?.parse().ok()
}

async fn request(http: &reqwest::Client, base: &str, kind: Kind, id: &str, n: usize) -> Answer {
    let marker = format!("fault {n}");
    let req = match kind {
        Kind::Send => http
            .post(format!("{base}/send-message"))
            .json(&json!({"clientId": id, "to": "4915199990000", "body": marker})),
        Kind::Inbound => http
            .post(format!("{base}/sandbox/messages"))
            .json(&json!({"clientId": id, "from": SENDER, "type": "text", "body": marker})),
        Kind::File => {
            let text = format!("{FILE_TEXT} {n}\n");
            let (content_type, body) = multipart(&[
                Part::Text("clientId", id),
                Part::Text("to", "4915199990000"),
                Part::Text("caption", &marker),
                Part::File {
                    name: "file",
                    file_name: "fault.txt",
                    content_type: "text/plain",
                    data: text.as_bytes(),
                },
            ]);
            http.post(format!("{base}/send-media-message?clientId={id}"))
                .header("content-type", content_type)
                .body(body)
        }
    };
    let within = match kind {
        Kind::File => FILE_ANSWER_WITHIN,
        Kind::Send | Kind::Inbound => ANSWER_WITHIN,
    };
    let res = req.bearer_auth(TOKEN).timeout(within).send().await;
    match res {
        Ok(r) if r.status().is_success() => Answer::Ok,
        Ok(r) => {
            let status = r.status().as_u16();
            let retry_after = r.headers().contains_key("retry-after");
            let body: serde_json::Value = r.json().await.unwrap_or_default();
            Answer::Refused {
                status,
                error: body["error"]
                    .as_str()
                    .unwrap_or("(no error text)")
                    .to_string(),
                retry_after,
            }
        }
        Err(e) if e.is_timeout() => Answer::None(format!("no answer within {within:?}")),
        Err(e) => Answer::None(format!("request failed: {e}")),
    }
}
