//! PostgreSQL: a batch in two exchanges on the writer's own connection,
//! its values written into the text (`parley_shared::db::literal`): `BEGIN`
//! with the locking read of the fences, then every statement of the batch
//! with the `COMMIT`. With bound values each statement, the `BEGIN` and the
//! `COMMIT` was an exchange of its own (a batch of one write about five),
//! and the pool's hand-over and return of a connection two more hand-offs
//! between tasks. A batch whose values cannot all be written so goes with
//! bound values in a transaction of the pool's (`attempt::locking`).
//!
//! The connection is opened from the database's pool and then held apart
//! from it (not counted in its size, so the pool may open one more) for as
//! long as the writer runs; it is given up when an exchange fails and its
//! `ROLLBACK` fails too, and the next batch opens another. A batch whose
//! first exchange fails on a connection held from before (cut while idle,
//! the server restarted) is tried once more on a new one: nothing of it
//! was written.
use std::collections::HashMap;

use parley_shared::db::Db;
use parley_shared::db::literal::literal_text;
use sea_orm::sea_query::{LockBehavior, LockType};
use sea_orm::sqlx::postgres::PgConnection;
use sea_orm::sqlx::{self, AssertSqlSafe, Connection, Row};
use sea_orm::{DbBackend, QuerySelect, QueryTrait, Statement};
use whatsapp_rust::wacore::store::error::StoreError;

use super::Job;
use super::Outcome;
use super::attempt::{fences, locking, outcomes, statements};

/// The writer's own connection, opened at its first batch.
pub(super) struct Link {
    db: Db,
    conn: Option<PgConnection>,
}

/// Why a try went no further.
enum Stop {
    /// The statements' values cannot all be written into the text; the
    /// transaction was rolled back.
    Unwritable,
    /// The first exchange failed: nothing was written.
    Read(StoreError),
    /// A later one failed.
    Write(StoreError),
}

impl Link {
    pub(super) fn new(db: Db) -> Link {
        Link { db, conn: None }
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

/// sqlx's error as the store's: out of reach, or the database's answer.
fn store_error(e: sqlx::Error) -> StoreError {
    let unreachable = match &e {
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
    };
    match unreachable {
        true => StoreError::Connection(Box::new(e)),
        false => StoreError::Database(Box::new(e)),
    }
}
