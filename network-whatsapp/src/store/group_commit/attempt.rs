//! One try at a batch: its transaction, the read of its sessions' fences
//! under the write lock, each write's statements or its refusal, the commit.
//!
//! PostgreSQL: one exchange on the writer's own connection, or two when
//! the check of the fences refuses the batch (`exchange.rs`); a batch
//! locks its sessions' rows (`FOR UPDATE`), skipping those another
//! transaction holds, which then go alone. SQLite:
//! the writer's own connection, in two calls: `BEGIN IMMEDIATE` (the
//! database's one write lock) with the read, then every statement of the
//! batch with the `COMMIT`.
use std::collections::HashMap;
use std::sync::Arc;

use parley_shared::db::Db;
use parley_shared::db::entities::sessions;
use parley_shared::db::joined::joined;
use sea_orm::sea_query::{LockBehavior, LockType};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, QueryFilter, QuerySelect, QueryTrait,
    Select, Statement,
};
use whatsapp_rust::wacore::store::error::StoreError;

use super::exchange::Link;
use super::{Job, Outcome, Taken};
use crate::store::Deleted;
use crate::store::error::{FenceRejected, db_err};
use crate::store::fence::{begin_locked, commit};

/// Where a writer's batches go.
pub(super) enum Target {
    /// Its own connection to PostgreSQL.
    Postgres(Link),
    /// A pool of one SQLite connection, which a transaction's calls share.
    Sqlite(Db),
}

impl Target {
    pub(super) fn new(db: Db, taken: Arc<Taken>) -> Target {
        match db.conn().get_database_backend() {
            DbBackend::Postgres => Target::Postgres(Link::new(db, taken)),
            _ => Target::Sqlite(db),
        }
    }

    /// Writes `jobs` in one transaction: what became of each, or why the
    /// whole batch failed (then nothing of it was written). The sessions'
    /// rows are locked until the commit on PostgreSQL (a new owner's fence
    /// waits for it), the whole database by `BEGIN IMMEDIATE` on SQLite.
    pub(super) async fn attempt(&mut self, jobs: &[Job]) -> Result<Vec<Outcome>, StoreError> {
        match self {
            Target::Postgres(link) => link.attempt(jobs).await,
            Target::Sqlite(db) => riding(db, jobs).await,
        }
    }

    /// Lets go of the target's connection (the writer ends).
    pub(super) async fn close(self) {
        if let Target::Postgres(link) = self {
            link.close().await;
        }
    }
}

/// PostgreSQL with bound values: a statement an exchange, in a transaction
/// of the pool's.
pub(super) async fn locking(db: &Db, jobs: &[Job]) -> Result<Vec<Outcome>, StoreError> {
    let txn = begin_locked(db).await?;
    let mut fences = fences(jobs);
    // A batch skips the rows others hold; alone, it waits.
    let skipping = jobs.len() > 1;
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
    let outcomes = outcomes(jobs, &fences, skipping);
    for statement in statements(DbBackend::Postgres, jobs, &outcomes) {
        txn.execute_raw(statement).await.map_err(db_err)?;
    }
    commit(txn).await?;
    Ok(outcomes)
}

/// SQLite: the transaction rides in the batch's two calls on the writer's
/// connection; whatever fails rolls it back.
async fn riding(db: &Db, jobs: &[Job]) -> Result<Vec<Outcome>, StoreError> {
    let conn = db.conn();
    let tried = async {
        let read = fences(jobs).build(DbBackend::Sqlite);
        let begin = Statement::from_string(DbBackend::Sqlite, "BEGIN IMMEDIATE");
        let rows = match joined([begin, read]) {
            Some(read) => conn.query_all_raw(read).await.map_err(db_err)?,
            None => Vec::new(),
        };
        let mut fences = HashMap::with_capacity(rows.len());
        for row in rows {
            let client_id: String = row.try_get("", "client_id").map_err(db_err)?;
            let fence: i64 = row.try_get("", "fence").map_err(db_err)?;
            fences.insert(client_id, fence);
        }
        let outcomes = outcomes(jobs, &fences, false);
        let commit = Statement::from_string(DbBackend::Sqlite, "COMMIT");
        let written = statements(DbBackend::Sqlite, jobs, &outcomes).chain([commit]);
        if let Some(written) = joined(written) {
            conn.execute_raw(written).await.map_err(db_err)?;
        }
        Ok(outcomes)
    };
    let tried = tried.await;
    if tried.is_err() {
        // Open if the failure came after the `BEGIN` (else this fails too).
        let _ = conn.execute_unprepared("ROLLBACK").await;
    }
    tried
}

/// The read of the fences of `jobs`' sessions.
pub(super) fn fences(jobs: &[Job]) -> Select<sessions::Entity> {
    let mut ids: Vec<&str> = jobs.iter().map(|j| j.client_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    sessions::Entity::find()
        .select_only()
        .column(sessions::Column::ClientId)
        .column(sessions::Column::Fence)
        .filter(sessions::Column::ClientId.is_in(ids))
}

/// What becomes of each job under the stored `fences`, read under the
/// write lock (a deletion marked before it refuses the write, one marked
/// later waits for the commit). With `skipping`, a session missing from
/// the rows may exist, held by another transaction: its write goes later.
pub(super) fn outcomes(
    jobs: &[Job],
    fences: &HashMap<String, i64>,
    skipping: bool,
) -> Vec<Outcome> {
    jobs.iter()
        .map(|job| {
            let stored = fences.get(&job.client_id).copied();
            match (stored, refusal_of(job, stored)) {
                (None, _) if skipping => Outcome::Later,
                (_, Some(refusal)) => Outcome::Refused(refusal),
                (_, None) => Outcome::Written,
            }
        })
        .collect()
}

/// The statements of the jobs to write, in the order queued.
pub(super) fn statements<'a>(
    backend: DbBackend,
    jobs: &'a [Job],
    outcomes: &'a [Outcome],
) -> impl Iterator<Item = Statement> + 'a {
    jobs.iter()
        .zip(outcomes)
        .filter(|(_, outcome)| matches!(outcome, Outcome::Written))
        .flat_map(move |(job, _)| (job.work)(backend))
}

/// Why `job` may not write, with its session's stored fence.
fn refusal_of(job: &Job, stored: Option<i64>) -> Option<FenceRejected> {
    refusal(&job.client_id, job.fence, &job.deleted, stored)
}

/// Why a write of `client_id`'s store, whose fence is `fence`, may not
/// write: with the session's `stored` fence, read under the write lock,
/// and its store's deletion.
pub(super) fn refusal(
    client_id: &str,
    fence: i64,
    deleted: &Deleted,
    stored: Option<i64>,
) -> Option<FenceRejected> {
    let client_id = client_id.to_string();
    match stored {
        None => Some(FenceRejected::NoSession { client_id }),
        Some(stored) if stored > fence => Some(FenceRejected::Stale {
            client_id,
            ours: fence,
            stored,
        }),
        Some(_) => deleted.refusal(&client_id),
    }
}
