//! Contract of the event log's queries (`Db::append_event` and the rest): one
//! suite, run on SQLite, PostgreSQL, and PostgreSQL with bodies in a
//! JetStream stream (the cluster).
use base64::Engine;
use chrono::{Duration, Utc};
use parley_shared::db::events::{Appended, DeliveryState, NewEvent, Redeliver};
use parley_shared::db::{Db, NewSession, StatePatch};
use parley_shared::store_keys::StoreKeys;
use sea_orm::ConnectionTrait;

use parley_shared::db_contract;

db_contract! {
    adapters: [sqlite, postgres, postgres_stream],
    cases: [
        seq_is_gap_free_per_session_and_bodies_see_it,
        a_fenced_out_owner_cannot_append,
        a_writer_sees_what_another_appended_meanwhile,
        concurrent_appends_never_share_a_seq,
        attempts_are_counted_and_dead_letters_paged,
        redeliver_by_ids_or_after_a_seq,
        bodies_are_sealed_at_rest,
        disconnect_and_retention_delete_events,
        a_full_window_refuses_pending_events_and_trims_the_rest,
        appends_committed_together_each_get_their_own_answer,
        a_sessions_queued_appends_keep_their_order,
        an_events_records_in_one_transaction_apply_in_order,
        a_batch_that_fails_leaves_nothing_behind,
    ]
}

fn sealing(db: &Db) -> Db {
    let key = base64::engine::general_purpose::STANDARD.encode([7u8; 32]);
    db.clone()
        .with_keys(StoreKeys::parse(&format!("k:{key}"), None).expect("key"))
}

/// Creates `client_id` and claims it with `fence`.
pub(super) async fn owned(db: &Db, client_id: &str, fence: u64) {
    db.create_session(NewSession {
        client_id: client_id.into(),
        ..NewSession::default()
    })
    .await
    .expect("create");
    assert!(
        db.fenced_update(client_id, fence, StatePatch::default())
            .await
            .expect("claim")
    );
}

/// Appends an event whose body names its own seq (with room for 1,000).
async fn append(db: &Db, client_id: &str, fence: u64, id: &str) -> Option<u64> {
    match append_with(db, client_id, fence, id, DeliveryState::Pending, 1_000).await {
        Appended::Logged(e) => Some(e.seq),
        Appended::FencedOut => None,
        Appended::Full => panic!("{client_id} is full"),
    }
}

async fn append_with(
    db: &Db,
    client_id: &str,
    fence: u64,
    id: &str,
    state: DeliveryState,
    cap: u64,
) -> Appended {
    let new = NewEvent {
        event_id: id,
        kind: "text",
        state,
        cap,
    };
    let id = id.to_string();
    db.append_event(client_id, fence, new, move |seq| {
        format!(r#"{{"eventId":"{id}","seq":{seq}}}"#).into_bytes()
    })
    .await
    .expect("append")
}

async fn seq_is_gap_free_per_session_and_bodies_see_it(db: &Db) {
    owned(db, "a", 1).await;
    owned(db, "b", 1).await;
    assert_eq!(append(db, "a", 1, "a1").await, Some(1));
    assert_eq!(append(db, "a", 1, "a2").await, Some(2));
    assert_eq!(append(db, "b", 1, "b1").await, Some(1));
    assert_eq!(append(db, "a", 1, "a3").await, Some(3));
    let events = db.events_after("a", 0, 100).await.expect("read");
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [1, 2, 3]);
    assert_eq!(events[1].event_id, "a2");
    assert_eq!(events[1].body, br#"{"eventId":"a2","seq":2}"#);
    assert_eq!(events[1].delivery.state, DeliveryState::Pending);
    assert_eq!(events[1].delivery.attempts, 0);
    // Paging: after 1, at most 1.
    let page = db.events_after("a", 1, 1).await.expect("page");
    assert_eq!(page.iter().map(|e| e.seq).collect::<Vec<_>>(), [2]);
    // An unknown session has no events and cannot append.
    assert!(db.events_after("nobody", 0, 10).await.unwrap().is_empty());
    assert_eq!(append(db, "nobody", 1, "n1").await, None);
}

async fn a_fenced_out_owner_cannot_append(db: &Db) {
    owned(db, "moved", 3).await;
    assert_eq!(append(db, "moved", 3, "m1").await, Some(1));
    // A newer owner claims the session: the old one's append writes nothing.
    assert!(
        db.fenced_update("moved", 4, StatePatch::default())
            .await
            .unwrap()
    );
    assert_eq!(append(db, "moved", 3, "m-stale").await, None);
    assert_eq!(append(db, "moved", 4, "m2").await, Some(2));
    let ids: Vec<String> = db
        .events_after("moved", 0, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event_id)
        .collect();
    assert_eq!(ids, ["m1", "m2"]);
}

/// Two handles (two processes) append to one session: each writer's next
/// append follows the other's (a writer that last wrote the session does
/// not take its `seq` for granted), and a newer owner's fence still shuts
/// the older one out.
async fn a_writer_sees_what_another_appended_meanwhile(db: &Db) {
    owned(db, "shared", 1).await;
    let other = db.clone().with_keys(db.keys().clone());
    assert_eq!(append(db, "shared", 1, "s1").await, Some(1));
    assert_eq!(append(&other, "shared", 1, "s2").await, Some(2));
    assert_eq!(append(db, "shared", 1, "s3").await, Some(3));
    assert_eq!(append(db, "shared", 1, "s4").await, Some(4));
    assert!(
        other
            .fenced_update("shared", 2, StatePatch::default())
            .await
            .unwrap()
    );
    assert_eq!(append(&other, "shared", 2, "s5").await, Some(5));
    assert_eq!(append(db, "shared", 1, "stale").await, None);
    assert_eq!(append(&other, "shared", 2, "s6").await, Some(6));
    let ids: Vec<String> = db
        .events_after("shared", 0, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event_id)
        .collect();
    assert_eq!(ids, ["s1", "s2", "s3", "s4", "s5", "s6"]);
}

async fn concurrent_appends_never_share_a_seq(db: &Db) {
    owned(db, "busy", 1).await;
    let tasks: Vec<_> = (0..40)
        .map(|i| {
            let db = db.clone();
            tokio::spawn(async move { append(&db, "busy", 1, &format!("busy-{i}")).await })
        })
        .collect();
    let mut seqs = Vec::new();
    for task in tasks {
        seqs.push(task.await.expect("task").expect("appended"));
    }
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=40).collect::<Vec<u64>>());
}

async fn attempts_are_counted_and_dead_letters_paged(db: &Db) {
    owned(db, "s", 1).await;
    for i in 1..=5 {
        append(db, "s", 1, &format!("s{i}")).await.expect("append");
    }
    db.record_attempt("s", 1, 0, DeliveryState::Delivered, Some(200))
        .await
        .unwrap();
    for _ in 0..3 {
        db.record_attempt("s", 2, 0, DeliveryState::Pending, Some(503))
            .await
            .unwrap();
    }
    db.record_attempt("s", 2, 0, DeliveryState::Dead, None)
        .await
        .unwrap();
    db.record_attempt("s", 4, 0, DeliveryState::Rejected, Some(410))
        .await
        .unwrap();
    db.record_attempt("s", 5, 0, DeliveryState::Dead, Some(500))
        .await
        .unwrap();
    let events = db.events_after("s", 0, 10).await.unwrap();
    let first = &events[0].delivery;
    assert_eq!((first.state, first.attempts), (DeliveryState::Delivered, 1));
    assert_eq!(first.last_status, Some(200));
    assert!(first.last_attempt_at.is_some());
    let second = &events[1].delivery;
    assert_eq!((second.state, second.attempts), (DeliveryState::Dead, 4));
    assert_eq!(second.last_status, None, "a timeout has no status");

    let (page, total) = db.dead_letters("s", 1, 2).await.unwrap();
    assert_eq!(total, 3);
    assert_eq!(page.iter().map(|e| e.seq).collect::<Vec<_>>(), [2, 4]);
    let (page, _) = db.dead_letters("s", 2, 2).await.unwrap();
    assert_eq!(page.iter().map(|e| e.seq).collect::<Vec<_>>(), [5]);
    let pending = db.pending_events("s", 0, 10).await.unwrap();
    assert_eq!(pending.iter().map(|e| e.seq).collect::<Vec<_>>(), [3]);
}

async fn redeliver_by_ids_or_after_a_seq(db: &Db) {
    owned(db, "r", 1).await;
    for i in 1..=4 {
        append(db, "r", 1, &format!("r{i}")).await.expect("append");
        db.record_attempt("r", i, 0, DeliveryState::Dead, Some(503))
            .await
            .unwrap();
    }
    // One the webhook did not select: left out of a redelivery from a seq.
    let not_selected = append_with(db, "r", 1, "r5", DeliveryState::NotSelected, 1_000).await;
    assert!(
        matches!(not_selected, Appended::Logged(ref e) if e.seq == 5),
        "{not_selected:?}"
    );
    owned(db, "other", 1).await;
    append(db, "other", 1, "o1").await.expect("append");

    let by_id = Redeliver::Ids(vec!["r2".into(), "o1".into(), "unknown".into()]);
    let queued = db.requeue_events("r", &by_id).await.unwrap();
    assert_eq!(queued.iter().map(|e| e.seq).collect::<Vec<_>>(), [2]);
    assert_eq!(queued[0].delivery.state, DeliveryState::Pending);
    assert_eq!(queued[0].delivery.attempts, 0);
    assert_eq!(queued[0].delivery.requeues, 1);
    assert_eq!(queued[0].event_id, "r2", "same eventId");
    // A late record of the delivery begun before the redelivery (it read
    // the row with no requeue) does not undo it; the new round's does count.
    db.record_attempt("r", 2, 0, DeliveryState::Dead, Some(503))
        .await
        .unwrap();
    db.set_event_state("r", 2, 0, DeliveryState::None)
        .await
        .unwrap();
    let again = &db.events_after("r", 1, 1).await.unwrap()[0].delivery;
    assert_eq!(
        (again.state, again.attempts, again.requeues),
        (DeliveryState::Pending, 0, 1),
        "the redelivery stands"
    );
    db.record_attempt("r", 2, 1, DeliveryState::Pending, Some(503))
        .await
        .unwrap();
    let counted = &db.events_after("r", 1, 1).await.unwrap()[0].delivery;
    assert_eq!(
        (counted.state, counted.attempts),
        (DeliveryState::Pending, 1)
    );

    let queued = db
        .requeue_events("r", &Redeliver::AfterSeq(2))
        .await
        .unwrap();
    assert_eq!(queued.iter().map(|e| e.seq).collect::<Vec<_>>(), [3, 4]);
    let (_, dead) = db.dead_letters("r", 1, 10).await.unwrap();
    assert_eq!(dead, 1, "only r1 is still a dead letter");
    let kept = db.events_after("r", 4, 10).await.unwrap();
    assert_eq!(kept[0].delivery.state, DeliveryState::NotSelected);
    // Named by id, it is queued like any other.
    let queued = db
        .requeue_events("r", &Redeliver::Ids(vec!["r5".into()]))
        .await
        .unwrap();
    assert_eq!(queued.iter().map(|e| e.seq).collect::<Vec<_>>(), [5]);
    assert_eq!(queued[0].delivery.state, DeliveryState::Pending);
}

async fn bodies_are_sealed_at_rest(db: &Db) {
    let sealed = sealing(db);
    owned(&sealed, "secret", 1).await;
    append(&sealed, "secret", 1, "x1").await.expect("append");
    let row = db
        .conn()
        .query_one_raw(sea_orm::Statement::from_string(
            db.conn().get_database_backend(),
            "SELECT body, stream_seq FROM events WHERE event_id = 'x1'",
        ))
        .await
        .unwrap()
        .expect("row");
    let body: Vec<u8> = row.try_get("", "body").unwrap();
    let read = sealed.events_after("secret", 0, 1).await.unwrap();
    assert_eq!(read[0].body, br#"{"eventId":"x1","seq":1}"#);
    if db.event_stream().is_some() {
        // In the cluster the row holds no body: the stream has it (its
        // protection at rest is the NATS server's, docs/security.md).
        let at: Option<i64> = row.try_get("", "stream_seq").unwrap();
        assert!(body.is_empty() && at.is_some(), "{body:?} {at:?}");
        return;
    }
    assert!(!body.windows(4).any(|w| w == b"\"x1\""), "sealed at rest");
    // Without the key the body does not open: an error, never garbage.
    assert!(db.events_after("secret", 0, 1).await.is_err());
}

async fn disconnect_and_retention_delete_events(db: &Db) {
    owned(db, "gone", 1).await;
    owned(db, "kept", 1).await;
    append(db, "gone", 1, "g1").await.expect("append");
    append(db, "kept", 1, "k1").await.expect("append");
    assert!(db.delete_session("gone").await.unwrap());
    assert!(db.events_after("gone", 0, 10).await.unwrap().is_empty());
    assert_eq!(db.events_after("kept", 0, 10).await.unwrap().len(), 1);
    // A new session of the same name starts its log afresh.
    owned(db, "gone", 1).await;
    assert_eq!(append(db, "gone", 1, "g-again").await, Some(1));

    assert_eq!(
        db.prune_events(Utc::now() - Duration::hours(1))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        db.prune_events(Utc::now() + Duration::seconds(1))
            .await
            .unwrap(),
        2
    );
    assert!(db.events_after("kept", 0, 10).await.unwrap().is_empty());
}

async fn a_full_window_refuses_pending_events_and_trims_the_rest(db: &Db) {
    owned(db, "slow", 1).await;
    let pending = |n: u32| format!("p{n}");
    for n in 1..=3 {
        let got = append_with(db, "slow", 1, &pending(n), DeliveryState::Pending, 3).await;
        assert!(matches!(got, Appended::Logged(_)), "{got:?}");
    }
    // Three undelivered: the fourth is refused, and takes no seq.
    let got = append_with(db, "slow", 1, "p4", DeliveryState::Pending, 3).await;
    assert_eq!(got, Appended::Full);
    // The oldest is delivered: room for one more, with the next seq.
    db.record_attempt("slow", 1, 0, DeliveryState::Delivered, Some(200))
        .await
        .unwrap();
    let Appended::Logged(e) = append_with(db, "slow", 1, "p4", DeliveryState::Pending, 3).await
    else {
        panic!("room after a delivery")
    };
    assert_eq!(e.seq, 4);
    // The window is full again: an event the webhook did not select is
    // logged all the same (it is not undelivered), a pending one is not.
    let got = append_with(db, "slow", 1, "n5", DeliveryState::NotSelected, 3).await;
    let Appended::Logged(e) = got else {
        panic!("refused: {got:?}")
    };
    assert_eq!((e.seq, e.delivery.state), (5, DeliveryState::NotSelected));
    let got = append_with(db, "slow", 1, "p6", DeliveryState::Pending, 3).await;
    assert_eq!(got, Appended::Full);

    // Without a webhook nothing is refused; past the cap, the oldest events
    // that need nothing more are deleted (every 256 appends), pending ones kept.
    owned(db, "unhooked", 1).await;
    for n in 1..=256 {
        let got = append_with(
            db,
            "unhooked",
            1,
            &format!("u{n}"),
            DeliveryState::None,
            100,
        )
        .await;
        assert!(matches!(got, Appended::Logged(_)), "{n}: {got:?}");
    }
    let kept = db.events_after("unhooked", 0, 1_000).await.unwrap();
    assert_eq!(kept.len(), 100);
    assert_eq!(kept[0].seq, 157);
    if let Some(stream) = db.event_stream() {
        // Their bodies left the stream with them: its oldest is seq 157's.
        let client = async_nats::connect(parley_shared::db::testing::nats_url())
            .await
            .expect("NATS");
        let raw = async_nats::jetstream::new(client)
            .get_stream(stream.name())
            .await
            .expect("stream");
        let first = raw
            .get_first_raw_message_by_subject(stream.subject("unhooked"), 0)
            .await
            .expect("first body");
        let seq = first.headers.get(parley_shared::event_stream::SEQ_HEADER);
        assert_eq!(seq.map(|v| v.as_str()), Some("157"));
    }
}

/// Appends queued while the log's writers wait are committed together, and
/// each gets its own answer: logged with the session's next seq, fenced out,
/// full, or a duplicate; a refused event takes no seq.
async fn appends_committed_together_each_get_their_own_answer(db: &Db) {
    for client_id in ["a", "b", "full"] {
        owned(db, client_id, 1).await;
    }
    owned(db, "moved", 2).await;
    assert_eq!(append(db, "full", 1, "f1").await, Some(1));
    assert_eq!(append(db, "b", 1, "old").await, Some(1));

    // Hold the writers' transactions up (SQLite: the write lock; PostgreSQL:
    // the sessions' rows) with a0 in one, so that what follows queues up.
    let blocker = db.begin_write().await.expect("begin");
    blocker
        .execute_unprepared(match db.backend() {
            "postgres" => {
                "SELECT 1 FROM sessions WHERE client_id IN ('a', 'b', 'moved', 'full') FOR UPDATE"
            }
            _ => "UPDATE sessions SET event_seq = event_seq WHERE client_id = 'a'",
        })
        .await
        .expect("lock");
    let (transactions, events) = db.event_log_transactions();
    let spawn = |(client_id, fence, id, state, cap): (&str, u64, &str, DeliveryState, u64)| {
        let (db, client_id, id) = (db.clone(), client_id.to_string(), id.to_string());
        tokio::spawn(async move {
            let new = NewEvent {
                event_id: &id,
                kind: "text",
                state,
                cap,
            };
            let got = db
                .append_event(&client_id, fence, new, |seq| {
                    format!(r#"{{"seq":{seq}}}"#).into_bytes()
                })
                .await;
            (id, got)
        })
    };
    let first = spawn(("a", 1, "a0", DeliveryState::Pending, 1_000));
    wait_until("a0 is in the held transaction", || {
        db.event_log_transactions() == (transactions + 1, events + 1)
    })
    .await;
    let requests: Vec<(&str, u64, &str, DeliveryState, u64)> = vec![
        ("a", 1, "a1", DeliveryState::Pending, 1_000),
        ("a", 1, "a2", DeliveryState::Pending, 1_000),
        ("b", 1, "b2", DeliveryState::Pending, 1_000),
        ("moved", 1, "m1", DeliveryState::Pending, 1_000),
        ("full", 1, "f2", DeliveryState::Pending, 1),
        ("b", 1, "old", DeliveryState::Pending, 1_000),
        ("b", 1, "twin", DeliveryState::None, 1_000),
        ("b", 1, "twin", DeliveryState::None, 1_000),
    ];
    let n = requests.len();
    let mut tasks: Vec<_> = requests.into_iter().map(spawn).collect();
    // Every one is queued, or taken by a writer that waits for the locks.
    wait_until("the rest queued up", || {
        let (_, taken) = db.event_log_transactions();
        db.queued_appends() as u64 + (taken - events - 1) == n as u64
    })
    .await;
    blocker.rollback().await.expect("release");
    tasks.insert(0, first);

    let mut logged = std::collections::BTreeMap::new();
    let (mut fenced, mut full, mut conflicts) = (Vec::new(), Vec::new(), Vec::new());
    for task in tasks {
        match task.await.expect("task") {
            (id, Ok(Appended::Logged(e))) => {
                assert_eq!(e.body, format!(r#"{{"seq":{}}}"#, e.seq).into_bytes());
                logged.insert(id, (e.client_id, e.seq));
            }
            (id, Ok(Appended::FencedOut)) => fenced.push(id),
            (id, Ok(Appended::Full)) => full.push(id),
            (id, Err(parley_shared::db::DbError::Conflict(_))) => conflicts.push(id),
            (id, other) => panic!("{id}: {other:?}"),
        }
    }
    assert_eq!(fenced, ["m1"]);
    assert_eq!(full, ["f2"]);
    conflicts.sort();
    assert_eq!(conflicts, ["old", "twin"], "a logged id, and a second copy");
    // a's three were in flight together: gap-free.
    let mut a: Vec<u64> = ["a0", "a1", "a2"].iter().map(|id| logged[*id].1).collect();
    a.sort_unstable();
    assert_eq!(a, [1, 2, 3]);
    let mut b: Vec<u64> = ["b2", "twin"].iter().map(|id| logged[*id].1).collect();
    b.sort_unstable();
    assert_eq!(b, [2, 3], "b's seq goes on from its first event, gap-free");
    assert!(db.events_after("moved", 0, 10).await.unwrap().is_empty());
    // The refused event took no seq: the next one is 2.
    assert_eq!(append(db, "full", 1, "f3").await, Some(2));
    // Ten requests, and what queued behind the held ones went in one
    // transaction: a0's, the eight's, f3's; on PostgreSQL at most two more
    // (a batch whose statement meets a logged id is written again request by
    // request).
    let (t, e) = db.event_log_transactions();
    assert_eq!(e - events, n as u64 + 2);
    let most = if db.backend() == "postgres" { 5 } else { 3 };
    assert!(
        t - transactions <= most,
        "{} transactions",
        t - transactions
    );
}

/// Appends queued one after another without waiting for their commits (a
/// session's received messages in flight together) are written in the order
/// queued: each session's seqs follow it, whichever writer and transaction
/// took them.
async fn a_sessions_queued_appends_keep_their_order(db: &Db) {
    const EACH: usize = 40;
    let sessions = ["first", "second", "third"];
    for client_id in sessions {
        owned(db, client_id, 1).await;
    }
    let mut queued = Vec::new();
    for i in 0..EACH {
        for client_id in sessions {
            let id = format!("{client_id}-{i}");
            let new = NewEvent {
                event_id: &id,
                kind: "text",
                state: DeliveryState::Pending,
                cap: 1_000,
            };
            let body = |seq| format!(r#"{{"seq":{seq}}}"#).into_bytes();
            let answer = db
                .enqueue_event(client_id, 1, new, body)
                .await
                .expect("queued");
            queued.push((client_id, id, answer));
        }
    }
    let mut seqs: std::collections::BTreeMap<&str, Vec<u64>> = Default::default();
    for (client_id, id, answer) in queued {
        match answer.answer().await {
            Ok(Appended::Logged(e)) => seqs.entry(client_id).or_default().push(e.seq),
            other => panic!("{id}: {other:?}"),
        }
    }
    let expected: Vec<u64> = (1..=EACH as u64).collect();
    for client_id in sessions {
        assert_eq!(
            seqs[client_id], expected,
            "{client_id}'s seqs in queued order"
        );
        let logged: Vec<String> = db
            .events_after(client_id, 0, 100)
            .await
            .expect("read")
            .into_iter()
            .map(|e| e.event_id)
            .collect();
        let ids: Vec<String> = (0..EACH).map(|i| format!("{client_id}-{i}")).collect();
        assert_eq!(logged, ids, "{client_id}'s log in queued order");
        assert!(db.event_logged(&ids[0]).await.expect("look"));
    }
    assert!(!db.event_logged("never-queued").await.expect("look"));
}

/// Delivery records of one event that queue up together are written in one
/// transaction as if one after another: its last state, every attempt
/// counted, the last attempt's status.
async fn an_events_records_in_one_transaction_apply_in_order(db: &Db) {
    owned(db, "r", 1).await;
    append(db, "r", 1, "r1").await.expect("append");
    append(db, "r", 1, "r2").await.expect("append");
    let blocker = db.begin_write().await.expect("begin");
    blocker
        .execute_unprepared(match db.backend() {
            "postgres" => "SELECT 1 FROM events WHERE client_id = 'r' FOR UPDATE",
            _ => "UPDATE sessions SET event_seq = event_seq WHERE client_id = 'r'",
        })
        .await
        .expect("lock");
    let record = |seq: u64, state: DeliveryState, status: Option<Option<u16>>| {
        let db = db.clone();
        tokio::spawn(async move {
            match status {
                Some(status) => db.record_attempt("r", seq, 0, state, status).await,
                None => db.set_event_state("r", seq, 0, state).await,
            }
        })
    };
    let (transactions, requests) = db.event_log_transactions();
    let mut tasks = vec![record(2, DeliveryState::Pending, Some(Some(500)))];
    wait_until("the first record is in the held transaction", || {
        db.event_log_transactions() == (transactions + 1, requests + 1)
    })
    .await;
    let queued = [
        (1, DeliveryState::Pending, Some(Some(503))),
        (1, DeliveryState::Pending, Some(None)),
        (2, DeliveryState::Dead, None),
        (1, DeliveryState::Delivered, Some(Some(200))),
    ];
    for (i, (seq, state, status)) in queued.into_iter().enumerate() {
        tasks.push(record(seq, state, status));
        wait_until("queued in order", || db.queued_appends() == i + 1).await;
    }
    blocker.rollback().await.expect("release");
    for task in tasks {
        task.await.expect("task").expect("recorded");
    }
    assert_eq!(
        db.event_log_transactions(),
        (transactions + 2, requests + 5),
        "the held record, then the four queued behind it together"
    );
    let events = db.events_after("r", 0, 10).await.unwrap();
    let (first, second) = (&events[0].delivery, &events[1].delivery);
    assert_eq!((first.state, first.attempts), (DeliveryState::Delivered, 3));
    assert_eq!(first.last_status, Some(200), "the last attempt's status");
    assert_eq!((second.state, second.attempts), (DeliveryState::Dead, 1));
    assert_eq!(
        second.last_status,
        Some(500),
        "a state change keeps the status"
    );
}

/// A batch whose writes fail (its row's place taken behind the writer's
/// back) writes nothing: the session's `seq` is not moved, the writer's
/// transaction is rolled back (on SQLite it is open across two calls on the
/// writer's own connection), and its next batch writes.
async fn a_batch_that_fails_leaves_nothing_behind(db: &Db) {
    owned(db, "f", 1).await;
    assert_eq!(append(db, "f", 1, "f1").await, Some(1));
    db.conn()
        .execute_unprepared(
            "INSERT INTO events (client_id, seq, event_id, kind, body, state, attempts, created_at) \
             VALUES ('f', 2, 'stray', 'text', '', 'delivered', 0, CURRENT_TIMESTAMP)",
        )
        .await
        .expect("a row in the next place");
    let new = NewEvent {
        event_id: "f2",
        kind: "text",
        state: DeliveryState::Pending,
        cap: 1_000,
    };
    let refused = db.append_event("f", 1, new, |_| b"{}".to_vec()).await;
    assert!(refused.is_err(), "{refused:?}");
    db.conn()
        .execute_unprepared("DELETE FROM events WHERE event_id = 'stray'")
        .await
        .expect("the place freed");
    assert_eq!(append(db, "f", 1, "f2").await, Some(2));
    db.record_attempt("f", 2, 0, DeliveryState::Delivered, Some(200))
        .await
        .expect("a record alone");
    assert_eq!(append(db, "f", 1, "f3").await, Some(3));
    let events = db.events_after("f", 0, 10).await.unwrap();
    let ids: Vec<&str> = events.iter().map(|e| e.event_id.as_str()).collect();
    assert_eq!(ids, ["f1", "f2", "f3"]);
    assert_eq!(events[1].delivery.state, DeliveryState::Delivered);
}

/// Waits up to 10 s for `done`.
pub(super) async fn wait_until(what: &str, done: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: not within 10 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
}
