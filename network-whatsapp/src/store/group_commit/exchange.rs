//! PostgreSQL: a batch in one exchange on the writer's own connection, its
//! values written into the text (`parley_shared::db::literal`): one call of
//! `parley_device_batch` (migration m0030), which locks the batch's
//! sessions' rows and then runs its statements, given as texts, in the
//! call's implicit transaction. It writes nothing and answers `false` when
//! a session is gone, a newer owner's fence is stored, or (a batch of
//! several writes) another transaction holds a session's row; a write of a
//! store whose deletion was marked does not try it. Such a batch goes in
//! two exchanges, which answer each write: `BEGIN` with the locking read of
//! the fences, then the statements of the writes they admit with the
//! `COMMIT`. A refusal is an answer, not an error: the server logs an
//! error with its statement's text, here the values written into it. With
//! bound values each statement, the `BEGIN` and the `COMMIT` was an
//! exchange of its own (a batch of one write about five), and the pool's
//! hand-over and return of a connection two more hand-offs between tasks.
//! A batch whose values cannot all be written so goes with bound values in
//! a transaction of the pool's (`attempt::locking`).
//!
//! A deletion of a store's state marks it, then waits for the writes queued
//! before ([`super::Writer::settled`]): a write whose one exchange checked
//! the mark before it was set commits before the deletion takes the row.
//!
//! The connection is opened from the database's pool and then held apart
//! from it (not counted in its size, so the pool may open one more) for as
//! long as the writer runs; it is given up when an exchange fails and its
//! `ROLLBACK` fails too, and the next batch opens another. A batch whose
//! first exchange fails on a connection held from before (cut while idle,
//! the server restarted) is tried once more on a new one: nothing of it
//! was written.
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures::StreamExt;
use sea_orm::sqlx::Either;

use parley_shared::db::Db;
use parley_shared::db::literal::literal_text;
use sea_orm::sea_query::{LockBehavior, LockType};
use sea_orm::sqlx::postgres::PgConnection;
use sea_orm::sqlx::{self, AssertSqlSafe, Connection, Row};
use sea_orm::{DbBackend, QuerySelect, QueryTrait, Statement};
use whatsapp_rust::wacore::store::error::StoreError;

use super::attempt::{fences, locking, outcomes, statements};
use super::{Job, Outcome, Taken};

/// The writer's own connection, opened at its first batch.
pub(super) struct Link {
    db: Db,
    conn: Option<PgConnection>,
    taken: Arc<Taken>,
}

/// Why a try went no further.
enum Stop {
    /// The statements' values cannot all be written into the text; nothing
    /// was sent, or the transaction begun was rolled back.
    Unwritable,
    /// Failed with nothing written: the first of two exchanges, or one
    /// that the server answered with an error (or ended before answering
    /// any of its statements).
    Read(StoreError),
    /// Failed when something may have been written.
    Write(StoreError),
}

impl Link {
    pub(super) fn new(db: Db, taken: Arc<Taken>) -> Link {
        Link {
            db,
            conn: None,
            taken,
        }
    }

    /// Writes `jobs` in one transaction: what became of each, or why the
    /// whole batch failed (then nothing of it was written).
    pub(super) async fn attempt(&mut self, jobs: &[Job]) -> Result<Vec<Outcome>, StoreError> {
        let held_before = self.conn.is_some();
        let mut tried = self.exchanges(jobs).await;
        if held_before && self.conn.is_none() && matches!(tried, Err(Stop::Read(_))) {
            tried = self.exchanges(jobs).await;
        }
        match tried {
            Ok(outcomes) => Ok(outcomes),
            Err(Stop::Unwritable) => locking(&self.db, jobs).await,
            Err(Stop::Read(e) | Stop::Write(e)) => Err(e),
        }
    }

    /// Closes the connection (the writer ends).
    pub(super) async fn close(mut self) {
        if let Some(conn) = self.conn.take() {
            let _ = conn.close().await;
        }
    }

    async fn exchanges(&mut self, jobs: &[Job]) -> Result<Vec<Outcome>, Stop> {
        match self.one_exchange(jobs).await? {
            Some(outcomes) => Ok(outcomes),
            None => self.two_exchanges(jobs).await,
        }
    }

    /// Every write of the batch in one exchange, after the check of its
    /// fences; `None` when the check refused it or a store's deletion is
    /// marked (nothing was written).
    async fn one_exchange(&mut self, jobs: &[Job]) -> Result<Option<Vec<Outcome>>, Stop> {
        if jobs
            .iter()
            .any(|j| j.deleted.refusal(&j.client_id).is_some())
        {
            return Ok(None);
        }
        let Some(call) = batch_call(jobs) else {
            return Err(Stop::Unwritable);
        };
        let conn = self.open().await.map_err(Stop::Read)?;
        let mut answers = sqlx::raw_sql(AssertSqlSafe(call)).fetch_many(conn);
        let (mut answered, mut admitted) = (0usize, None);
        let failure = loop {
            match answers.next().await {
                None => break None,
                Some(Ok(answer)) => {
                    answered += 1;
                    if let Either::Right(row) = answer {
                        match row.try_get::<bool, _>(0) {
                            Ok(read) => admitted = Some(read),
                            Err(e) => break Some(e),
                        }
                    }
                }
                Some(Err(e)) => break Some(e),
            }
        };
        drop(answers);
        match (failure, admitted) {
            (None, Some(true)) => Ok(Some(jobs.iter().map(|_| Outcome::Written).collect())),
            (None, _) => {
                self.taken.refused_checks.fetch_add(1, Ordering::SeqCst);
                Ok(None)
            }
            (Some(e), _) => {
                // The commit comes before the call's last answer: with no
                // answer yet, or the server's error (which ends the
                // transaction), nothing was written. A connection lost
                // after an answer may have committed.
                let rolled_back = answered == 0 || !is_unreachable(&e);
                let e = self.failed(e).await;
                match rolled_back {
                    true => Err(Stop::Read(e)),
                    false => Err(Stop::Write(e)),
                }
            }
        }
    }

    /// `BEGIN` with the locking read of the fences, then the writes they
    /// admit with the `COMMIT`.
    async fn two_exchanges(&mut self, jobs: &[Job]) -> Result<Vec<Outcome>, Stop> {
        // A batch skips the rows others hold; alone, it waits.
        let skipping = jobs.len() > 1;
        let read = match skipping {
            true => fences(jobs).lock_with_behavior(LockType::Update, LockBehavior::SkipLocked),
            false => fences(jobs).lock_exclusive(),
        };
        let begin = Statement::from_string(DbBackend::Postgres, "BEGIN");
        let Some(read) = literal_text([begin, read.build(DbBackend::Postgres)]) else {
            return Err(Stop::Unwritable);
        };
        let conn = self.open().await.map_err(Stop::Read)?;
        let rows = match sqlx::raw_sql(AssertSqlSafe(read)).fetch_all(conn).await {
            Ok(rows) => rows,
            Err(e) => return Err(Stop::Read(self.failed(e).await)),
        };
        let mut fences = HashMap::with_capacity(rows.len());
        for row in rows {
            let read = row
                .try_get::<String, _>("client_id")
                .and_then(|id| Ok((id, row.try_get::<i64, _>("fence")?)));
            match read {
                Ok((client_id, fence)) => fences.insert(client_id, fence),
                Err(e) => return Err(Stop::Read(self.failed(e).await)),
            };
        }
        let outcomes = outcomes(jobs, &fences, skipping);
        let commit = Statement::from_string(DbBackend::Postgres, "COMMIT");
        let written = statements(DbBackend::Postgres, jobs, &outcomes).chain([commit]);
        let Some(write) = literal_text(written) else {
            self.roll_back().await;
            return Err(Stop::Unwritable);
        };
        // The connection of the read, in its transaction (never a new one).
        let Some(conn) = self.conn.as_mut() else {
            return Err(Stop::Write(StoreError::Connection(
                "connection lost".into(),
            )));
        };
        if let Err(e) = sqlx::raw_sql(AssertSqlSafe(write)).execute(conn).await {
            return Err(Stop::Write(self.failed(e).await));
        }
        Ok(outcomes)
    }

    /// The connection, opened from the pool if there is none.
    async fn open(&mut self) -> Result<&mut PgConnection, StoreError> {
        let conn = match self.conn.take() {
            Some(conn) => conn,
            None => {
                let pool = self.db.conn().get_postgres_connection_pool();
                pool.acquire().await.map_err(store_error)?.detach()
            }
        };
        Ok(self.conn.insert(conn))
    }

    /// Rolls back after `e`, which is returned as the store's error.
    async fn failed(&mut self, e: sqlx::Error) -> StoreError {
        self.roll_back().await;
        store_error(e)
    }

    /// Ends the transaction the connection may be in; gives the connection
    /// up if that fails.
    async fn roll_back(&mut self) {
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        if sqlx::raw_sql("ROLLBACK").execute(&mut *conn).await.is_err() {
            self.conn = None;
        }
    }
}

/// The call that checks `jobs`' fences and runs their statements, as text
/// with every value written in; `None` when a value cannot be written so.
/// Each session is checked once, in order, with the oldest fence its
/// writes were made under (so a newer owner's fence refuses the batch if it
/// refuses any of them).
fn batch_call(jobs: &[Job]) -> Option<String> {
    let mut oldest: BTreeMap<&str, i64> = BTreeMap::new();
    for job in jobs {
        oldest
            .entry(job.client_id.as_str())
            .and_modify(|fence| *fence = (*fence).min(job.fence))
            .or_insert(job.fence);
    }
    let (ids, fences): (Vec<&str>, Vec<i64>) = oldest.into_iter().unzip();
    let mut writes = Vec::new();
    for statement in jobs.iter().flat_map(|job| (job.work)(DbBackend::Postgres)) {
        let text = literal_text([statement])?;
        writes.push(text.strip_suffix(';').unwrap_or(&text).to_string());
    }
    let mut values: Vec<sea_orm::Value> = Vec::new();
    let mut marks = |items: Vec<sea_orm::Value>| {
        let from = values.len() + 1;
        let marks: Vec<String> = (from..from + items.len())
            .map(|i| format!("${i}"))
            .collect();
        values.extend(items);
        marks.join(", ")
    };
    let ids = marks(ids.into_iter().map(Into::into).collect());
    let fences = marks(fences.into_iter().map(Into::into).collect());
    // A batch skips the rows others hold; alone, it waits.
    let skipping = marks(vec![(jobs.len() > 1).into()]);
    let writes = marks(writes.into_iter().map(Into::into).collect());
    let sql = format!(
        "SELECT parley_device_batch(ARRAY[{ids}]::text[], ARRAY[{fences}]::bigint[], \
         {skipping}, ARRAY[{writes}]::text[])"
    );
    let call = Statement::from_sql_and_values(DbBackend::Postgres, sql, values);
    literal_text([call])
}

/// Whether `e` says the server is out of reach (or ended the connection).
fn is_unreachable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|code| code.starts_with("08") || code.starts_with("57P")),
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        _ => false,
    }
}

/// sqlx's error as the store's: out of reach, or the database's answer.
fn store_error(e: sqlx::Error) -> StoreError {
    match is_unreachable(&e) {
        true => StoreError::Connection(Box::new(e)),
        false => StoreError::Database(Box::new(e)),
    }
}
