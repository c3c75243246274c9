//! The dispatcher against a real local receiver: headers, signature, the retry
//! contract, isolation between sessions, pause and resume, token rotation, bounds.
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use parley_tests::receiver::{Behaviour, Receiver};

use super::*;

const TOKEN: &str = "receiver-token-0123456789abcdef0123";

/// A test's `clientId`.
fn cid(raw: &str) -> ClientId {
    ClientId::parse(raw).expect("a clientId")
}

fn fast() -> RetryPolicy {
    RetryPolicy {
        attempts: 4,
        first_delay: Duration::from_millis(50),
        timeout: Duration::from_millis(400),
        max_retry_after: Duration::from_secs(2),
        concurrency: 2,
        queue: 8,
    }
}

fn open() -> Egress {
    Egress::direct(true)
}

fn event(n: u32) -> Delivery {
    Delivery {
        parent: tracing::Span::none(),
        id: format!("evt_{n}"),
        seq: 0,
        attempts: 0,
        requeues: 0,
        kind: "text".into(),
        body: Bytes::from(format!(r#"{{"type":"text","body":"hello {n}"}}"#)),
    }
}

fn target(url: &str) -> (watch::Sender<Target>, watch::Receiver<Target>) {
    watch::channel(Target {
        url: url.into(),
        token: TOKEN.into(),
    })
}

#[tokio::test]
async fn headers_and_a_verifiable_signature() {
    let mut rx = Receiver::start().await;
    let d = Dispatcher::new(open(), fast()).unwrap();
    let (_t, target) = target(&rx.url);
    d.deliver(&cid("c1"), &target, &event(1)).await.unwrap();
    let req = rx.next(Duration::from_secs(5)).await;
    assert_eq!(req.method, "POST");
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_eq!(req.header("user-agent"), Some("Parley-Messaging/1"));
    assert_eq!(req.header("x-sn-event"), Some("text"));
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(req.header("webhook-id"), Some("evt_1"));
    let mut headers = http::HeaderMap::new();
    for name in ["webhook-id", "webhook-timestamp", "webhook-signature"] {
        headers.insert(name, req.header(name).unwrap().parse().unwrap());
    }
    standardwebhooks::Webhook::from_bytes(TOKEN.as_bytes().to_vec())
        .unwrap()
        .verify(&req.body, &headers)
        .expect("a Standard Webhooks verifier accepts it");
    assert_eq!(d.stats().delivered.load(Ordering::Relaxed), 1);
}

#[tokio::test]
async fn two_failures_then_success_is_three_attempts_with_one_id() {
    let mut rx = Receiver::start().await;
    rx.script([Behaviour::Status(500), Behaviour::Status(503)]);
    let d = Dispatcher::new(open(), fast()).unwrap();
    let (_t, target) = target(&rx.url);
    d.deliver(&cid("c1"), &target, &event(1)).await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(rx.next(Duration::from_secs(5)).await);
    }
    assert!(seen.iter().all(|r| r.header("webhook-id") == Some("evt_1")));
    assert!(
        rx.maybe_next(Duration::from_millis(300)).await.is_none(),
        "no fourth attempt"
    );
    assert_eq!(d.stats().retried.load(Ordering::Relaxed), 2);
}

#[tokio::test]
async fn a_4xx_is_not_retried_and_5xx_forever_gives_up_after_four() {
    let mut rx = Receiver::start().await;
    rx.script([Behaviour::Status(400)]);
    let d = Dispatcher::new(open(), fast()).unwrap();
    let (_t, target) = target(&rx.url);
    assert_eq!(
        d.deliver(&cid("c1"), &target, &event(1)).await,
        Err(DropReason::Rejected)
    );
    rx.next(Duration::from_secs(5)).await;
    assert!(rx.maybe_next(Duration::from_millis(300)).await.is_none());

    rx.set_default(Behaviour::Status(500));
    assert_eq!(
        d.deliver(&cid("c1"), &target, &event(2)).await,
        Err(DropReason::Exhausted)
    );
    for _ in 0..4 {
        rx.next(Duration::from_secs(5)).await;
    }
    assert!(
        rx.maybe_next(Duration::from_millis(300)).await.is_none(),
        "exactly four attempts"
    );
    assert_eq!(d.stats().dropped_exhausted.load(Ordering::Relaxed), 1);
    assert_eq!(d.stats().dropped_rejected.load(Ordering::Relaxed), 1);
}

#[tokio::test]
async fn a_429_is_retried_after_its_retry_after() {
    let mut rx = Receiver::start().await;
    rx.script([Behaviour::RetryAfter(429, 1)]);
    let d = Dispatcher::new(open(), fast()).unwrap();
    let (_t, target) = target(&rx.url);
    d.deliver(&cid("c1"), &target, &event(1)).await.unwrap();
    let first = rx.next(Duration::from_secs(5)).await;
    let second = rx.next(Duration::from_secs(5)).await;
    assert!(
        second.at - first.at >= Duration::from_millis(950),
        "{:?}",
        second.at - first.at
    );
}

#[tokio::test]
async fn a_receiver_that_hangs_times_out_and_is_retried() {
    let mut rx = Receiver::start().await;
    rx.script([Behaviour::Hang]);
    let d = Dispatcher::new(open(), fast()).unwrap();
    let (_t, target) = target(&rx.url);
    d.deliver(&cid("c1"), &target, &event(1)).await.unwrap();
    let first = rx.next(Duration::from_secs(5)).await;
    let second = rx.next(Duration::from_secs(5)).await;
    assert!(second.at - first.at >= fast().timeout);
}

#[tokio::test]
async fn a_dead_receiver_does_not_delay_another_session() {
    let dead = Receiver::start().await;
    dead.set_default(Behaviour::Hang);
    let mut alive = Receiver::start().await;
    let d = Dispatcher::new(open(), fast()).unwrap();
    let (_a, dead_target) = target(&dead.url);
    let (_b, alive_target) = target(&alive.url);
    let slow = d.session(&cid("slow"), dead_target);
    let quick = d.session(&cid("quick"), alive_target);
    for n in 0..8 {
        slow.enqueue(event(n));
    }
    let t0 = Instant::now();
    for n in 0..5 {
        quick.enqueue(event(100 + n));
    }
    for _ in 0..5 {
        alive.next(Duration::from_secs(2)).await;
    }
    assert!(
        t0.elapsed() < Duration::from_millis(300),
        "{:?}",
        t0.elapsed()
    );
}

#[tokio::test]
async fn the_queue_is_bounded_and_drops_are_counted() {
    let dead = Receiver::start().await;
    dead.set_default(Behaviour::Hang);
    let d = Dispatcher::new(open(), fast()).unwrap();
    let (_t, target) = target(&dead.url);
    let q = d.session(&cid("c1"), target);
    let policy = fast();
    let offered = (policy.queue + policy.concurrency + 20) as u32;
    let accepted = (0..offered).filter(|n| q.enqueue(event(*n))).count();
    // What is in flight plus the queue is all that is held; the rest is dropped.
    assert!(
        accepted <= policy.queue + policy.concurrency + 1,
        "{accepted}"
    );
    assert_eq!(
        d.stats().dropped_queue_full.load(Ordering::Relaxed),
        u64::from(offered) - accepted as u64
    );
}

#[tokio::test]
async fn pause_resume_and_token_rotation_apply_to_the_next_call() {
    let mut rx = Receiver::start().await;
    let d = Dispatcher::new(open(), fast()).unwrap();
    let (set, target) = watch::channel(Target {
        url: String::new(),
        token: TOKEN.into(),
    });
    assert_eq!(
        d.deliver(&cid("c1"), &target, &event(1)).await,
        Err(DropReason::NoWebhook)
    );
    assert!(rx.maybe_next(Duration::from_millis(200)).await.is_none());
    set.send_replace(Target {
        url: rx.url.clone(),
        token: TOKEN.into(),
    });
    d.deliver(&cid("c1"), &target, &event(2)).await.unwrap();
    assert_eq!(
        rx.next(Duration::from_secs(5)).await.header("webhook-id"),
        Some("evt_2")
    );
    set.send_replace(Target {
        url: rx.url.clone(),
        token: "rotated-token-abcdefghijklmnopqrstuv".into(),
    });
    d.deliver(&cid("c1"), &target, &event(3)).await.unwrap();
    let req = rx.next(Duration::from_secs(5)).await;
    assert_eq!(
        req.header("authorization"),
        Some("Bearer rotated-token-abcdefghijklmnopqrstuv")
    );
}

#[tokio::test]
async fn the_egress_guard_refuses_internal_receivers() {
    let mut rx = Receiver::start().await;
    let d = Dispatcher::new(Egress::direct(false), fast()).unwrap();
    let (_t, target) = target(&rx.url);
    assert_eq!(
        d.deliver(&cid("c1"), &target, &event(1)).await,
        Err(DropReason::Egress)
    );
    let by_name = rx.url.replace("127.0.0.1", "localhost");
    let (_t2, target) = watch::channel(Target {
        url: by_name,
        token: TOKEN.into(),
    });
    assert_eq!(
        d.deliver(&cid("c1"), &target, &event(2)).await,
        Err(DropReason::Egress)
    );
    assert!(rx.maybe_next(Duration::from_millis(200)).await.is_none());
}

/// A logged event that finds the session's channel full is read from the
/// log instead, after what the channel holds: every event arrives once, none
/// lost, none twice, though most overflowed (events logged ahead of their
/// queueing, a channel of 2, one delivery at a time).
#[tokio::test]
async fn a_full_channel_loses_no_logged_event_and_repeats_none() {
    const EVENTS: u32 = 150;
    let (db, _dir) = claimed_log().await;
    let mut rx = Receiver::start().await;
    let policy = RetryPolicy {
        concurrency: 1,
        queue: 2,
        ..fast()
    };
    let d = Dispatcher::with_log(open(), policy, Some(db.clone())).unwrap();
    let (_t, target) = target(&rx.url);
    let q = d.session(&cid("c1"), target);
    // Logged ahead of their queueing, as a session's events are while the
    // ones before them commit.
    let mut logged = Vec::new();
    for n in 0..EVENTS {
        logged.push(log_event(&db, n).await);
    }
    for event in logged {
        assert!(q.enqueue(event));
    }
    let mut seen = std::collections::BTreeMap::<String, u32>::new();
    for _ in 0..EVENTS {
        let req = rx.next(Duration::from_secs(20)).await;
        let id = req.header("webhook-id").unwrap_or_default().to_string();
        *seen.entry(id).or_default() += 1;
    }
    assert_eq!(seen.len(), EVENTS as usize, "every event arrived");
    assert!(seen.values().all(|n| *n == 1), "none twice: {seen:?}");
    assert!(
        rx.maybe_next(Duration::from_millis(300)).await.is_none(),
        "nothing more"
    );
}

#[tokio::test]
async fn a_stopped_queue_records_the_attempt_under_way_and_leaves_retries_pending() {
    let (db, _dir) = claimed_log().await;
    let mut rx = Receiver::start().await;
    // The first request to arrive is answered 200 after a while, the second
    // 503 (its retry would come only after 30 s).
    rx.script([
        Behaviour::Slow(Duration::from_millis(800), 200),
        Behaviour::Status(503),
    ]);
    let policy = RetryPolicy {
        first_delay: Duration::from_secs(30),
        timeout: Duration::from_secs(3),
        ..fast()
    };
    let d = Dispatcher::with_log(open(), policy, Some(db.clone())).unwrap();
    let (_t, target) = target(&rx.url);
    let q = d.session(&cid("c1"), target);
    for n in 0..2 {
        let event = log_event(&db, n).await;
        assert!(q.enqueue(event));
    }
    let mut answered = std::collections::HashMap::new();
    for _ in 0..2 {
        let req = rx.next(Duration::from_secs(5)).await;
        let id = req.header("webhook-id").unwrap_or_default().to_string();
        answered.insert(req.status, id);
    }
    let (slow, refused) = (&answered[&Some(200)], &answered[&Some(503)]);

    // Stopped while the slow attempt is under way and the other waits.
    let t0 = Instant::now();
    q.stop().await;
    let took = t0.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "the retry's wait was not waited out: {took:?}"
    );
    assert!(
        took >= Duration::from_millis(500),
        "the slow attempt was waited for: {took:?}"
    );
    let pending = db.pending_events("c1", 0, 10).await.expect("pending");
    let ids: Vec<&str> = pending.iter().map(|e| e.event_id.as_str()).collect();
    assert_eq!(
        ids,
        [refused.as_str()],
        "the delivered one is recorded: {slow}"
    );
    assert_eq!(pending[0].delivery.attempts, 1, "its attempt is counted");
    assert_eq!(pending[0].delivery.last_status, Some(503));
    assert!(
        rx.maybe_next(Duration::from_millis(300)).await.is_none(),
        "nothing more is tried after the stop"
    );
}

/// A redelivery asked for while the event's delivery is under way stands:
/// that delivery's late record (of the round before) changes nothing, and
/// the event goes out again once it ended.
#[tokio::test]
async fn a_redelivery_during_a_delivery_is_not_undone_by_its_late_record() {
    use parley_shared::db::events::{DeliveryState, Redeliver};
    let (db, _dir) = claimed_log().await;
    let mut rx = Receiver::start().await;
    // The first attempt is refused for good (410) after a while; the next taken.
    rx.script([
        Behaviour::Slow(Duration::from_millis(800), 410),
        Behaviour::Status(200),
    ]);
    let policy = RetryPolicy {
        timeout: Duration::from_secs(3),
        ..fast()
    };
    let d = Dispatcher::with_log(open(), policy, Some(db.clone())).unwrap();
    let (_t, target) = target(&rx.url);
    let q = d.session(&cid("c1"), target);
    let event = log_event(&db, 0).await;
    let id = event.id.clone();
    assert!(q.enqueue(event));
    let first = rx.next(Duration::from_secs(5)).await;
    assert_eq!(first.header("webhook-id"), Some(id.as_str()));
    // Queued again while the refused attempt is still under way.
    let queued = db
        .requeue_events("c1", &Redeliver::Ids(vec![id.clone()]))
        .await
        .expect("requeue");
    assert_eq!(queued.len(), 1);
    q.deliver_pending(0);
    let again = rx.next(Duration::from_secs(10)).await;
    assert_eq!(again.header("webhook-id"), Some(id.as_str()));
    assert_eq!(again.status, Some(200));
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let event = &db.events_after("c1", 0, 1).await.expect("read")[0];
        if event.delivery.state == DeliveryState::Delivered {
            assert_eq!((event.delivery.attempts, event.delivery.requeues), (1, 1));
            break;
        }
        assert!(
            Instant::now() < until,
            "not delivered: {:?}",
            event.delivery
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A SQLite event log with session `c1` claimed under fence 1.
async fn claimed_log() -> (parley_shared::db::Db, tempfile::TempDir) {
    use parley_shared::db::{Db, NewSession, StatePatch};
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("parley.db").display());
    let db = Db::connect(&url).await.expect("sqlite");
    db.migrate().await.expect("migrations");
    db.create_session(NewSession {
        client_id: "c1".into(),
        ..NewSession::default()
    })
    .await
    .expect("session");
    assert!(
        db.fenced_update("c1", 1, StatePatch::default())
            .await
            .expect("claim")
    );
    (db, dir)
}

/// Logs event `evt_<n>` of `c1`; the delivery of what was logged.
async fn log_event(db: &parley_shared::db::Db, n: u32) -> Delivery {
    use parley_shared::db::events::{Appended, DeliveryState, NewEvent};
    let id = format!("evt_{n}");
    let new = NewEvent {
        event_id: &id,
        kind: "text",
        state: DeliveryState::Pending,
        cap: 10_000,
    };
    let body = |seq: u64| format!(r#"{{"seq":{seq}}}"#).into_bytes();
    let Appended::Logged(event) = db.append_event("c1", 1, new, body).await.expect("append") else {
        panic!("{id} not logged");
    };
    Delivery {
        parent: tracing::Span::none(),
        id: event.event_id,
        seq: event.seq,
        attempts: 0,
        requeues: 0,
        kind: "text".into(),
        body: Bytes::from(event.body),
    }
}
