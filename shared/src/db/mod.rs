//! The database: sea-orm over PostgreSQL or SQLite, one schema from `migrations/`.
pub mod company;
pub mod contacts;
pub mod entities;
pub mod events;
mod group_commit;
pub mod group_subjects;
pub mod history;
pub mod joined;
pub mod labels;
pub mod literal;
mod logged_events;
pub mod overview;
pub mod sessions;
pub mod status_posts;
mod storage_room;
#[cfg(feature = "testing")]
pub mod testing;

use sea_orm::{ConnectOptions, Database, DatabaseConnection, DbBackend, DbErr};

use crate::event_stream::EventStream;
use crate::store_keys::StoreKeys;
use parley_contract::error::ApiError;
use std::time::Duration;

/// A pooled connection idle this long is checked (a round trip) before it
/// is handed out; one in use more recently goes out as it is. Checking every
/// one cost a round trip per transaction: on SQLite a hand-off to the
/// connection's thread, on PostgreSQL a message the server answers. A
/// connection that broke within the window (the server restarted) fails its
/// next statement once, and the pool replaces it: the event log's writers
/// and the sends retry, an unacknowledged message comes again.
const CHECK_IF_IDLE: Duration = Duration::from_secs(1);

/// A PostgreSQL array parameter of `items` (for `= ANY($n)` and
/// `unnest($n)`): one statement text for any number of values.
pub fn pg_array<T: Into<sea_orm::Value>>(
    ty: sea_orm::sea_query::ArrayType,
    items: impl IntoIterator<Item = T>,
) -> sea_orm::Value {
    sea_orm::Value::Array(
        ty,
        Some(Box::new(items.into_iter().map(Into::into).collect())),
    )
}

pub use group_commit::{Queued, RideWork};
pub use sea_orm::ConnectionTrait;
pub use sessions::{
    NewSession, SessionRow, SessionsRekeyed, SettingsPatch, StateChange, StatePatch,
};

#[derive(Debug, Clone, thiserror::Error)]
pub enum DbError {
    /// A unique constraint refused the write.
    #[error("conflict: {0}")]
    Conflict(String),
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// The database's disk has no space left: nothing was written.
    #[error("database storage full: {0}")]
    Full(String),
}

impl From<DbErr> for DbError {
    fn from(e: DbErr) -> Self {
        if matches!(
            e.sql_err(),
            Some(sea_orm::SqlErr::UniqueConstraintViolation(_))
        ) {
            return DbError::Conflict(e.to_string());
        }
        let text = e.to_string();
        if disk_full(&text) {
            DbError::Full(text)
        } else {
            DbError::Unavailable(text)
        }
    }
}

/// Whether a database error says its disk is full: SQLite's `SQLITE_FULL`
/// ("database or disk is full"), PostgreSQL's `disk_full` (53100, "No space
/// left on device").
pub fn disk_full(error: &str) -> bool {
    error.contains("database or disk is full") || error.contains("No space left on device")
}

impl From<DbError> for ApiError {
    fn from(e: DbError) -> Self {
        match e {
            DbError::Conflict(_) => ApiError::conflict("already exists"),
            DbError::Unavailable(msg) => {
                tracing::error!(error = %msg, "database");
                ApiError::unavailable("database unavailable")
            }
            DbError::Full(msg) => {
                tracing::error!(error = %msg, "database storage full");
                ApiError::unavailable("database storage full: no space left for writes")
            }
        }
    }
}

/// A pooled connection to the gateway's database, and the keys its secrets
/// are sealed with ([`crate::store_keys`]).
#[derive(Clone, Debug)]
pub struct Db {
    conn: DatabaseConnection,
    keys: StoreKeys,
    /// Where event bodies go in the cluster (none: in the `events` rows).
    stream: Option<EventStream>,
    /// The event log's writer (group commit), started at the first append;
    /// shared by the clones of this handle.
    appender: std::sync::Arc<std::sync::OnceLock<group_commit::Appender>>,
    /// Whether a write was refused for want of space (shared by clones).
    room: storage_room::StorageRoom,
}

impl Db {
    /// Connects (creating a SQLite file when missing). Does not migrate.
    pub async fn connect(url: &str) -> Result<Db, DbError> {
        let url = if url.starts_with("sqlite:") && !url.contains("mode=") {
            let sep = if url.contains('?') { '&' } else { '?' };
            format!("{url}{sep}mode=rwc")
        } else {
            url.to_string()
        };
        let mut opts = ConnectOptions::new(url.clone());
        opts.connect_timeout(Duration::from_secs(5))
            .acquire_timeout(Duration::from_secs(5))
            .test_before_acquire_if_idle_for(CHECK_IF_IDLE)
            .sqlx_logging(false);
        if url.starts_with("sqlite:") {
            use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
            // One writer at a time is what SQLite allows; a small pool avoids lock storms.
            opts.max_connections(4).min_connections(1);
            // On every connection of the pool: WAL, and every commit flushed
            // to disk (FULL: what was acknowledged survives a power loss too);
            // secure_delete: deleted rows (old sealed keys among them) are
            // overwritten, not left in free pages.
            opts.map_sqlx_sqlite_opts(|o| {
                o.journal_mode(SqliteJournalMode::Wal)
                    .synchronous(SqliteSynchronous::Full)
                    .busy_timeout(Duration::from_secs(5))
                    .foreign_keys(true)
                    .pragma("secure_delete", "ON")
            });
            opts.map_sqlx_sqlite_pool_opts(transactions_ended);
        } else {
            opts.max_connections(20).min_connections(1);
        }
        let conn = Database::connect(opts).await?;
        Ok(Db {
            conn,
            keys: StoreKeys::none(),
            stream: None,
            appender: Default::default(),
            room: Default::default(),
        })
    }

    /// This database with `keys` sealing its secrets.
    pub fn with_keys(mut self, keys: StoreKeys) -> Db {
        self.keys = keys;
        // A writer started before sealed with the old keys: this handle has its own.
        self.appender = Default::default();
        self
    }

    /// The keys secrets are sealed with.
    pub fn keys(&self) -> &StoreKeys {
        &self.keys
    }

    /// This database with its events' bodies kept in `stream` (the cluster).
    pub fn with_event_stream(mut self, stream: EventStream) -> Db {
        self.stream = Some(stream);
        // A writer started before wrote bodies to the rows: this handle has its own.
        self.appender = Default::default();
        self
    }

    /// Appends waiting for the event log's writer (not yet in a transaction).
    pub fn queued_appends(&self) -> usize {
        self.appender
            .get()
            .map_or(0, group_commit::Appender::queued)
    }

    /// The transactions the event log's writer began, and the events they
    /// took (group commit: more events than transactions under load).
    pub fn event_log_transactions(&self) -> (u64, u64) {
        self.appender
            .get()
            .map_or((0, 0), group_commit::Appender::taken)
    }

    /// Writes another store's statements of session `client_id` in the
    /// event log's next transaction (see `group_commit::rides`), where a
    /// write needs a flush to disk of its own otherwise. SQLite only (a
    /// PostgreSQL commit has no single lock to share: refused there).
    /// `work` makes them under the write lock, from the session's stored
    /// fence.
    pub async fn ride(&self, client_id: &str, work: RideWork) -> Result<(), DbError> {
        if self.conn.get_database_backend() != DbBackend::Sqlite {
            return Err(DbError::Unavailable(
                "only SQLite's event log takes rides".into(),
            ));
        }
        self.appender().ride(client_id, work).await
    }

    /// The event log's writer of this handle, started on first use.
    pub(crate) fn appender(&self) -> &group_commit::Appender {
        self.appender.get_or_init(|| {
            // The writer's own handle sends nothing to it: it stops once the
            // last handle that does is gone.
            let own = Db {
                appender: Default::default(),
                ..self.writers_handle()
            };
            group_commit::Appender::spawn(own)
        })
    }

    /// The JetStream stream event bodies go to, in the cluster.
    pub fn event_stream(&self) -> Option<&EventStream> {
        self.stream.as_ref()
    }

    /// Applies every pending migration.
    pub async fn migrate(&self) -> Result<(), DbError> {
        use parley_migrations::{Migrator, MigratorTrait};
        Migrator::up(&self.conn, None).await?;
        Ok(())
    }

    /// Whether the database answers now.
    pub async fn ping(&self) -> bool {
        self.conn.ping().await.is_ok()
    }

    pub fn conn(&self) -> &DatabaseConnection {
        &self.conn
    }

    /// A transaction that will write. On SQLite it takes the write lock at
    /// `BEGIN` (`IMMEDIATE`, waiting out another writer): a deferred one that
    /// reads first fails at its first write if another connection committed
    /// meanwhile (`SQLITE_BUSY_SNAPSHOT`, which no waiting cures).
    pub async fn begin_write(&self) -> Result<sea_orm::DatabaseTransaction, DbError> {
        use sea_orm::{SqliteTransactionMode, TransactionOptions, TransactionTrait};
        let options = TransactionOptions {
            sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate),
            ..TransactionOptions::default()
        };
        Ok(self.conn.begin_with_options(options).await?)
    }

    /// A second, small pool to the same database whose commits return before
    /// they are flushed to disk: what it writes is visible to everyone at
    /// once and survives a crash of this process, but a crash of the
    /// database server (PostgreSQL: `synchronous_commit = off`) or of the
    /// machine (SQLite: `synchronous = NORMAL`, the write-ahead log flushed
    /// at checkpoints, not at each commit) may lose the last fraction of a
    /// second of it. For data that is cheap to lose that way (the sandbox
    /// network's outbox), never for the gateway's own state. Connects
    /// lazily, on first use.
    pub fn relaxed(&self, max_connections: u32) -> Db {
        if self.conn.get_database_backend() == DbBackend::Sqlite {
            return self.sqlite_side_pool(max_connections);
        }
        self.side_pool(max_connections, &[("synchronous_commit", "off")])
    }

    /// SQLite's relaxed pool: the main pool's options (the same file, WAL,
    /// busy timeout, keys) with commits that do not wait for the disk. In
    /// WAL mode that is safe to mix with the main pool's flushed commits:
    /// the log is one file, so a flushed commit flushes what came before it.
    fn sqlite_side_pool(&self, max_connections: u32) -> Db {
        use sea_orm::sqlx::sqlite::{SqlitePoolOptions, SqliteSynchronous};
        let pool = self.conn.get_sqlite_connection_pool();
        let options = (*pool.connect_options())
            .clone()
            .synchronous(SqliteSynchronous::Normal);
        let side = transactions_ended(checked_if_idle(SqlitePoolOptions::new()))
            .max_connections(max_connections.max(1))
            .acquire_timeout(Duration::from_secs(5))
            .connect_lazy_with(options);
        self.over(sea_orm::SqlxSqliteConnector::from_sqlx_sqlite_pool(side))
    }

    /// A pool of exactly one connection with the main pool's options, for
    /// one of SQLite's writers (the event log's, the device stores'): a
    /// transaction it begins in one call continues in its next, on the same
    /// connection (the pool never closes it for idleness or age, nor pings
    /// it, and nothing else uses it).
    pub fn sqlite_writer(&self) -> Db {
        use sea_orm::sqlx::sqlite::SqlitePoolOptions;
        let pool = self.conn.get_sqlite_connection_pool();
        let options = (*pool.connect_options()).clone();
        let one = transactions_ended(SqlitePoolOptions::new())
            .max_connections(1)
            .min_connections(0)
            .idle_timeout(None)
            .max_lifetime(None)
            .test_before_acquire(false)
            .acquire_timeout(Duration::from_secs(5))
            .connect_lazy_with(options);
        self.over(sea_orm::SqlxSqliteConnector::from_sqlx_sqlite_pool(one))
    }

    /// This handle's keys and event stream over `conn`, with a writer of its own.
    fn over(&self, conn: DatabaseConnection) -> Db {
        Db {
            conn,
            keys: self.keys.clone(),
            stream: self.stream.clone(),
            appender: Default::default(),
            room: self.room.clone(),
        }
    }

    /// A second pool to the same database whose connections start with
    /// `settings`, connecting lazily, on first use. SQLite: this same handle.
    fn side_pool(&self, max_connections: u32, settings: &[(&str, &str)]) -> Db {
        if self.conn.get_database_backend() != DbBackend::Postgres {
            return self.clone();
        }
        let pool = self.conn.get_postgres_connection_pool();
        let options = (*pool.connect_options())
            .clone()
            .options(settings.iter().copied());
        let side = checked_if_idle(sea_orm::sqlx::postgres::PgPoolOptions::new())
            .max_connections(max_connections.max(1))
            .acquire_timeout(Duration::from_secs(5))
            .connect_lazy_with(options);
        self.over(sea_orm::SqlxPostgresConnector::from_sqlx_postgres_pool(
            side,
        ))
    }

    /// The event log writers' own connections. On PostgreSQL each plans its
    /// statements once (a generic plan, kept for the connection's life),
    /// and plans them by index only: they read and write a few rows by key
    /// (a batch's sessions and events), never a scan, and a plan made on a
    /// nearly empty table (a new database) would otherwise scan it and be
    /// kept as the table grows. Planning each batch anew cost as much as
    /// running it. SQLite: this same handle.
    fn writers_handle(&self) -> Db {
        self.side_pool(
            group_commit::POSTGRES_WRITERS as u32,
            &[
                ("plan_cache_mode", "force_generic_plan"),
                ("enable_seqscan", "off"),
                ("enable_hashjoin", "off"),
                ("enable_mergejoin", "off"),
            ],
        )
    }

    /// `"postgres"` or `"sqlite"`.
    pub fn backend(&self) -> &'static str {
        match self.conn.get_database_backend() {
            DbBackend::Postgres => "postgres",
            DbBackend::Sqlite => "sqlite",
            _ => "other",
        }
    }
}

/// `options` checking a connection before handing it out only once it has
/// been idle for [`CHECK_IF_IDLE`] (the main pool's
/// `test_before_acquire_if_idle_for`, for the side pools built here).
fn checked_if_idle<DB: sea_orm::sqlx::Database>(
    options: sea_orm::sqlx::pool::PoolOptions<DB>,
) -> sea_orm::sqlx::pool::PoolOptions<DB> {
    use sea_orm::sqlx::Connection;
    options
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for >= CHECK_IF_IDLE {
                    conn.ping().await?;
                }
                Ok(true)
            })
        })
}

/// `options` closing a SQLite connection given back still in a transaction
/// instead of keeping it. SQLite ends a transaction on its own when a
/// commit fails for a full disk or an I/O error; the connection's own count
/// of open transactions then stays one too high (its `ROLLBACK` fails), its
/// next `BEGIN` becomes a `SAVEPOINT`, and a rollback of that (`ROLLBACK
/// TO`) leaves the transaction, and the database's write lock, held for
/// good: every other writer would then fail with "database is locked" long
/// after the disk had room again. Closing the connection ends whatever it
/// held; the pool opens a new one.
fn transactions_ended(
    options: sea_orm::sqlx::pool::PoolOptions<sea_orm::sqlx::Sqlite>,
) -> sea_orm::sqlx::pool::PoolOptions<sea_orm::sqlx::Sqlite> {
    use sea_orm::sqlx::Connection;
    options.after_release(|conn, _| {
        Box::pin(async move {
            if !conn.is_in_transaction() {
                return Ok(true);
            }
            // A dropped transaction's rollback, queued on the connection, runs first.
            conn.ping().await?;
            let ended = !conn.is_in_transaction();
            if !ended {
                tracing::warn!(
                    "closing a database connection whose transaction SQLite had ended on its own (a full disk or an I/O error)"
                );
            }
            Ok(ended)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::{ApiError, DbError, disk_full};

    #[test]
    fn a_full_disk_is_told_from_an_unreachable_database() {
        assert!(disk_full(
            "Execution Error: error returned from database: (code: 13) database or disk is full"
        ));
        assert!(disk_full(
            "error returned from database: could not extend file \"base/16384/2619\": No space left on device"
        ));
        assert!(!disk_full("Connection Error: pool timed out"));
        let answer = ApiError::from(DbError::Full("database or disk is full".into()));
        assert_eq!(answer.status, 503);
        assert!(answer.message.contains("full"), "{}", answer.message);
        assert!(!answer.message.contains("code: 13"), "no store text");
    }

    /// A commit SQLite refused and rolled back itself (what it does when the
    /// disk is full) leaves the pool able to write, and no write lock held.
    #[tokio::test]
    async fn a_transaction_sqlite_ended_on_its_own_leaves_no_write_lock_behind() {
        use sea_orm::{ConnectionTrait, TransactionTrait};
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("t.sqlite").display());
        let db = super::Db::connect(&url).await.unwrap();
        let conn = db.conn();
        conn.execute_unprepared("CREATE TABLE t (n INTEGER)")
            .await
            .unwrap();
        let txn = db.begin_write().await.unwrap();
        txn.execute_unprepared("INSERT INTO t VALUES (0)")
            .await
            .unwrap();
        txn.execute_unprepared("ROLLBACK").await.unwrap();
        assert!(txn.commit().await.is_err(), "nothing left to commit");

        for n in 1..=6 {
            // A transaction given up, then one committed, in turn.
            let txn = db.begin_write().await.unwrap();
            txn.execute_unprepared("INSERT INTO t VALUES (-1)")
                .await
                .unwrap();
            drop(txn);
            let txn = conn.begin().await.unwrap();
            txn.execute_unprepared(&format!("INSERT INTO t VALUES ({n})"))
                .await
                .unwrap();
            txn.commit().await.unwrap();
        }
        // Another process's view: everything committed, nothing else.
        let other = super::Db::connect(&url).await.unwrap();
        let row = other
            .conn()
            .query_one_raw(sea_orm::Statement::from_string(
                other.conn().get_database_backend(),
                "SELECT COUNT(*), SUM(n) FROM t",
            ))
            .await
            .unwrap()
            .unwrap();
        let count: i64 = row.try_get_by_index(0).unwrap();
        let sum: i64 = row.try_get_by_index(1).unwrap();
        assert_eq!((count, sum), (6, 21));
        other
            .conn()
            .execute_unprepared("INSERT INTO t VALUES (7)")
            .await
            .expect("no write lock left held");
    }
}
