//! A batch's transaction: sea-orm's on PostgreSQL; on SQLite the writer's
//! own connection, with `BEGIN` and `COMMIT` riding in the batch's calls.
use sea_orm::{
    ConnectionTrait, DatabaseConnection, DatabaseTransaction, DbBackend, QueryResult, Statement,
};

use super::batch::trim_rows;
use super::records::Recorded;
use super::{portable, postgres};
use crate::db::entities::events::Model;
use crate::db::{Db, DbError};

/// A batch's transaction. On PostgreSQL sea-orm's, begun and committed
/// on their own. On SQLite, whose every statement is a hand-off to the
/// connection's thread and back, the writer's own connection (a pool of
/// one, `Db::sqlite_writer`): `BEGIN IMMEDIATE` rides with the first
/// statement and `COMMIT` with the writes, so a batch is two hand-offs (one
/// for delivery records alone) instead of four.
pub(super) enum Txn<'a> {
    Begun(DatabaseTransaction),
    Riding {
        conn: &'a DatabaseConnection,
        begun: bool,
    },
    /// Committed.
    Done,
}

impl<'a> Txn<'a> {
    pub(super) async fn begin(db: &'a Db) -> Result<Txn<'a>, DbError> {
        Ok(match db.conn().get_database_backend() {
            DbBackend::Postgres => Txn::Begun(db.begin_write().await?),
            _ => Txn::Riding {
                conn: db.conn(),
                begun: false,
            },
        })
    }

    /// The sessions' rows and the logged ids among `ids` (see `lock_owners`).
    pub(super) async fn lock(
        &mut self,
        clients: &[&str],
        ids: &[&str],
    ) -> Result<(Vec<QueryResult>, Vec<String>), DbError> {
        match self {
            Txn::Begun(txn) => postgres::lock(txn, clients, ids).await,
            Txn::Riding { conn, begun } => {
                *begun = true;
                portable::lock(conn, clients, ids).await
            }
            Txn::Done => Err(DbError::Unavailable("the batch committed already".into())),
        }
    }

    /// Deletes `client_id`'s events at least `cap` before `at` that need
    /// nothing more.
    pub(super) async fn trim_rows(
        &self,
        client_id: &str,
        at: i64,
        cap: i64,
    ) -> Result<(), DbError> {
        match self {
            Txn::Begun(txn) => trim_rows(txn, client_id, at, cap).await,
            Txn::Riding { conn, .. } => trim_rows(*conn, client_id, at, cap).await,
            Txn::Done => Ok(()),
        }
    }

    /// The batch's writes (with `ridden`, its rides' statements) and the commit.
    pub(super) async fn write_and_commit(
        &mut self,
        moved: &[(&str, i64)],
        records: &[Recorded<'_>],
        rows: &[&Model],
        ridden: Vec<Statement>,
    ) -> Result<(), DbError> {
        match std::mem::replace(self, Txn::Done) {
            Txn::Begun(txn) => {
                postgres::write(&txn, moved, records, rows).await?;
                for statement in ridden {
                    txn.execute_raw(statement).await?;
                }
                txn.commit().await?;
            }
            Txn::Riding { conn, begun } => {
                // Still open until the call succeeded: an error rolls it back.
                *self = Txn::Riding { conn, begun: true };
                let writes = portable::Writes {
                    moved,
                    records,
                    rows,
                    ridden,
                };
                portable::write_and_commit(conn, begun, writes).await?;
                *self = Txn::Done;
            }
            Txn::Done => {}
        }
        Ok(())
    }

    /// Rolls back what is still open.
    pub(super) async fn abort(self) {
        match self {
            Txn::Begun(txn) => {
                let _ = txn.rollback().await;
            }
            Txn::Riding { conn, begun: true } => {
                let _ = conn.execute_unprepared("ROLLBACK").await;
            }
            Txn::Riding { begun: false, .. } | Txn::Done => {}
        }
    }
}
