//! The writer's batches: a failing or refused write fails alone, a batch
//! on PostgreSQL passes over a row another transaction holds, a database out
//! of reach fails every write at once; on PostgreSQL a connection the
//! server ended is replaced, values that cannot be written as literals
//! go bound, a batch goes in one exchange unless the check of its fences
//! refuses it, and a deletion waits for the writes queued before it.
use std::sync::Arc;

use parley_shared::db::testing::TestDb;
use parley_shared::db::{NewSession, StatePatch};
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseTransaction, EntityTrait, QueryFilter, Set};

use super::*;
use crate::store::tables::signal::sessions as rows;

/// Inserts a row named `address` for `client_id`; with `fail`, then a
/// statement the database refuses.
fn insert(client_id: &str, address: &str, fail: bool) -> Work {
    let (client_id, address) = (client_id.to_string(), address.to_string());
    Box::new(move |backend| {
        let row = rows::ActiveModel {
            client_id: Set(client_id.clone()),
            address: Set(address.clone()),
            record: Set(vec![1]),
        };
        let mut statements = crate::store::rows::inserts(backend, &[row], None);
        if fail {
            let bad = "INSERT INTO no_such_table VALUES (1)";
            statements.push(Statement::from_string(backend, bad));
        }
        statements
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
    /// The writer's database handle (its own connection on SQLite).
    conn: Db,
    /// Holds session `a`'s write lock (on SQLite the database's): the
    /// first write waits for it.
    gate: Option<DatabaseTransaction>,
    first: Option<Answer>,
}

impl Stalled {
    async fn new(db: &Db) -> Stalled {
        Stalled::lingering(db, LINGER).await
    }

    /// [`Stalled::new`] whose writes behind wait at most `linger`.
    async fn lingering(db: &Db, linger: Duration) -> Stalled {
        let (gate, _) = crate::store::fence::locked(db, "a").await.expect("hold a");
        let conn = match db.backend() {
            "postgres" => db.clone(),
            _ => db.sqlite_writer(),
        };
        let mut stalled = Stalled {
            writer: Writer::lingering(conn.clone(), linger),
            conn,
            gate: Some(gate),
            first: None,
        };
        let first = insert("a", "first", false);
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
        tokio::spawn(async move {
            writer
                .write(client_id, fence, &deleted, work, Pace::Now)
                .await
        })
    }

    /// Lets the first write go on once `queued` writes wait behind it;
    /// its answer.
    async fn release(&mut self, queued: usize) -> Result<(), Failure> {
        let writer = &self.writer;
        until("the writes queued", || writer.queued() == queued).await;
        let gate = self.gate.take().expect("released once");
        gate.commit().await.expect("release a");
        let first = self.first.take().expect("released once");
        first.await.expect("join")
    }

    fn alone(&self) -> u64 {
        self.writer.taken.alone.load(Ordering::SeqCst)
    }

    fn refused_checks(&self) -> u64 {
        self.writer.taken.refused_checks.load(Ordering::SeqCst)
    }
}

/// A batch of five writes: one fails, one is a stale owner's, one a
/// forgotten store's; only the failing and the refused ones are not
/// written, each with its own answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_fails_or_is_refused_fails_alone_in_its_batch() {
    fails_alone(TestDb::sqlite().await).await;
}

/// The same on PostgreSQL, where the batch (a store's deletion marked)
/// goes in two exchanges on the writer's own connection, and that
/// connection serves the writes alone after the failed batch was rolled
/// back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_fails_or_is_refused_fails_alone_in_its_batch_on_postgresql() {
    fails_alone(TestDb::postgres().await).await;
}

async fn fails_alone(test: TestDb) {
    let db = test.db.clone();
    owned(&db, &["a", "b", "c"]).await;
    let observed = &parley_shared::metrics::metrics().device_store_batch;
    let (count, sum) = (observed.get_sample_count(), observed.get_sample_sum());
    let mut w = Stalled::new(&db).await;
    let (live, forgotten) = (Arc::new(Deleted::default()), Arc::new(Deleted::default()));
    forgotten.mark(Deleted::FORGOTTEN);
    let good = w.queue("b", 2, &live, insert("b", "good", false));
    let failing = w.queue("a", 2, &live, insert("a", "failing", true));
    let stale = w.queue("c", 1, &live, insert("c", "stale", false));
    let gone = w.queue("c", 2, &forgotten, insert("c", "gone", false));
    let later = w.queue("c", 2, &live, insert("c", "later", false));
    assert!(w.release(5).await.is_ok());

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
    // Other tests of this process may write too.
    assert!(
        observed.get_sample_count() >= count + 2,
        "a batch size per transaction"
    );
    assert!(observed.get_sample_sum() >= sum + 6.0);
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
    assert!(w.release(2).await.is_ok());

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
        let conn = w.conn.clone();
        async move { conn.conn().close_by_ref().await }
    });
    // The first write, between its two calls on SQLite when its connection
    // closed, fails as out of reach too.
    let first = w.release(2).await;
    assert!(
        matches!(
            first,
            Ok(()) | Err(Failure::Failed(StoreError::Connection(_)))
        ),
        "the first write committed or found the database out of reach"
    );
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

/// PostgreSQL: the server ends the writer's connection while it is idle
/// (a restart, as the writer sees it). The next write is not lost: its
/// exchange fails before anything was written (the server's first answer
/// is the error), and it goes again on a new connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_after_the_server_ended_the_writers_connection_goes_on_a_new_one() {
    let test = TestDb::postgres().await;
    let db = test.db.clone();
    owned(&db, &["a"]).await;
    let writer = Writer::on(db.clone());
    let live = Arc::new(Deleted::default());
    let write = |address: &str| writer.write("a", 2, &live, insert("a", address, false), Pace::Now);
    assert!(write("before").await.is_ok());
    // Only the writer's connection has written that table (the test's pool
    // has not read it yet); this statement's own text names it too.
    let ended = Statement::from_string(
        sea_orm::DbBackend::Postgres,
        "SELECT count(pg_terminate_backend(pid)) AS ended FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid() \
         AND position('wa_signal_sessions' in query) > 0",
    );
    let ended: i64 = db
        .conn()
        .query_one_raw(ended)
        .await
        .expect("terminate")
        .expect("a row")
        .try_get("", "ended")
        .expect("count");
    assert_eq!(ended, 1, "the writer's connection was ended");
    assert!(write("after").await.is_ok(), "written on a new connection");
    assert_eq!(writer.taken(), (2, 2));
    assert_eq!(writer.taken.alone.load(Ordering::SeqCst), 0);
    assert_eq!(addresses(&db).await, ["a/after", "a/before"]);
    drop(writer);
    test.finish().await;
}

/// PostgreSQL: a write whose values have no exact literal (here a float)
/// goes with bound values, in the same batch's place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_whose_values_have_no_literal_goes_bound_on_postgresql() {
    let test = TestDb::postgres().await;
    let db = test.db.clone();
    owned(&db, &["a"]).await;
    let writer = Writer::on(db.clone());
    let live = Arc::new(Deleted::default());
    let float: Work = Box::new(|backend| {
        vec![Statement::from_sql_and_values(
            backend,
            "INSERT INTO wa_signal_sessions (client_id, address, record) \
             SELECT $1, $2, $3 WHERE $4::float8 > 1",
            [
                "a".into(),
                "floated".into(),
                vec![1u8].into(),
                sea_orm::Value::Double(Some(1.5)),
            ],
        )]
    });
    assert!(writer.write("a", 2, &live, float, Pace::Now).await.is_ok());
    assert_eq!(addresses(&db).await, ["a/floated"]);
    drop(writer);
    test.finish().await;
}

/// PostgreSQL: a batch that nothing refuses is written in one exchange,
/// its check of the fences first; a batch with a stale owner's write is
/// refused by that check, nothing of it written, and goes in two
/// exchanges, which write the rest and refuse that write alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_on_postgresql_is_one_exchange_unless_its_check_refuses_it() {
    let test = TestDb::postgres().await;
    let db = test.db.clone();
    owned(&db, &["a", "b", "c"]).await;
    let mut w = Stalled::new(&db).await;
    let live = Arc::new(Deleted::default());
    let b = w.queue("b", 2, &live, insert("b", "one", false));
    let c = w.queue("c", 2, &live, insert("c", "one", false));
    assert!(w.release(2).await.is_ok());
    assert!(b.await.expect("join").is_ok());
    assert!(c.await.expect("join").is_ok());
    assert_eq!(w.writer.taken(), (2, 3), "b and c were one batch");
    assert_eq!(w.refused_checks(), 0, "each batch in one exchange");
    drop(w);

    // The next writer's first write is `a/first` again.
    rows::Entity::delete_many()
        .filter(rows::Column::ClientId.eq("a"))
        .exec(db.conn())
        .await
        .expect("delete");
    let mut w = Stalled::new(&db).await;
    let b = w.queue("b", 2, &live, insert("b", "two", false));
    let stale = w.queue("c", 1, &live, insert("c", "stale", false));
    assert!(w.release(2).await.is_ok());
    assert!(b.await.expect("join").is_ok());
    assert!(matches!(
        stale.await.expect("join"),
        Err(Failure::Refused(FenceRejected::Stale { ours: 1, .. }))
    ));
    assert_eq!(w.writer.taken(), (2, 3));
    assert_eq!(w.refused_checks(), 1, "the batch's check refused it, once");
    assert_eq!(w.alone(), 0, "the two exchanges answered each write");
    assert_eq!(addresses(&db).await, ["a/first", "b/one", "b/two", "c/one"]);
    drop(w);
    test.finish().await;
}

/// A store's deletion waits for the writes queued before it
/// (`Writer::settled`): when it goes on, they have committed, so a write
/// that checked the deletion's mark before it was set cannot come after
/// the deletion.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletion_waits_for_the_writes_queued_before_it() {
    let test = TestDb::postgres().await;
    let db = test.db.clone();
    owned(&db, &["a", "b"]).await;
    let mut w = Stalled::new(&db).await;
    let live = Arc::new(Deleted::default());
    let b = w.queue("b", 2, &live, insert("b", "before", false));
    let settled = tokio::spawn({
        let writer = w.writer.clone();
        async move { writer.settled().await }
    });
    until("the deletion queued", || w.writer.queued() == 2).await;
    assert!(!settled.is_finished(), "the writes before it wait");
    assert!(w.release(2).await.is_ok());
    settled.await.expect("join");
    assert_eq!(
        addresses(&db).await,
        ["a/first", "b/before"],
        "committed before the deletion went on"
    );
    assert!(b.await.expect("join").is_ok());
    drop(w);
    test.finish().await;
}

/// PostgreSQL: a write behind (a message secret) that the writer takes
/// alone waits for a write that does not linger and goes in its batch;
/// alone, it goes once its wait is over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_behind_rides_with_the_next_write_or_goes_after_its_wait() {
    let test = TestDb::postgres().await;
    let db = test.db.clone();
    owned(&db, &["a", "b", "c"]).await;
    let live = Arc::new(Deleted::default());
    // A wait no test outlasts: only the next write ends it.
    let mut w = Stalled::lingering(&db, Duration::from_secs(600)).await;
    let behind = tokio::spawn({
        let (writer, live) = (w.writer.clone(), Arc::clone(&live));
        async move {
            let secret = insert("b", "secret", false);
            writer.write("b", 2, &live, secret, Pace::Behind).await
        }
    });
    assert!(w.release(1).await.is_ok());
    until("the writer took the write behind", || {
        w.writer.queued() == 0
    })
    .await;
    assert!(!behind.is_finished(), "it waits for company");
    let next = w.queue("c", 2, &live, insert("c", "session", false));
    assert!(behind.await.expect("join").is_ok());
    assert!(next.await.expect("join").is_ok());
    assert_eq!(
        w.writer.taken(),
        (2, 3),
        "the write behind rode with the next"
    );
    drop(w);

    let writer = Writer::on(db.clone());
    let alone = insert("b", "alone", false);
    assert!(
        writer
            .write("b", 2, &live, alone, Pace::Behind)
            .await
            .is_ok()
    );
    assert_eq!(writer.taken(), (1, 1));
    assert_eq!(
        addresses(&db).await,
        ["a/first", "b/alone", "b/secret", "c/session"]
    );
    drop(writer);
    test.finish().await;
}
