//! Contract of `Db::ride`: another store's writes riding in the event log's
//! transactions on SQLite, fenced under its write lock, committed with the
//! appends or refused alone; refused on PostgreSQL.
use std::sync::{Arc, Mutex};

use parley_shared::db::events::{Appended, DeliveryState, NewEvent};
use parley_shared::db::{Db, RideWork};
use sea_orm::{ConnectionTrait, DbBackend, Statement};
use tokio::task::JoinHandle;

use super::events::{owned, wait_until};
use parley_shared::db_contract;

db_contract! {
    adapters: [sqlite, postgres],
    cases: [
        rides_commit_with_appends_and_are_refused_or_fail_alone,
    ]
}

/// The fences each ride's work was given, by mark.
type Seen = Arc<Mutex<Vec<(String, Option<i64>)>>>;

/// A ride of `client_id` inserting `mark` into `marks` while the stored
/// fence is at most `fence` (`table`: where it inserts).
fn ride(
    db: &Db,
    client_id: &str,
    fence: i64,
    mark: &str,
    table: &str,
    seen: &Seen,
) -> JoinHandle<bool> {
    let (db, client_id) = (db.clone(), client_id.to_string());
    let (mark, table, seen) = (mark.to_string(), table.to_string(), Arc::clone(seen));
    tokio::spawn(async move {
        let noted = Arc::clone(&seen);
        let made = mark.clone();
        let work: RideWork = Box::new(move |stored| {
            noted.lock().unwrap().push((made.clone(), stored));
            if stored.is_none_or(|s| s > fence) {
                return Vec::new();
            }
            let sql = format!("INSERT INTO {table} (mark) VALUES ('{made}')");
            vec![Statement::from_string(DbBackend::Sqlite, sql)]
        });
        db.ride(&client_id, work).await.is_ok()
    })
}

fn append(db: &Db, client_id: &str, id: &str) -> JoinHandle<bool> {
    let (db, client_id, id) = (db.clone(), client_id.to_string(), id.to_string());
    tokio::spawn(async move {
        let new = NewEvent {
            event_id: &id,
            kind: "text",
            state: DeliveryState::Pending,
            cap: 1_000,
        };
        let got = db
            .append_event(&client_id, 1, new, |_| b"{}".to_vec())
            .await;
        matches!(got, Ok(Appended::Logged(_)))
    })
}

async fn marks(db: &Db) -> Vec<String> {
    let rows = db
        .conn()
        .query_all_raw(Statement::from_string(
            DbBackend::Sqlite,
            "SELECT mark FROM marks ORDER BY mark",
        ))
        .await
        .expect("marks");
    rows.iter()
        .map(|r| r.try_get("", "mark").unwrap())
        .collect()
}

/// Rides queued behind a held transaction commit in one transaction with
/// the appends queued with them, each made from its session's stored fence
/// (a newer owner's or a missing session's ride writes nothing); a ride
/// that fails fails alone, the appends and rides of its batch are written.
async fn rides_commit_with_appends_and_are_refused_or_fail_alone(db: &Db) {
    owned(db, "a", 1).await;
    owned(db, "moved", 2).await;
    let seen: Seen = Arc::default();
    if db.backend() == "postgres" {
        assert!(!ride(db, "a", 1, "pg", "marks", &seen).await.unwrap());
        assert!(seen.lock().unwrap().is_empty(), "never made");
        return;
    }
    db.conn()
        .execute_unprepared("CREATE TABLE marks (mark TEXT NOT NULL)")
        .await
        .expect("table");
    let (transactions, _) = db.event_log_transactions();
    let blocker = db.begin_write().await.expect("begin");
    blocker
        .execute_unprepared("UPDATE sessions SET event_seq = event_seq WHERE client_id = 'a'")
        .await
        .expect("lock");
    let first = append(db, "a", "a0");
    wait_until("a0 is in the held transaction", || {
        db.event_log_transactions().0 == transactions + 1
    })
    .await;
    let rides = [
        ride(db, "a", 1, "kept", "marks", &seen),
        ride(db, "moved", 1, "stale", "marks", &seen),
        ride(db, "gone", 1, "nobody", "marks", &seen),
    ];
    let second = append(db, "a", "a1");
    wait_until("all queued", || db.queued_appends() == 4).await;
    blocker.rollback().await.expect("release");
    assert!(first.await.unwrap() && second.await.unwrap());
    for ride in rides {
        assert!(
            ride.await.unwrap(),
            "a refused ride is answered Ok: its work noted why"
        );
    }
    assert_eq!(marks(db).await, ["kept"]);
    let mut given = seen.lock().unwrap().clone();
    given.sort();
    let want = [("kept", Some(1)), ("nobody", None), ("stale", Some(2))];
    let want: Vec<(String, Option<i64>)> = want.iter().map(|(m, f)| (m.to_string(), *f)).collect();
    assert_eq!(given, want);
    assert_eq!(
        db.event_log_transactions().0,
        transactions + 2,
        "a0's, then the rides with a1"
    );

    // A ride whose statement fails: it alone fails; the append and the
    // ride queued with it are written.
    let blocker = db.begin_write().await.expect("begin");
    blocker
        .execute_unprepared("UPDATE sessions SET event_seq = event_seq WHERE client_id = 'a'")
        .await
        .expect("lock");
    let before = db.event_log_transactions().0;
    let held = append(db, "a", "a2");
    wait_until("a2 is in the held transaction", || {
        db.event_log_transactions().0 == before + 1
    })
    .await;
    let failing = ride(db, "a", 1, "lost", "no_such_table", &seen);
    let good = ride(db, "a", 1, "later", "marks", &seen);
    let third = append(db, "a", "a3");
    wait_until("all queued", || db.queued_appends() == 3).await;
    blocker.rollback().await.expect("release");
    assert!(held.await.unwrap() && third.await.unwrap());
    assert!(!failing.await.unwrap(), "the failing ride fails");
    assert!(good.await.unwrap());
    assert_eq!(marks(db).await, ["kept", "later"]);
    let logged = db.events_after("a", 0, 10).await.unwrap();
    let ids: Vec<&str> = logged.iter().map(|e| e.event_id.as_str()).collect();
    assert_eq!(ids, ["a0", "a1", "a2", "a3"]);

    // Alone, with nothing else queued: written at once.
    assert!(ride(db, "a", 1, "lone", "marks", &seen).await.unwrap());
    assert_eq!(marks(db).await, ["kept", "later", "lone"]);
}
