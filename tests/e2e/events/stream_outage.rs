//! JetStream stopped mid-run (the cluster): the NATS server holding the event
//! stream is killed while messages stream in and events are in retry. While
//! it is down nothing new is accepted (the answer says so), `/health/ready`
//! says the event log is unavailable, and the events already accepted keep
//! being delivered; once it is back, new messages are accepted again and
//! every accepted message's event arrives, its body read back from the
//! stream the server kept on disk, with no gap in `seq`.
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use parley_tests::nats_server::NatsServer;
use parley_tests::receiver::{Behaviour, Receiver};
use serde_json::{Value, json};

use super::support::*;
use crate::support::*;

/// Messages before the stop and after the return.
const EACH_SIDE: usize = 40;

async fn all_events(p: &Parley, id: &str) -> Vec<Value> {
    let (status, page) = get(p, &format!("/events?clientId={id}&after=0&limit=500")).await;
    assert_eq!(status, 200, "{page}");
    page["events"].as_array().expect("events").clone()
}

async fn ready(p: &Parley) -> Value {
    let res = client().get(p.url("/health/ready")).send().await.unwrap();
    json(res).await.1
}

#[tokio::test]
async fn jetstream_stopped_mid_run_loses_no_accepted_event() {
    let dir = tempfile::tempdir().unwrap();
    let mut nats = NatsServer::start(&dir.path().join("nats")).await;
    let env = services::ClusterEnv::new().await;
    let mut all = env.vars();
    all.retain(|(k, _)| k != "PARLEY_NATS_URL");
    all.extend(vars(&[
        ("PARLEY_NATS_URL", &nats.url()),
        ("PARLEY_ACCOUNT_TOKEN", TOKEN),
        ("PARLEY_NETWORK", "sandbox"),
    ]));
    all.extend(vars(EVENT_VARS));
    let (ok, out) = parley_tests::process::run_once(bin(), &["migrate"], dir.path(), &all).await;
    assert!(ok, "migrate: {out}");
    let _worker = Parley::start(bin(), &["worker"], dir.path(), &all).await;
    let api = Parley::start(bin(), &["api"], dir.path(), &all).await;

    let mut rx = Receiver::start().await;
    hooked(&api, "js", &rx.url, json!({})).await;
    contact(&api).await;
    // The receiver struggles: the events stay in retry across the outage.
    rx.set_default(Behaviour::RetryAfter(503, 3));
    let mut wanted = BTreeSet::new();
    for n in 0..EACH_SIDE {
        let id = text(&api, "js", &format!("before {n}")).await;
        wanted.insert(format!("msg_js_{id}"));
    }
    rx.next(WAIT).await;
    let ready_before = ready(&api).await;
    assert_eq!(ready_before["events"], true, "{ready_before}");

    nats.kill().await;
    // Down: the event log cannot take events, and says so.
    eventually(20, "ready reports the event log down", || async {
        let r = ready(&api).await;
        (r["events"] == false).then_some(())
    })
    .await;
    let (status, refused) = post(
        &api,
        "/sandbox/messages",
        json!({"clientId": "js", "from": CONTACT, "type": "text", "body": "while down"}),
    )
    .await;
    assert_eq!(
        status, 503,
        "not accepted while JetStream is down: {refused}"
    );
    assert!(
        refused["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{refused}"
    );

    nats.restart().await;
    rx.set_default(Behaviour::Status(200));
    let healthy_from = std::time::Instant::now();
    eventually(30, "ready reports the event log back", || async {
        let r = ready(&api).await;
        (r["events"] == true).then_some(())
    })
    .await;
    // Accepted again once the worker's connection is back.
    let first = eventually(30, "a message accepted again", || async {
        let (status, sent) = post(
            &api,
            "/sandbox/messages",
            json!({"clientId": "js", "from": CONTACT, "type": "text", "body": "after 0"}),
        )
        .await;
        (status == 200).then(|| sent["messageId"].as_str().expect("id").to_string())
    })
    .await;
    wanted.insert(format!("msg_js_{first}"));
    for n in 1..EACH_SIDE {
        let id = text(&api, "js", &format!("after {n}")).await;
        wanted.insert(format!("msg_js_{id}"));
    }

    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    while !wanted.iter().all(|id| seen.contains_key(id)) {
        let req = rx.next(Duration::from_secs(40)).await;
        if req.at < healthy_from {
            continue; // answered 503: retried later
        }
        let id = req.header("webhook-id").expect("webhook-id").to_string();
        *seen.entry(id).or_default() += 1;
    }
    let duplicates: u32 = seen.values().map(|n| n - 1).sum();
    println!(
        "JetStream stopped mid-run: {} events delivered, {duplicates} duplicates",
        wanted.len()
    );
    assert!(
        seen.keys().all(|id| wanted.contains(id)),
        "only accepted messages' events"
    );

    // The log reads every body back from the restarted server's stream.
    let events = eventually(30, "every event delivered", || async {
        let events = all_events(&api, "js").await;
        let done = events.len() == wanted.len()
            && events.iter().all(|e| e["delivery"]["state"] == "delivered");
        done.then_some(events)
    })
    .await;
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["seq"], i as u64 + 1, "no gap in seq: {e}");
        assert_eq!(e["event"]["eventId"], e["eventId"], "{e}");
        assert!(wanted.contains(e["eventId"].as_str().unwrap()), "{e}");
    }
}
