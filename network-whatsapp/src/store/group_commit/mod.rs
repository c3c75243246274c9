//! Group commit for the device stores of one process: the hot
//! fenced writes of all its sessions (Signal sessions, sent messages, the
//! pending inbound buffer, message secrets) go to one writer task, which
//! takes everything queued since it last looked and writes it in one
//! transaction: one `BEGIN IMMEDIATE`, one read of the fences, one commit
//! and its flush to disk for many library calls, where each was all of that
//! on its own. At low rates a lone write is taken at once; under load it
//! waits a moment for the next two ([`COMPANY`]), as the event log's appends do.
//!
//! The guarantees are those of one write at a time: a write is answered only
//! once its transaction committed; each is checked against its session's
//! stored fence and its store's deletion under the database's write lock,
//! and refused alone (nothing of it written) when a newer owner holds the
//! session or its state was deleted; a session's writes are applied in the
//! order queued. When a write fails, the batch is rolled back and each of
//! its writes is tried again in a transaction of its own, so that only the
//! failing one fails (with its own error, e.g. a full disk).
//!
//! A write is the statements it makes when its batch is written. On SQLite,
//! where each call is a hand-off to the connection's own thread and back,
//! the writer has a connection of its own and sends a batch in two calls:
//! `BEGIN IMMEDIATE` with the read of the fences, then every statement of
//! the batch with the `COMMIT` (`attempt.rs`). On PostgreSQL, where each
//! statement with bound values is an exchange with the server, the writer
//! holds a connection of its own too and sends a batch in one exchange, its
//! values written into the text: one call that locks the sessions' rows,
//! checks their fences and runs every statement; when the check refuses
//! the batch, in two as on SQLite, which answer each write (`exchange.rs`).
//!
//! Message secrets, which the library writes behind a buffer of its own
//! (it answers reads of them until the write returns), wait up to
//! [`LINGER`] for a write that does not linger and ride in its batch: a
//! received message's secret comes some milliseconds before the Signal
//! session it advanced, and the two are then one exchange.
//!
//! On SQLite, where the event log's writer holds the same database's one
//! write lock and flushes at each commit, a process's device stores have
//! no writer of their own: their writes ride in the event log's
//! transactions (`event_log.rs`, `parley_shared::db::Db::ride`), fenced the
//! same way, so a received message's event and the keys that decrypted the
//! message before it commit in one flush.
//!
//! On PostgreSQL a batch locks its sessions' rows until the commit, as a
//! lone write does, but skips the rows another transaction holds (the event
//! log's writer locks many sessions' rows too, in an order of its own):
//! those writes go alone after it, each waiting for its one row. A batch
//! never waits for a lock while it holds others, so it is never half of a
//! deadlock.
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parley_shared::db::Db;
use parley_shared::db::company::Company;
use sea_orm::{DbBackend, Statement};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Duration;
use whatsapp_rust::wacore::store::error::StoreError;

use super::Deleted;
use super::error::FenceRejected;

mod attempt;
mod event_log;
mod exchange;

use attempt::Target;

/// The most writes one transaction takes.
const MAX_BATCH: usize = 128;

/// Writes waiting for the writer (callers wait beyond this).
const QUEUE: usize = 1_024;

/// The longest a lone write waits for the next two (see [`Company`]): only
/// under load, when the next write is due sooner.
const COMPANY: Duration = Duration::from_millis(3);

/// The longest a batch of writes that linger ([`Pace::Behind`])
/// waits for one that does not, to ride in its transaction.
const LINGER: Duration = Duration::from_millis(50);

/// The statements of one write for the writer's database, made when its
/// batch is written (once its fence was checked), and again when it is
/// tried alone.
pub(super) type Work = Box<dyn Fn(DbBackend) -> Vec<Statement> + Send + Sync>;

/// When a write goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pace {
    /// With the next batch.
    Now,
    /// A write the library makes behind a buffer of its own, which serves
    /// reads until the write is answered (message secrets): on PostgreSQL,
    /// taken alone or with others like it, it waits up to [`LINGER`] for a
    /// write that does not linger (the Signal session a received message
    /// advanced comes some milliseconds after its secret) and rides in its
    /// transaction, one exchange for both.
    Behind,
}

/// Why a write was not applied.
pub(super) enum Failure {
    /// Its fence or its store's deletion refused it.
    Refused(FenceRejected),
    /// The database failed it.
    Failed(StoreError),
}

/// The writer task of one database handle's device stores (and its clones).
#[derive(Clone, Debug)]
pub(crate) struct Writer {
    route: Route,
    taken: Arc<Taken>,
}

/// Where a writer's writes go.
#[derive(Clone, Debug)]
enum Route {
    /// The writer's own task (`run`).
    Own(mpsc::Sender<Job>),
    /// SQLite: the event log's writer of this database handle.
    EventLog(Box<Db>),
}

/// What the writer has taken into transactions.
#[derive(Debug, Default)]
struct Taken {
    transactions: AtomicU64,
    writes: AtomicU64,
    /// Writes tried again alone.
    alone: AtomicU64,
    /// PostgreSQL: batches whose one exchange the check of their fences
    /// refused (written in two, which answer each write).
    refused_checks: AtomicU64,
}

struct Job {
    client_id: String,
    fence: i64,
    deleted: Arc<Deleted>,
    work: Work,
    /// Whether it may wait for company ([`Pace::Behind`]).
    pace: Pace,
    reply: oneshot::Sender<Result<(), Failure>>,
}

impl Writer {
    /// The writer for `db`'s device stores. Its task ends when the last
    /// clone is dropped.
    pub(crate) fn spawn(db: &Db) -> Writer {
        match db.backend() {
            "postgres" => Writer::on(db.clone()),
            _ => Writer {
                route: Route::EventLog(Box::new(db.clone())),
                taken: Arc::default(),
            },
        }
    }

    /// The writer whose transactions go to `db` (on SQLite a pool of one
    /// connection, which a transaction's calls share).
    fn on(db: Db) -> Writer {
        Writer::lingering(db, LINGER)
    }

    /// [`Writer::on`] whose lingering writes wait at most `linger`.
    fn lingering(db: Db, linger: Duration) -> Writer {
        let (tx, rx) = mpsc::channel(QUEUE);
        let taken = Arc::<Taken>::default();
        tokio::spawn(run(db, rx, Arc::clone(&taken), linger));
        Writer {
            route: Route::Own(tx),
            taken,
        }
    }

    /// Queues `work` behind the writes queued before it, at `pace`; the
    /// answer comes once its transaction committed (or it was refused or
    /// failed).
    pub(super) async fn write(
        &self,
        client_id: &str,
        fence: i64,
        deleted: &Arc<Deleted>,
        work: Work,
        pace: Pace,
    ) -> Result<(), Failure> {
        let tx = match &self.route {
            Route::Own(tx) => tx,
            Route::EventLog(db) => {
                self.taken.writes.fetch_add(1, Ordering::SeqCst);
                return event_log::ride(db, client_id, fence, deleted, work).await;
            }
        };
        let (reply, answer) = oneshot::channel();
        let job = Job {
            client_id: client_id.to_string(),
            fence,
            deleted: Arc::clone(deleted),
            work,
            pace,
            reply,
        };
        tx.send(job).await.map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }

    /// Waits until every write queued before it was written or refused. A
    /// deletion of a store's state marks it, then waits for this before it
    /// takes the session's row: on PostgreSQL a batch checks the marks
    /// before it takes its rows (`exchange.rs`), so one that checked before
    /// the mark was set must commit first. (SQLite checks them under the
    /// write lock.)
    pub(super) async fn settled(&self) {
        let Route::Own(tx) = &self.route else {
            return;
        };
        let deleted = Arc::new(Deleted::default());
        deleted.mark(Deleted::FORGOTTEN);
        let (reply, answer) = oneshot::channel();
        let job = Job {
            client_id: String::new(),
            fence: 0,
            deleted,
            work: Box::new(|_| Vec::new()),
            pace: Pace::Now,
            reply,
        };
        if tx.send(job).await.is_ok() {
            // Refused (it has no session): answered after what came before.
            let _ = answer.await;
        }
    }

    /// Writes queued for the writer's own task.
    #[cfg(test)]
    fn queued(&self) -> usize {
        match &self.route {
            Route::Own(tx) => tx.max_capacity() - tx.capacity(),
            Route::EventLog(_) => 0,
        }
    }

    /// Transactions the writer began, and the writes they took (the
    /// event log's transactions are not counted here).
    pub(crate) fn taken(&self) -> (u64, u64) {
        (
            self.taken.transactions.load(Ordering::SeqCst),
            self.taken.writes.load(Ordering::SeqCst),
        )
    }
}

fn stopped() -> Failure {
    Failure::Failed(StoreError::Connection(
        "the device store's writer stopped".into(),
    ))
}

async fn run(db: Db, mut rx: mpsc::Receiver<Job>, taken: Arc<Taken>, linger: Duration) {
    let mut target = Target::new(db, Arc::clone(&taken));
    let mut jobs = Vec::with_capacity(MAX_BATCH);
    let mut company = Company::new(COMPANY);
    while rx.recv_many(&mut jobs, MAX_BATCH).await > 0 {
        company.gather(&mut rx, &mut jobs, MAX_BATCH).await;
        wait_for_a_ride(&mut rx, &mut jobs, linger).await;
        let batch: Vec<Job> = std::mem::take(&mut jobs);
        taken.transactions.fetch_add(1, Ordering::SeqCst);
        taken.writes.fetch_add(batch.len() as u64, Ordering::SeqCst);
        let batch_size = batch.len() as f64;
        parley_shared::metrics::metrics()
            .device_store_batch
            .observe(batch_size);
        write(&mut target, &taken, batch).await;
    }
    target.close().await;
}

/// Adds to a batch of lingering writes alone what arrives until a write
/// that does not linger has come, `linger` has passed, or the batch is
/// full.
async fn wait_for_a_ride(rx: &mut mpsc::Receiver<Job>, jobs: &mut Vec<Job>, linger: Duration) {
    let deadline = tokio::time::Instant::now() + linger;
    while jobs.len() < MAX_BATCH && jobs.iter().all(|job| job.pace == Pace::Behind) {
        let more = rx.recv_many(jobs, MAX_BATCH - jobs.len());
        match tokio::time::timeout_at(deadline, more).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
}

/// Writes one batch and answers each of its writes.
async fn write(target: &mut Target, taken: &Taken, jobs: Vec<Job>) {
    let alone = jobs.len() == 1;
    match target.attempt(&jobs).await {
        Ok(outcomes) => {
            let mut later = Vec::new();
            for (job, outcome) in jobs.into_iter().zip(outcomes) {
                match outcome {
                    Outcome::Written => answer(job, Ok(())),
                    Outcome::Refused(refusal) => answer(job, Err(Failure::Refused(refusal))),
                    Outcome::Later => later.push(job),
                }
            }
            // Their sessions' rows were held by another transaction (briefly:
            // a new owner's claim, the event log's batch): each waits for
            // its row alone, before the next batch.
            for job in later {
                alone_now(target, taken, job).await;
            }
        }
        Err(e) if alone => {
            if let Some(job) = jobs.into_iter().next() {
                answer(job, Err(Failure::Failed(e)));
            }
        }
        Err(e @ StoreError::Connection(_)) => {
            // The database is out of reach: each alone would wait for a
            // connection in turn, the writer stalled the longer.
            let why = e.to_string();
            for job in jobs {
                answer(
                    job,
                    Err(Failure::Failed(StoreError::Connection(why.clone().into()))),
                );
            }
        }
        Err(_) => {
            // Nothing of the batch was written: each alone, so that only
            // the write that fails fails.
            for job in jobs {
                alone_now(target, taken, job).await;
            }
        }
    }
}

/// Writes `job` in a transaction of its own, and answers it.
async fn alone_now(target: &mut Target, taken: &Taken, job: Job) {
    taken.alone.fetch_add(1, Ordering::SeqCst);
    let outcome = match target.attempt(std::slice::from_ref(&job)).await {
        Ok(mut outcomes) => match outcomes.pop() {
            Some(Outcome::Refused(refusal)) => Err(Failure::Refused(refusal)),
            // Alone it waits for its session's row: written.
            _ => Ok(()),
        },
        Err(e) => Err(Failure::Failed(e)),
    };
    answer(job, outcome);
}

fn answer(job: Job, outcome: Result<(), Failure>) {
    let _ = job.reply.send(outcome);
}

/// What became of one write of a batch that committed.
enum Outcome {
    Written,
    Refused(FenceRejected),
    /// Not tried: another transaction held its session's row (PostgreSQL).
    Later,
}

#[cfg(test)]
mod tests;
