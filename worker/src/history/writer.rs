//! The batching writer: callers hand over their writes and await the outcome;
//! one task drains what has queued up and writes it in one transaction.
use parley_shared::db::history::{Write, Written};
use parley_shared::db::{Db, DbError};
use tokio::sync::{mpsc, oneshot};

/// Writes queued before callers wait for room (bounded: memory stays flat).
const QUEUE: usize = 4096;
/// Jobs written in one transaction at most.
const BATCH: usize = 512;

type Reply = oneshot::Sender<Result<Vec<Written>, DbError>>;

struct Job {
    writes: Vec<Write>,
    reply: Reply,
}

/// The handle of the writer task; the task ends when the last handle is dropped.
#[derive(Clone)]
pub struct Writer {
    tx: mpsc::Sender<Job>,
}

impl Writer {
    /// Spawns the task on the current Tokio runtime.
    pub fn spawn(db: Db) -> Writer {
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(run(db, rx));
        Writer { tx }
    }

    /// Queues `writes` and waits until they are committed (or failed).
    pub async fn write(&self, writes: Vec<Write>) -> Result<Vec<Written>, DbError> {
        let (reply, answer) = oneshot::channel();
        let gone = || DbError::Unavailable("the history writer stopped".into());
        self.tx
            .send(Job { writes, reply })
            .await
            .map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}

async fn run(db: Db, mut rx: mpsc::Receiver<Job>) {
    let mut jobs: Vec<Job> = Vec::with_capacity(BATCH);
    while rx.recv_many(&mut jobs, BATCH).await > 0 {
        write_batch(&db, std::mem::take(&mut jobs)).await;
    }
}

/// One transaction for the whole batch; when it fails, each job alone, so one
/// bad write does not fail the others.
async fn write_batch(db: &Db, jobs: Vec<Job>) {
    let lens: Vec<usize> = jobs.iter().map(|j| j.writes.len()).collect();
    let mut replies = Vec::with_capacity(jobs.len());
    let mut all = Vec::with_capacity(lens.iter().sum());
    for job in jobs {
        all.extend(job.writes);
        replies.push(job.reply);
    }
    match db.history_write(&all).await {
        Ok(out) => {
            let mut out = out.into_iter();
            for (reply, len) in replies.into_iter().zip(lens) {
                let _ = reply.send(Ok(out.by_ref().take(len).collect()));
            }
        }
        Err(e) if replies.len() == 1 => {
            for reply in replies {
                let _ = reply.send(Err(e.clone()));
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, jobs = replies.len(), "history batch failed; writing one by one");
            let mut all = all.into_iter();
            for (reply, len) in replies.into_iter().zip(lens) {
                let writes: Vec<Write> = all.by_ref().take(len).collect();
                let _ = reply.send(db.history_write(&writes).await);
            }
        }
    }
}
