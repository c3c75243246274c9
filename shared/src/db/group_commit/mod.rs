//! Group commit for the event log: the appends and delivery records of every
//! session of a process go to its writers ([`POSTGRES_WRITERS`] on
//! PostgreSQL, one on SQLite with a connection of its own; each session
//! always to the same one), each of which takes everything
//! queued for it since it last looked and writes it in one transaction (one
//! flush to disk for many events; `batch` is that transaction). A session's
//! requests are written in the order queued, so it may queue its next
//! appends before the earlier ones committed.
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
//! one. With nothing queued the writer takes a lone append at once: group
//! commit adds no wait to an append, it only batches what arrives while a
//! commit runs. Delivery records alone wait a few milliseconds for an append
//! to ride with ([`RECORDS_LINGER`]).
//!
//! On SQLite the device store's writes ride in these transactions too
//! (`rides`).
//!
//! On PostgreSQL a writer remembers each session's `seq` as it last wrote
//! it; while no one else writes the session, its batches need no locking
//! read and no transaction around them: one checked statement
//! (`optimistic`), with the same guarantees.
mod batch;
mod optimistic;
mod portable;
mod postgres;
mod records;
mod rides;
mod txn;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::{mpsc, oneshot};
use tokio::time::{Duration, Instant, timeout_at};

use super::company::Company;
use super::logged_events::{Appended, DeliveryState, NewEvent};
use super::{Db, DbError};
pub use rides::RideWork;
use rides::{RIDES_LINGER, Ride};

/// The most requests one transaction takes.
const MAX_BATCH: usize = 256;

/// Writers on PostgreSQL, each with its own queue and its own statement in
/// flight. A session's requests always go to the same writer (by its
/// `client_id`), whose batches follow one another, so they are written in
/// the order they were queued: a session may have many appends in flight
/// and keep its order. One, as on SQLite: a batch is one statement that
/// needs no locking read (`optimistic`), and a second writer halved the
/// batches at the same rate (each commit is a flush, whatever its size) for
/// no more throughput.
pub(super) const POSTGRES_WRITERS: usize = 1;

/// Requests waiting for one writer (callers wait beyond this).
const QUEUE: usize = 4_096;

/// How long a batch of delivery records alone waits for an append to ride
/// with: nobody waits on a record but the delivery that made it, and under
/// load an append comes within a millisecond or two, so most records cost
/// no statement of their own. A record still commits before its delivery
/// ends (a handover never leaves a delivered event unrecorded); a process
/// killed in this window delivers those events again, at least once.
const RECORDS_LINGER: Duration = Duration::from_millis(5);

/// The longest a lone append waits for the next two (see [`Company`]): only
/// under load, when the next append is due sooner. Delivery records ride
/// along and are not company.
const APPENDS_COMPANY: Duration = Duration::from_millis(3);

/// Builds an event's stored body from its `seq` (called again when a batch is
/// retried request by request).
pub type Body = Box<dyn FnMut(u64) -> Vec<u8> + Send + Sync>;

/// The writer tasks of one database handle (and its clones).
#[derive(Debug, Clone)]
pub struct Appender {
    /// Each writer's queue; a session's requests go to one of them.
    writers: Arc<[mpsc::Sender<Request>]>,
    taken: Arc<Taken>,
}

/// An answer still to come from the writer: the request is queued, in order
/// with the same session's earlier and later ones.
#[must_use = "the request's outcome is known only once its answer is awaited"]
pub struct Queued<T>(oneshot::Receiver<Result<T, DbError>>);

impl<T> Queued<T> {
    /// Waits until the request's transaction committed (or failed).
    pub async fn answer(self) -> Result<T, DbError> {
        self.0.await.map_err(|_| stopped())?
    }
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
    Ride(Ride),
}

impl Request {
    fn is_append(&self) -> bool {
        matches!(self, Request::Append(_))
    }
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
    /// The event's requeues as its delivery read them: the record applies
    /// only while the row still has them.
    requeues: u32,
    state: DeliveryState,
    attempt: Option<Option<u16>>,
    reply: oneshot::Sender<Result<(), DbError>>,
}

fn stopped() -> DbError {
    DbError::Unavailable("the event log's writer stopped".into())
}

impl Appender {
    /// Starts the writers for `db` (a handle without a writer of its own: the
    /// tasks end when the last handle that sends to them is dropped).
    pub fn spawn(db: Db) -> Appender {
        let taken = Arc::<Taken>::default();
        let (db, writers) = match db.backend() {
            "postgres" => (db, POSTGRES_WRITERS),
            // One writer, on a connection of its own (see `batch::Txn`).
            _ => (db.sqlite_writer(), 1),
        };
        let writers = (0..writers)
            .map(|_| {
                let (tx, rx) = mpsc::channel(QUEUE);
                tokio::spawn(run(db.clone(), rx, Arc::clone(&taken)));
                tx
            })
            .collect();
        Appender { writers, taken }
    }

    /// Requests waiting for the writers.
    pub fn queued(&self) -> usize {
        self.writers
            .iter()
            .map(|tx| tx.max_capacity() - tx.capacity())
            .sum()
    }

    /// Transactions the writers began, and the requests they took.
    pub fn taken(&self) -> (u64, u64) {
        (
            self.taken.transactions.load(Ordering::SeqCst),
            self.taken.requests.load(Ordering::SeqCst),
        )
    }

    /// The writer of `client_id`'s requests.
    fn writer(&self, client_id: &str) -> &mpsc::Sender<Request> {
        // FNV-1a: stable, and spreads sessions' ids evenly enough.
        let hash = client_id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        &self.writers[(hash % self.writers.len() as u64) as usize]
    }

    /// Queues the request `make` builds behind the session's earlier ones.
    async fn submit<T>(
        &self,
        client_id: &str,
        make: impl FnOnce(oneshot::Sender<Result<T, DbError>>) -> Request,
    ) -> Result<Queued<T>, DbError> {
        let (reply, answer) = oneshot::channel();
        self.writer(client_id)
            .send(make(reply))
            .await
            .map_err(|_| stopped())?;
        Ok(Queued(answer))
    }

    /// Queues an append behind the session's earlier requests; the answer
    /// comes once its transaction committed.
    pub async fn enqueue_append(
        &self,
        client_id: &str,
        fence: u64,
        new: NewEvent<'_>,
        body: Body,
    ) -> Result<Queued<Appended>, DbError> {
        self.submit(client_id, |reply| {
            Request::Append(Append {
                client_id: client_id.to_string(),
                fence,
                event_id: new.event_id.to_string(),
                kind: new.kind.to_string(),
                state: new.state,
                cap: new.cap,
                body,
                reply,
            })
        })
        .await
    }

    pub async fn append(
        &self,
        client_id: &str,
        fence: u64,
        new: NewEvent<'_>,
        body: Body,
    ) -> Result<Appended, DbError> {
        self.enqueue_append(client_id, fence, new, body)
            .await?
            .answer()
            .await
    }

    /// Writes another store's statements in the next batch (SQLite only,
    /// see `rides`): the answer comes once they committed, or were made
    /// none (refused by `work` under the write lock).
    pub async fn ride(&self, client_id: &str, work: RideWork) -> Result<(), DbError> {
        let ride = |reply| {
            Request::Ride(Ride {
                client_id: client_id.to_string(),
                work,
                reply,
            })
        };
        self.submit(client_id, ride).await?.answer().await
    }

    /// Sets event `seq`'s state; with `attempt`, counts an attempt that got
    /// that HTTP status (none: no answer). Nothing changes when the event
    /// was queued again since its delivery read it (`requeues` differs).
    pub async fn record(
        &self,
        client_id: &str,
        seq: u64,
        requeues: u32,
        state: DeliveryState,
        attempt: Option<Option<u16>>,
    ) -> Result<(), DbError> {
        let record = |reply| {
            Request::Record(Record {
                client_id: client_id.to_string(),
                seq,
                requeues,
                state,
                attempt,
                reply,
            })
        };
        self.submit(client_id, record).await?.answer().await
    }
}

async fn run(db: Db, mut rx: mpsc::Receiver<Request>, taken: Arc<Taken>) {
    let mut requests = Vec::with_capacity(MAX_BATCH);
    let mut known = records::Known::new();
    let mut company = Company::new(APPENDS_COMPANY);
    while rx.recv_many(&mut requests, MAX_BATCH).await > 0 {
        let now = Instant::now();
        let wait = if requests.iter().any(|r| matches!(r, Request::Record(_))) {
            Some(RECORDS_LINGER)
        } else {
            company.due(now, RIDES_LINGER)
        };
        if let Some(wait) = wait {
            linger(&mut rx, &mut requests, wait).await;
        }
        company
            .gather_by(&mut rx, &mut requests, MAX_BATCH, Request::is_append)
            .await;
        let n = requests.len() as u64;
        taken.transactions.fetch_add(1, Ordering::SeqCst);
        taken.requests.fetch_add(n, Ordering::SeqCst);
        crate::metrics::metrics().event_log_batch.observe(n as f64);
        let (mut appends, mut records, mut rides) = (Vec::new(), Vec::new(), Vec::new());
        for request in requests.drain(..) {
            match request {
                Request::Append(a) => appends.push(a),
                Request::Record(r) => records.push(r),
                Request::Ride(r) => rides.push(r),
            }
        }
        if rides.is_empty() {
            write(&db, appends, records, &mut known).await;
        } else {
            write_riding(&db, appends, records, rides, &mut known).await;
        }
    }
}

/// Lets a batch without appends (delivery records, rides) take what comes
/// within `wait`, until an append joins it (or it is full).
async fn linger(rx: &mut mpsc::Receiver<Request>, requests: &mut Vec<Request>, wait: Duration) {
    let has_append = |requests: &[Request]| requests.iter().any(Request::is_append);
    let deadline = Instant::now() + wait;
    while requests.len() < MAX_BATCH && !has_append(requests) {
        let room = MAX_BATCH - requests.len();
        match timeout_at(deadline, rx.recv_many(requests, room)).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
}

/// Writes a batch with rides in it and answers each of its requests. If it
/// fails (nothing of it was written), the appends and records go again
/// without the rides, and each ride alone: only a failing write fails.
async fn write_riding(
    db: &Db,
    mut appends: Vec<Append>,
    records: Vec<Record>,
    rides: Vec<Ride>,
    known: &mut records::Known,
) {
    match write_batch(db, &mut appends, &records, &rides, known).await {
        Ok(outcomes) => {
            committed(appends, outcomes, records);
            for ride in rides {
                let _ = ride.reply.send(Ok(()));
            }
            return;
        }
        Err(e) => tracing::debug!(error = %e, "a batch with rides failed; writing its parts apart"),
    }
    if !appends.is_empty() || !records.is_empty() {
        write(db, appends, records, known).await;
    }
    for ride in rides {
        let alone = std::slice::from_ref(&ride);
        let outcome = write_batch(db, &mut [], &[], alone, known)
            .await
            .map(|_| ());
        let _ = ride.reply.send(outcome);
    }
}

/// Answers a committed batch's `appends` with their `outcomes`, and its
/// `records`.
fn committed(appends: Vec<Append>, outcomes: Vec<batch::Outcome>, records: Vec<Record>) {
    for (request, outcome) in appends.into_iter().zip(outcomes) {
        let _ = request.reply.send(outcome);
    }
    for record in records {
        let _ = record.reply.send(Ok(()));
    }
}

/// Writes one batch and answers each of its requests.
async fn write(
    db: &Db,
    mut appends: Vec<Append>,
    records: Vec<Record>,
    known: &mut records::Known,
) {
    match write_batch(db, &mut appends, &records, &[], known).await {
        Ok(outcomes) => committed(appends, outcomes, records),
        Err(DbError::Conflict(_)) if appends.len() + records.len() > 1 => {
            // Another process logged one of these events meanwhile: one by
            // one, so that only that one is the duplicate.
            let outcome = write_batch(db, &mut [], &records, &[], known)
                .await
                .map(|_| ());
            for record in records {
                let _ = record.reply.send(outcome.clone());
            }
            for request in appends {
                let mut one = [request];
                let outcome = match write_batch(db, &mut one, &[], &[], known).await {
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

/// Writes `appends`, `records` and `rides`: each append's outcome, or why
/// the whole batch failed (then nothing of it was written).
async fn write_batch(
    db: &Db,
    appends: &mut [Append],
    records: &[Record],
    rides: &[Ride],
    known: &mut records::Known,
) -> Result<Vec<batch::Outcome>, DbError> {
    let mut all: Vec<&mut Append> = appends.iter_mut().collect();
    let all_known = all.iter().all(|a| known.contains_key(&a.client_id));
    if db.backend() == "postgres" && all_known && rides.is_empty() {
        return optimistic::write(db, all, records, known).await;
    }
    batch::locked(db, &mut all, records, rides, known).await
}
