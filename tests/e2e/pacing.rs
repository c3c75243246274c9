//! Outbound pacing, on `serve` and on the cluster: `/set-send-pacing` sets a
//! session's limit, `/clients` shows it, a send within the limit answers as
//! usual (after waiting for its turn), one beyond the queue answers 429 with
//! `Retry-After`, and `messagesPerMinute: 0` turns it off.
use std::time::{Duration, Instant};

use parley_tests::receiver::Receiver;
use serde_json::{Value, json};

use crate::events::support::*;
use crate::shapes::{Deployment, Shape};
use crate::support::*;

#[tokio::test]
async fn sends_keep_the_sessions_pace_on_serve() {
    paced(Shape::Serve).await;
}

#[tokio::test]
async fn sends_keep_the_sessions_pace_on_a_cluster() {
    paced(Shape::Cluster).await;
}

async fn set(p: &Parley, body: Value) -> (u16, Value) {
    post(p, "/set-send-pacing", body).await
}

async fn pacing_shown(p: &Parley, id: &str) -> Value {
    let (status, body) = get(p, &format!("/clients?clientId={id}")).await;
    assert_eq!(status, 200, "{body}");
    body["clients"][0]["pacing"].clone()
}

async fn send(p: &Parley, id: &str, text: impl Into<String>) -> reqwest::Response {
    let text: String = text.into();
    client()
        .post(format!("{}/send-message", p.base))
        .bearer_auth(TOKEN)
        .json(&json!({"clientId": id, "to": format!("+{CONTACT}"), "body": text}))
        .send()
        .await
        .expect("send")
}

async fn paced(shape: Shape) {
    let dir = tempfile::tempdir().unwrap();
    let d = Deployment::start(shape, dir.path(), EVENT_VARS).await;
    let rx = Receiver::start().await;
    hooked(&d.api, "pace", &rx.url, json!({})).await;
    contact(&d.api).await;
    assert_eq!(
        pacing_shown(&d.api, "pace").await,
        Value::Null,
        "off unless set"
    );

    // Bad limits are refused; an unknown session is 404.
    for bad in [
        json!({"clientId": "pace"}),
        json!({"clientId": "pace", "messagesPerMinute": -1}),
        json!({"clientId": "pace", "messagesPerMinute": 6001}),
        json!({"clientId": "pace", "messagesPerMinute": 10, "burst": 0}),
        json!({"clientId": "pace", "messagesPerMinute": "ten"}),
        json!({"clientId": "pace", "messagesPerMinute": 2.5}),
    ] {
        let (status, body) = set(&d.api, bad.clone()).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(body["error"].is_string(), "{body}");
    }
    let (status, _) = set(
        &d.api,
        json!({"clientId": "nobody", "messagesPerMinute": 5}),
    )
    .await;
    assert_eq!(status, 404);

    // 20 a minute, burst 2: two go at once, the third waits its 3 s turn.
    // (JSON has no integers: 20.0 is 20.)
    let (status, body) = set(
        &d.api,
        json!({"clientId": "pace", "messagesPerMinute": 20.0, "burst": 2}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let limit = json!({"messagesPerMinute": 20, "burst": 2});
    assert_eq!(body["pacing"], limit, "{body}");
    assert_eq!(pacing_shown(&d.api, "pace").await, limit);
    let started = Instant::now();
    let answers =
        futures::future::join_all((0..3).map(|i| send(&d.api, "pace", format!("paced {i}")))).await;
    let waited = started.elapsed();
    for res in answers {
        let (status, body) = json(res).await;
        assert_eq!(status, 200, "a paced send answers as usual: {body}");
        assert!(body["messageId"].is_string(), "{body}");
    }
    assert!(
        waited >= Duration::from_millis(2_500),
        "the third send waited for its turn, not {waited:?}"
    );

    // 6 a minute: the next turn is 10 s away, beyond the queue's 8 s.
    let (status, _) = set(&d.api, json!({"clientId": "pace", "messagesPerMinute": 6})).await;
    assert_eq!(status, 200);
    let first = send(&d.api, "pace", "slow 1").await;
    assert_eq!(first.status(), 200);
    let refused = send(&d.api, "pace", "slow 2").await;
    assert_eq!(refused.status(), 429);
    let retry: u64 = refused
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("a Retry-After header in seconds");
    assert!((1..=10).contains(&retry), "Retry-After {retry}");
    let (_, body) = json(refused).await;
    assert!(
        body["error"].as_str().unwrap_or_default().contains("queue"),
        "{body}"
    );

    // Off again: sends go at once, `/clients` shows no limit.
    let (status, body) = set(&d.api, json!({"clientId": "pace", "messagesPerMinute": 0})).await;
    assert_eq!((status, &body["pacing"]), (200, &Value::Null), "{body}");
    assert_eq!(pacing_shown(&d.api, "pace").await, Value::Null);
    let res = send(&d.api, "pace", "free again").await;
    assert_eq!(res.status(), 200);
}
