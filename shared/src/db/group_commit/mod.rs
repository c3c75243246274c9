//! Group commit for the event log: the appends and delivery records of every
//! session of a process go to its writers (one on SQLite, two on PostgreSQL),
//! each of which takes everything queued since it last looked and writes it
//! in one transaction (one flush to disk for many events; `batch` is that
//! transaction).
//!
//! The guarantees are those of one write at a time: a write is answered only
//! once its transaction committed (persist before acknowledge); each
//! session's `seq` is allocated under its lease fence, gap-free, with the
//! session's row locked until the commit; an event whose id is logged already
//! is a [`DbError::Conflict`]; a refused event (fenced out, window full) takes
//! no `seq`. Each request gets its own answer: one session fenced out or full
//! does not fail the others. A failure of the batch itself (the database or
//! the stream unavailable) fails every request of it, and nothing of it is
//! written; a unique-key conflict nobody expected retries its requests one by
//! one. With nothing queued the writer takes a lone request at once: group
//! commit adds no wait, it only batches what arrives while a commit runs.
mod batch;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::{mpsc, oneshot};

use super::events::{Appended, DeliveryState, NewEvent};
use super::{Db, DbError};

/// The most requests one transaction takes.
const MAX_BATCH: usize = 256;

/// Transactions in flight at once on PostgreSQL: while one waits for its
/// commit, the next takes what queued meanwhile. A session's row lock
/// orders them: appends of one session in flight together (two sends) may
/// take either order, and received messages are appended one after the
/// other, so they keep theirs. SQLite has one writer.
const POSTGRES_WRITERS: usize = 2;

/// Requests waiting for the writer (callers wait beyond this).
const QUEUE: usize = 4_096;

/// Builds an event's stored body from its `seq` (called again when a batch is
/// retried request by request).
pub type Body = Box<dyn FnMut(u64) -> Vec<u8> + Send + Sync>;

/// The writer task of one database handle (and its clones).
#[derive(Debug, Clone)]
pub struct Appender {
    tx: mpsc::Sender<Request>,
    taken: Arc<Taken>,
}

/// What the writer has taken into transactions.
#[derive(Debug, Default)]
struct Taken {
    transactions: AtomicU64,
    requests: AtomicU64,
}

enum Request {
    Append(Append),
    Record(Record),
}

/// An event to append.
struct Append {
    client_id: String,
    fence: u64,
    event_id: String,
    kind: String,
    state: DeliveryState,
    cap: u64,
    body: Body,
    reply: oneshot::Sender<Result<Appended, DbError>>,
}

/// How a delivery went: the event's new state, with an attempt counted (and
/// its HTTP status) or not.
struct Record {
    client_id: String,
    seq: u64,
    state: DeliveryState,
    attempt: Option<Option<u16>>,
    reply: oneshot::Sender<Result<(), DbError>>,
}

fn stopped() -> DbError {
    DbError::Unavailable("the event log's writer stopped".into())
}

impl Appender {
    /// Starts the writer for `db` (a handle without a writer of its own: the
    /// task ends when the last handle that sends to it is dropped).
    pub fn spawn(db: Db) -> Appender {
        let (tx, rx) = mpsc::channel(QUEUE);
        let taken = Arc::<Taken>::default();
        let rx = Arc::new(tokio::sync::Mutex::new(rx));
        let writers = match db.backend() {
            "postgres" => POSTGRES_WRITERS,
            _ => 1,
        };
        for _ in 0..writers {
            tokio::spawn(run(db.clone(), Arc::clone(&rx), Arc::clone(&taken)));
        }
        Appender { tx, taken }
    }

    /// Requests waiting for the writer.
    pub fn queued(&self) -> usize {
        self.tx.max_capacity() - self.tx.capacity()
    }

    /// Transactions the writer began, and the requests they took.
    pub fn taken(&self) -> (u64, u64) {
        (
            self.taken.transactions.load(Ordering::SeqCst),
            self.taken.requests.load(Ordering::SeqCst),
        )
    }

    pub async fn append(
        &self,
        client_id: &str,
        fence: u64,
        new: NewEvent<'_>,
        body: Body,
    ) -> Result<Appended, DbError> {
        let (reply, answer) = oneshot::channel();
        let request = Append {
            client_id: client_id.to_string(),
            fence,
            event_id: new.event_id.to_string(),
            kind: new.kind.to_string(),
            state: new.state,
            cap: new.cap,
            body,
            reply,
        };
        self.tx
            .send(Request::Append(request))
            .await
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }

    /// Sets event `seq`'s state; with `attempt`, counts an attempt that got
    /// that HTTP status (none: no answer).
    pub async fn record(
        &self,
        client_id: &str,
        seq: u64,
        state: DeliveryState,
        attempt: Option<Option<u16>>,
    ) -> Result<(), DbError> {
        let (reply, answer) = oneshot::channel();
        let request = Record {
            client_id: client_id.to_string(),
            seq,
            state,
            attempt,
            reply,
        };
        self.tx
            .send(Request::Record(request))
            .await
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

async fn run(db: Db, rx: Arc<tokio::sync::Mutex<mpsc::Receiver<Request>>>, taken: Arc<Taken>) {
    let mut requests = Vec::with_capacity(MAX_BATCH);
    // One writer waits for requests at a time; it lets go once it has some.
    while rx.lock().await.recv_many(&mut requests, MAX_BATCH).await > 0 {
        let n = requests.len() as u64;
        taken.transactions.fetch_add(1, Ordering::SeqCst);
        taken.requests.fetch_add(n, Ordering::SeqCst);
        crate::metrics::metrics().event_log_batch.observe(n as f64);
        let (mut appends, mut records) = (Vec::new(), Vec::new());
        for request in requests.drain(..) {
            match request {
                Request::Append(a) => appends.push(a),
                Request::Record(r) => records.push(r),
            }
        }
        write(&db, appends, records).await;
    }
}

/// Writes one batch and answers each of its requests.
async fn write(db: &Db, mut appends: Vec<Append>, records: Vec<Record>) {
    match batch::write(db, &mut appends, &records).await {
        Ok(outcomes) => {
            for (request, outcome) in appends.into_iter().zip(outcomes) {
                let _ = request.reply.send(outcome);
            }
            for record in records {
                let _ = record.reply.send(Ok(()));
            }
        }
        Err(DbError::Conflict(_)) if appends.len() + records.len() > 1 => {
            // Another process logged one of these events meanwhile: one by
            // one, so that only that one is the duplicate.
            let outcome = batch::write(db, &mut [], &records).await.map(|_| ());
            for record in records {
                let _ = record.reply.send(outcome.clone());
            }
            for request in appends {
                let mut one = [request];
                let outcome = match batch::write(db, &mut one, &[]).await {
                    Ok(mut outcomes) => outcomes.pop().unwrap_or_else(batch::not_written),
                    Err(e) => Err(e),
                };
                let [request] = one;
                let _ = request.reply.send(outcome);
            }
        }
        Err(e) => {
            for request in appends {
                let _ = request.reply.send(Err(e.clone()));
            }
            for record in records {
                let _ = record.reply.send(Err(e.clone()));
            }
        }
    }
}
