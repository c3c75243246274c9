//! The delivery contract against a real receiver: retries by answer, one
//! `webhook-id` across attempts, a dead receiver that does not hold up another
//! session, pause and resume, token rotation.
use std::time::{Duration, Instant};

use parley_tests::receiver::{Behaviour, Receiver};
use serde_json::json;

use super::support::*;
use crate::support::*;

/// After its last drop, nothing more of an event may arrive for this long
/// (the retry schedule's first gap is at most 0.6 s).
const QUIET: Duration = Duration::from_millis(1500);

#[tokio::test]
async fn answers_decide_retries_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_events(dir.path()).await;
    let mut rx = Receiver::start().await;
    hooked(&p, "rt", &rx.url, json!({})).await;
    contact(&p).await;

    // 500, 500, 200: three attempts with one webhook-id, about 0.5 s then 1 s apart.
    rx.script([Behaviour::Status(500), Behaviour::Status(500)]);
    let id = text(&p, "rt", "three attempts").await;
    let attempts: Vec<_> = futures_collect(&mut rx, 3).await;
    for a in &attempts {
        assert_eq!(a.json()["messageId"], id.as_str());
        assert_eq!(a.header("webhook-id"), attempts[0].header("webhook-id"));
    }
    let gap1 = attempts[1].at - attempts[0].at;
    let gap2 = attempts[2].at - attempts[1].at;
    assert!(
        gap1 >= Duration::from_millis(350) && gap1 < Duration::from_millis(1500),
        "{gap1:?}"
    );
    assert!(
        gap2 >= Duration::from_millis(750) && gap2 < Duration::from_millis(2500),
        "{gap2:?}"
    );
    assert!(
        rx.maybe_next(QUIET).await.is_none(),
        "delivered: no fourth attempt"
    );

    // 400: one attempt, then dropped as rejected.
    rx.script([Behaviour::Status(400)]);
    let id = text(&p, "rt", "rejected").await;
    assert_eq!(rx.next(WAIT).await.json()["messageId"], id.as_str());
    dropped_reaches(&p, "rejected", 1).await;
    assert!(rx.maybe_next(QUIET).await.is_none(), "a 4xx is not retried");

    // 500 forever: four attempts, then dropped as exhausted.
    rx.set_default(Behaviour::Status(500));
    let id = text(&p, "rt", "exhausted").await;
    let attempts = futures_collect(&mut rx, 4).await;
    assert!(
        attempts
            .iter()
            .all(|a| a.json()["messageId"] == id.as_str())
    );
    dropped_reaches(&p, "exhausted", 1).await;
    assert!(rx.maybe_next(QUIET).await.is_none(), "no fifth attempt");

    // 429 with Retry-After is retried after the given wait.
    rx.set_default(Behaviour::Status(200));
    rx.script([Behaviour::RetryAfter(429, 1)]);
    let id = text(&p, "rt", "throttled").await;
    let attempts = futures_collect(&mut rx, 2).await;
    assert!(
        attempts
            .iter()
            .all(|a| a.json()["messageId"] == id.as_str())
    );
    let gap = attempts[1].at - attempts[0].at;
    assert!(
        gap >= Duration::from_millis(900),
        "Retry-After honoured: {gap:?}"
    );
}

#[tokio::test]
async fn a_hanging_receiver_times_out_and_is_retried() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_events(dir.path()).await;
    let mut rx = Receiver::start().await;
    hooked(&p, "hang", &rx.url, json!({})).await;
    contact(&p).await;
    rx.script([Behaviour::Hang]);
    let id = text(&p, "hang", "slow receiver").await;
    let first = rx.next(WAIT).await;
    let second = rx.next(Duration::from_secs(25)).await;
    assert_eq!(second.json()["messageId"], id.as_str());
    assert_eq!(second.header("webhook-id"), first.header("webhook-id"));
    let waited = second.at - first.at;
    assert!(
        waited >= Duration::from_secs(15) && waited < Duration::from_secs(20),
        "15 s timeout, then the retry: {waited:?}"
    );
}

#[tokio::test]
async fn a_dead_receiver_does_not_delay_another_session() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_events(dir.path()).await;
    let dead = Receiver::start().await;
    dead.set_default(Behaviour::Hang);
    let mut live = Receiver::start().await;
    hooked(&p, "dead", &dead.url, json!({})).await;
    // Another account: one account's sessions all receive its messages.
    hooked_as(&p, "alive", &live.url, json!({}), "4915100000302").await;
    contact(&p).await;
    for n in 0..30 {
        text(&p, "dead", &format!("stuck {n}")).await;
    }
    let started = Instant::now();
    for n in 0..10 {
        let id = text(&p, "alive", &format!("prompt {n}")).await;
        let req = live.next(WAIT).await;
        assert_eq!(req.json()["messageId"], id.as_str());
    }
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "ten events of the healthy session took {took:?}"
    );
    drop(dead);
}

#[tokio::test]
async fn pause_resume_and_token_rotation_apply_to_the_next_event() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_events(dir.path()).await;
    let mut first = Receiver::start().await;
    hooked(&p, "pr", &first.url, json!({})).await;
    contact(&p).await;
    let id = text(&p, "pr", "before").await;
    assert_eq!(first.next(WAIT).await.json()["messageId"], id.as_str());

    // Paused: the event is not delivered (counted as dropped, no webhook).
    let (status, body) = post(
        &p,
        "/set-webhook",
        json!({"clientId": "pr", "webhookUrl": ""}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    text(&p, "pr", "while paused").await;
    dropped_reaches(&p, "no-webhook", 1).await;
    assert!(
        !p.output().contains("webhook event dropped"),
        "a session without a webhook is its configuration, not a warning"
    );

    // Resumed at a new URL with a rotated token: the next call uses both.
    let mut second = Receiver::start().await;
    let rotated = "rotated-webhook-token-abcdefghijklm";
    let (status, body) = post(
        &p,
        "/set-webhook",
        json!({"clientId": "pr", "webhookUrl": second.url, "webhookToken": rotated}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let id = text(&p, "pr", "after").await;
    let req = second.next(WAIT).await;
    assert_eq!(req.json()["messageId"], id.as_str());
    assert_headers(&req, rotated);
    assert!(
        first.maybe_next(QUIET).await.is_none(),
        "the old URL gets nothing"
    );
}

/// The next `n` requests.
async fn futures_collect(rx: &mut Receiver, n: usize) -> Vec<parley_tests::receiver::Received> {
    let mut all = Vec::with_capacity(n);
    for _ in 0..n {
        all.push(rx.next(WAIT).await);
    }
    all
}
