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
//! On PostgreSQL a batch locks its sessions' rows until the commit, as a
//! lone write does, but skips the rows another transaction holds (the event
//! log's writer locks many sessions' rows too, in an order of its own):
//! those writes go alone after it, each waiting for its one row. A batch
//! never waits for a lock while it holds others, so it is never half of a
//! deadlock.
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::BoxFuture;
use parley_shared::db::Db;
use parley_shared::db::company::Company;
use parley_shared::db::entities::sessions;
use sea_orm::sea_query::{LockBehavior, LockType};
use sea_orm::{ColumnTrait, DatabaseTransaction, EntityTrait, QueryFilter, QuerySelect};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Duration;
use whatsapp_rust::wacore::store::error::StoreError;

use super::Deleted;
use super::error::{FenceRejected, db_err};
use super::fence::{begin_locked, commit};

/// The most writes one transaction takes.
const MAX_BATCH: usize = 128;

/// Writes waiting for the writer (callers wait beyond this).
const QUEUE: usize = 1_024;

/// The longest a lone write waits for the next two (see [`Company`]): only
/// under load, when the next write is due sooner.
const COMPANY: Duration = Duration::from_millis(3);

/// The statements of one write, run inside a transaction whose fence was
/// checked; called again, in a transaction of its own, when its batch failed.
pub(super) type Work = Box<
    dyn for<'t> Fn(&'t DatabaseTransaction) -> BoxFuture<'t, Result<(), StoreError>> + Send + Sync,
>;

/// `f` as a [`Work`] (the bound gives the closure its signature: a
/// transaction of any lifetime).
pub(super) fn work<F>(f: F) -> Work
where
    F: for<'t> Fn(&'t DatabaseTransaction) -> BoxFuture<'t, Result<(), StoreError>>
        + Send
        + Sync
        + 'static,
{
    Box::new(f)
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
    tx: mpsc::Sender<Job>,
    taken: Arc<Taken>,
}

/// What the writer has taken into transactions.
#[derive(Debug, Default)]
struct Taken {
    transactions: AtomicU64,
    writes: AtomicU64,
    /// Writes tried again alone.
    alone: AtomicU64,
}

struct Job {
    client_id: String,
    fence: i64,
    deleted: Arc<Deleted>,
    work: Work,
    reply: oneshot::Sender<Result<(), Failure>>,
}

impl Writer {
    /// The writer for `db`'s device stores. Its task ends when the last
    /// clone is dropped.
    pub(crate) fn spawn(db: &Db) -> Writer {
        let (tx, rx) = mpsc::channel(QUEUE);
        let taken = Arc::<Taken>::default();
        tokio::spawn(run(db.clone(), rx, Arc::clone(&taken)));
        Writer { tx, taken }
    }

    /// Queues `work` behind the writes queued before it; the answer comes
    /// once its transaction committed (or it was refused or failed).
    pub(super) async fn write(
        &self,
        client_id: &str,
        fence: i64,
        deleted: &Arc<Deleted>,
        work: Work,
    ) -> Result<(), Failure> {
        let (reply, answer) = oneshot::channel();
        let job = Job {
            client_id: client_id.to_string(),
            fence,
            deleted: Arc::clone(deleted),
            work,
            reply,
        };
        self.tx.send(job).await.map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }

    /// Transactions the writer began, and the writes they took.
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

async fn run(db: Db, mut rx: mpsc::Receiver<Job>, taken: Arc<Taken>) {
    let mut jobs = Vec::with_capacity(MAX_BATCH);
    let mut company = Company::new(COMPANY);
    while rx.recv_many(&mut jobs, MAX_BATCH).await > 0 {
        company.gather(&mut rx, &mut jobs, MAX_BATCH).await;
        let batch: Vec<Job> = std::mem::take(&mut jobs);
        taken.transactions.fetch_add(1, Ordering::SeqCst);
        taken.writes.fetch_add(batch.len() as u64, Ordering::SeqCst);
        write(&db, &taken, batch).await;
    }
}

/// Writes one batch and answers each of its writes.
async fn write(db: &Db, taken: &Taken, jobs: Vec<Job>) {
    let alone = jobs.len() == 1;
    match attempt(db, &jobs).await {
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
                alone_now(db, taken, job).await;
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
                alone_now(db, taken, job).await;
            }
        }
    }
}

/// Writes `job` in a transaction of its own, and answers it.
async fn alone_now(db: &Db, taken: &Taken, job: Job) {
    taken.alone.fetch_add(1, Ordering::SeqCst);
    let outcome = match attempt(db, std::slice::from_ref(&job)).await {
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

/// Writes `jobs` in one transaction: what became of each, or why the whole
/// batch failed (then nothing of it was written). The sessions' rows are
/// locked until the commit on PostgreSQL (a new owner's fence waits for
/// it), the whole database by `BEGIN IMMEDIATE` on SQLite.
async fn attempt(db: &Db, jobs: &[Job]) -> Result<Vec<Outcome>, StoreError> {
    let txn = begin_locked(db).await?;
    let mut ids: Vec<&str> = jobs.iter().map(|j| j.client_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut fences = sessions::Entity::find()
        .select_only()
        .column(sessions::Column::ClientId)
        .column(sessions::Column::Fence)
        .filter(sessions::Column::ClientId.is_in(ids));
    // PostgreSQL: a batch skips the rows others hold; alone, it waits.
    let skipping = jobs.len() > 1 && db.backend() == "postgres";
    if skipping {
        fences = fences.lock_with_behavior(LockType::Update, LockBehavior::SkipLocked);
    } else {
        fences = fences.lock_exclusive();
    }
    let fences: HashMap<String, i64> = fences
        .into_tuple()
        .all(&txn)
        .await
        .map_err(db_err)?
        .into_iter()
        .collect();
    let mut outcomes = Vec::with_capacity(jobs.len());
    for job in jobs {
        let stored = fences.get(&job.client_id).copied();
        // Read under the lock: a deletion marked before it refuses the
        // write, one marked later waits for the commit.
        let outcome = match (stored, refusal_of(job, stored)) {
            // A session missing from a batch's rows may exist, held.
            (None, _) if skipping => Outcome::Later,
            (_, Some(refusal)) => Outcome::Refused(refusal),
            (_, None) => {
                (job.work)(&txn).await?;
                Outcome::Written
            }
        };
        outcomes.push(outcome);
    }
    commit(txn).await?;
    Ok(outcomes)
}

/// Why `job` may not write, with its session's stored fence.
fn refusal_of(job: &Job, stored: Option<i64>) -> Option<FenceRejected> {
    let client_id = job.client_id.clone();
    match stored {
        None => Some(FenceRejected::NoSession { client_id }),
        Some(stored) if stored > job.fence => Some(FenceRejected::Stale {
            client_id,
            ours: job.fence,
            stored,
        }),
        Some(_) => job.deleted.refusal(&job.client_id),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use parley_shared::db::testing::TestDb;
    use parley_shared::db::{NewSession, StatePatch};
    use sea_orm::{ActiveModelTrait, ConnectionTrait, Set};
    use tokio::sync::Semaphore;

    use super::*;
    use crate::store::tables::signal::sessions as rows;

    /// Inserts a row named `address` for `client_id`; with `fail`, then a
    /// statement the database refuses.
    fn insert(client_id: &str, address: &str, fail: bool) -> Work {
        let (client_id, address) = (client_id.to_string(), address.to_string());
        work(move |txn| {
            let row = rows::ActiveModel {
                client_id: Set(client_id.clone()),
                address: Set(address.clone()),
                record: Set(vec![1]),
            };
            Box::pin(async move {
                row.insert(txn).await.map_err(db_err)?;
                if fail {
                    txn.execute_unprepared("INSERT INTO no_such_table VALUES (1)")
                        .await
                        .map_err(db_err)?;
                }
                Ok(())
            })
        })
    }

    /// Waits for a permit of `gate`, then inserts as [`insert`].
    fn gated(gate: &Arc<Semaphore>, client_id: &str, address: &str) -> Work {
        let (gate, inner) = (Arc::clone(gate), insert(client_id, address, false));
        let inner = Arc::new(inner);
        work(move |txn| {
            let (gate, inner) = (Arc::clone(&gate), Arc::clone(&inner));
            Box::pin(async move {
                drop(gate.acquire().await);
                (*inner)(txn).await
            })
        })
    }

    /// Sessions `ids`, owned under fence 2.
    async fn owned(db: &Db, ids: &[&str]) {
        for id in ids {
            let new = NewSession {
                client_id: (*id).into(),
                ..NewSession::default()
            };
            db.create_session(new).await.expect("session");
            assert!(
                db.fenced_update(id, 2, StatePatch::default())
                    .await
                    .expect("claim")
            );
        }
    }

    async fn addresses(db: &Db) -> Vec<String> {
        let mut all: Vec<String> = rows::Entity::find()
            .all(db.conn())
            .await
            .expect("read")
            .into_iter()
            .map(|r| format!("{}/{}", r.client_id, r.address))
            .collect();
        all.sort();
        all
    }

    async fn until(what: &str, done: impl Fn() -> bool) {
        tokio::time::timeout(Duration::from_secs(10), async {
            while !done() {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        })
        .await
        .unwrap_or_else(|_| panic!("{what}"));
    }

    type Answer = tokio::task::JoinHandle<Result<(), Failure>>;

    /// A writer busy with a first write (session `a`, fence 2) until
    /// [`Stalled::release`]: the writes queued meanwhile go in one batch.
    struct Stalled {
        writer: Writer,
        gate: Arc<Semaphore>,
        first: Option<Answer>,
    }

    impl Stalled {
        async fn new(db: &Db) -> Stalled {
            let mut stalled = Stalled {
                writer: Writer::spawn(db),
                gate: Arc::new(Semaphore::new(0)),
                first: None,
            };
            let first = gated(&stalled.gate, "a", "first");
            stalled.first = Some(stalled.queue("a", 2, &Arc::default(), first));
            until("the first batch begins", || {
                stalled.writer.taken() == (1, 1)
            })
            .await;
            stalled
        }

        fn queue(
            &self,
            client_id: &'static str,
            fence: i64,
            deleted: &Arc<Deleted>,
            work: Work,
        ) -> Answer {
            let (writer, deleted) = (self.writer.clone(), Arc::clone(deleted));
            tokio::spawn(async move { writer.write(client_id, fence, &deleted, work).await })
        }

        /// Lets the first write commit once `queued` writes wait behind it.
        async fn release(&mut self, queued: usize) {
            let tx = &self.writer.tx;
            until("the writes queued", || {
                tx.max_capacity() - tx.capacity() == queued
            })
            .await;
            self.gate.add_permits(1);
            let first = self.first.take().expect("released once");
            assert!(first.await.expect("join").is_ok());
        }

        fn alone(&self) -> u64 {
            self.writer.taken.alone.load(Ordering::SeqCst)
        }
    }

    /// A batch of five writes: one fails, one is a stale owner's, one a
    /// forgotten store's; only the failing and the refused ones are not
    /// written, each with its own answer.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_that_fails_or_is_refused_fails_alone_in_its_batch() {
        let test = TestDb::sqlite().await;
        let db = test.db.clone();
        owned(&db, &["a", "b", "c"]).await;
        let mut w = Stalled::new(&db).await;
        let (live, forgotten) = (Arc::new(Deleted::default()), Arc::new(Deleted::default()));
        forgotten.mark(Deleted::FORGOTTEN);
        let good = w.queue("b", 2, &live, insert("b", "good", false));
        let failing = w.queue("a", 2, &live, insert("a", "failing", true));
        let stale = w.queue("c", 1, &live, insert("c", "stale", false));
        let gone = w.queue("c", 2, &forgotten, insert("c", "gone", false));
        let later = w.queue("c", 2, &live, insert("c", "later", false));
        w.release(5).await;

        assert!(good.await.expect("join").is_ok());
        assert!(matches!(
            failing.await.expect("join"),
            Err(Failure::Failed(_))
        ));
        assert!(matches!(
            stale.await.expect("join"),
            Err(Failure::Refused(FenceRejected::Stale {
                ours: 1,
                stored: 2,
                ..
            }))
        ));
        assert!(matches!(
            gone.await.expect("join"),
            Err(Failure::Refused(FenceRejected::Forgotten { .. }))
        ));
        assert!(later.await.expect("join").is_ok());
        assert_eq!(
            w.writer.taken(),
            (2, 6),
            "the five queued writes went in one batch"
        );
        assert_eq!(w.alone(), 5, "then each alone");
        assert_eq!(addresses(&db).await, ["a/first", "b/good", "c/later"]);
        drop(w);
        test.finish().await;
    }

    /// PostgreSQL: a batch does not wait for a session's row another
    /// transaction holds. It writes the rest, and that write waits alone;
    /// the holder may then lock a row the batch had (as the event log's
    /// writer does, many rows in one statement) without a deadlock.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batch_on_postgresql_passes_over_a_row_another_transaction_holds() {
        let test = TestDb::postgres().await;
        let db = test.db.clone();
        owned(&db, &["a", "b", "x"]).await;
        let mut w = Stalled::new(&db).await;
        let live = Arc::new(Deleted::default());
        let (holder, _) = crate::store::fence::locked(&db, "x").await.expect("hold x");
        let b = w.queue("b", 2, &live, insert("b", "batched", false));
        let x = w.queue("x", 2, &live, insert("x", "waited", false));
        w.release(2).await;

        let b = tokio::time::timeout(Duration::from_secs(10), b)
            .await
            .expect("the batch's other write commits while x is held");
        assert!(b.expect("join").is_ok());
        assert_eq!(w.writer.taken(), (2, 3), "b and x were one batch");
        assert!(!x.is_finished(), "x's write waits for its row");
        // What would deadlock had the batch waited for x holding b.
        let (other, _) = crate::store::fence::locked(&db, "b").await.expect("lock b");
        other.commit().await.expect("commit");
        holder.commit().await.expect("release x");
        assert!(x.await.expect("join").is_ok());
        assert_eq!(w.alone(), 1, "x alone");
        assert_eq!(addresses(&db).await, ["a/first", "b/batched", "x/waited"]);
        drop(w);
        test.finish().await;
    }

    /// The database out of reach: every write of the batch is answered at
    /// once with a connection error, none tried again alone (each would
    /// wait for a connection in turn).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batch_that_cannot_reach_the_database_fails_every_write_at_once() {
        let test = TestDb::sqlite().await;
        let db = test.db.clone();
        owned(&db, &["a", "b"]).await;
        let mut w = Stalled::new(&db).await;
        let live = Arc::new(Deleted::default());
        let queued = [
            w.queue("a", 2, &live, insert("a", "one", false)),
            w.queue("b", 2, &live, insert("b", "two", false)),
        ];
        let closing = tokio::spawn({
            let db = db.clone();
            async move { db.conn().close_by_ref().await }
        });
        w.release(2).await;
        closing.await.expect("join").expect("closed");
        for write in queued {
            let outcome = write.await.expect("join");
            assert!(
                matches!(outcome, Err(Failure::Failed(StoreError::Connection(_)))),
                "a connection error"
            );
        }
        assert_eq!(w.writer.taken(), (2, 3));
        assert_eq!(w.alone(), 0);
        drop(w);
        test.finish().await;
    }
}
