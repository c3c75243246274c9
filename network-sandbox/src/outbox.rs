//! The outbox writer: what sessions put on the simulated network lands in the
//! outbox through one task that takes every record queued at that moment,
//! checks the armed faults of their sessions with one query and inserts the
//! rest with one statement. Alone, a record costs what it did before (two
//! statements); under load the statements per send fall with the batch size,
//! and a lone record waits up to 3 ms for the next two ([`Company`]).
//!
//! A record whose session has a fault armed for its operation uses the fault up
//! (atomically, as before) and is not written: the send fails, the outbox shows
//! nothing. Only sessions that may have faults armed (see `suspects`) are asked
//! about, so a plain send costs one statement.
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use parley_shared::db::company::Company;
use tokio::sync::{OnceCell, mpsc, oneshot};

use crate::store::NewOutboxEntry;
use crate::store::Store;

use super::suspects::Suspects;

/// Most records written by one statement.
const MAX_BATCH: usize = 256;
/// Records that may wait for the writer before senders wait to queue.
const QUEUE: usize = 4096;
/// The longest a record waits for company under load (see [`Company`]).
const COMPANY: Duration = Duration::from_millis(3);

/// What became of one record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Recorded {
    /// In the outbox.
    Written,
    /// An armed fault of the operation was used up; nothing was written.
    Faulted,
}

struct Job {
    entry: NewOutboxEntry,
    fault: &'static str,
    done: oneshot::Sender<Result<Recorded, String>>,
}

/// The handle senders queue records on; the task starts with the first record
/// (inside the runtime) and ends when the network is dropped.
#[derive(Clone)]
pub(super) struct OutboxWriter {
    db: Store,
    suspects: Arc<Suspects>,
    queue: Arc<OnceCell<mpsc::Sender<Job>>>,
}

impl OutboxWriter {
    pub fn new(db: Store, suspects: Arc<Suspects>) -> OutboxWriter {
        OutboxWriter {
            db,
            suspects,
            queue: Arc::new(OnceCell::new()),
        }
    }

    /// Writes `entry` unless a fault of `fault` is armed for its session.
    pub async fn record(
        &self,
        entry: NewOutboxEntry,
        fault: &'static str,
    ) -> Result<Recorded, String> {
        let queue = self
            .queue
            .get_or_init(|| async {
                let (tx, rx) = mpsc::channel(QUEUE);
                tokio::spawn(run(self.db.clone(), Arc::clone(&self.suspects), rx));
                tx
            })
            .await;
        let (done, answer) = oneshot::channel();
        let job = Job { entry, fault, done };
        if queue.send(job).await.is_err() {
            return Err("the sandbox outbox writer stopped".into());
        }
        answer
            .await
            .unwrap_or_else(|_| Err("the sandbox outbox writer stopped".into()))
    }
}

async fn run(db: Store, suspects: Arc<Suspects>, mut queue: mpsc::Receiver<Job>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    let mut company = Company::new(COMPANY);
    while queue.recv_many(&mut batch, MAX_BATCH).await > 0 {
        company.gather(&mut queue, &mut batch, MAX_BATCH).await;
        write(&db, &suspects, std::mem::take(&mut batch)).await;
    }
}

/// Answers every job of `jobs`.
async fn write(db: &Store, suspects: &Suspects, jobs: Vec<Job>) {
    let asked: HashMap<&str, u64> = jobs
        .iter()
        .filter_map(|j| {
            let client = j.entry.client_id.as_str();
            Some((client, suspects.stamp(client)?))
        })
        .collect();
    let armed: HashSet<(String, String)> = match armed_among(db, &asked).await {
        Ok(armed) => armed,
        Err(error) => {
            for job in jobs {
                let _ = job.done.send(Err(error.clone()));
            }
            return;
        }
    };
    for (client, stamp) in &asked {
        if !armed.iter().any(|(c, _)| c == client) {
            suspects.clear(client, *stamp);
        }
    }
    let mut writes = Vec::with_capacity(jobs.len());
    for job in jobs {
        let key = (job.entry.client_id.clone(), job.fault.to_string());
        if armed.contains(&key) {
            match db.consume_fault(&key.0, job.fault).await {
                Ok(true) => {
                    let _ = job.done.send(Ok(Recorded::Faulted));
                    continue;
                }
                Ok(false) => {}
                Err(e) => {
                    let _ = job.done.send(Err(e.to_string()));
                    continue;
                }
            }
        }
        writes.push(job);
    }
    insert(db, writes).await;
}

/// The `(clientId, op)` pairs armed among the sessions `asked` about.
async fn armed_among(
    db: &Store,
    asked: &HashMap<&str, u64>,
) -> Result<HashSet<(String, String)>, String> {
    if asked.is_empty() {
        return Ok(HashSet::new());
    }
    let clients: Vec<&str> = asked.keys().copied().collect();
    match db.armed_faults(&clients).await {
        Ok(armed) => Ok(armed.into_iter().collect()),
        Err(e) => Err(e.to_string()),
    }
}

/// One statement for all; when it fails, one each, so one bad record does not
/// fail the others.
async fn insert(db: &Store, jobs: Vec<Job>) {
    if jobs.is_empty() {
        return;
    }
    let entries = jobs.iter().map(|j| j.entry.clone()).collect();
    match db.record_outbox_many(entries).await {
        Ok(()) => {
            for job in jobs {
                let _ = job.done.send(Ok(Recorded::Written));
            }
        }
        Err(e) if jobs.len() == 1 => {
            for job in jobs {
                let _ = job.done.send(Err(e.to_string()));
            }
        }
        Err(e) => {
            tracing::debug!(error = %e, records = jobs.len(), "sandbox outbox batch failed; writing one by one");
            for job in jobs {
                let result = db.record_outbox(job.entry).await;
                let _ = job.done.send(
                    result
                        .map(|()| Recorded::Written)
                        .map_err(|e| e.to_string()),
                );
            }
        }
    }
}
