//! The event log end to end through `parley serve`: every event logged with
//! `eventId` and a gap-free `seq`, attempts counted, dead letters kept and
//! redelivered with their ids, sessions without a webhook logged but never
//! pushed, and events in retry at a killed process delivered after it starts
//! again.
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use parley_tests::receiver::{Behaviour, Receiver};
use serde_json::{Value, json};

use super::support::*;
use crate::support::*;

/// The session's events (every page).
async fn all_events(p: &Parley, id: &str) -> Vec<Value> {
    let mut events = Vec::new();
    let mut after = 0;
    loop {
        let (status, page) = get(p, &format!("/events?clientId={id}&after={after}&limit=7")).await;
        assert_eq!(status, 200, "{page}");
        events.extend(page["events"].as_array().expect("events").iter().cloned());
        match page["next"].as_u64() {
            Some(next) => after = next,
            None => {
                assert!(page["next"].is_null(), "{page}");
                return events;
            }
        }
    }
}

/// Waits until every event of the session is in `state`; returns them.
async fn settled(p: &Parley, id: &str, count: usize, state: &str) -> Vec<Value> {
    eventually(60, &format!("{count} events {state}"), || async {
        let events = all_events(p, id).await;
        let done = events.len() == count && events.iter().all(|e| e["delivery"]["state"] == state);
        done.then_some(events)
    })
    .await
}

/// The seqs are 1..=n with no gap, and each envelope carries its own id and seq.
fn assert_gap_free(events: &[Value]) {
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["seq"], i as u64 + 1, "{e}");
        assert_eq!(e["event"]["seq"], e["seq"], "{e}");
        assert_eq!(e["event"]["eventId"], e["eventId"], "{e}");
    }
}

/// Takes requests until every id of `wanted` arrived; returns how often each did.
async fn receive_all(rx: &mut Receiver, wanted: &BTreeSet<String>) -> BTreeMap<String, u32> {
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    while !wanted.iter().all(|id| seen.contains_key(id)) {
        let req = rx.next(Duration::from_secs(30)).await;
        let id = req.header("webhook-id").expect("webhook-id").to_string();
        assert_eq!(
            req.json()["eventId"],
            id.as_str(),
            "the body names its webhook-id"
        );
        *seen.entry(id).or_default() += 1;
    }
    seen
}

#[tokio::test]
async fn a_dead_receiver_leaves_dead_letters_that_redelivery_brings_with_their_ids() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_events(dir.path()).await;
    let mut rx = Receiver::start().await;
    rx.set_default(Behaviour::Status(503));
    hooked(&p, "dl", &rx.url, json!({})).await;
    contact(&p).await;
    let mut ids = Vec::new();
    for n in 0..12 {
        ids.push(text(&p, "dl", &format!("while down {n}")).await);
    }

    // Four attempts each, then dead letters, in the order they were logged.
    let events = settled(&p, "dl", ids.len(), "dead").await;
    assert_gap_free(&events);
    for (e, id) in events.iter().zip(&ids) {
        assert_eq!(e["event"]["messageId"], id.as_str());
        assert_eq!(e["eventId"], format!("msg_dl_{id}"));
        assert_eq!(e["delivery"]["attempts"], 4, "{e}");
        assert_eq!(e["delivery"]["lastStatus"], 503, "{e}");
        assert!(e["delivery"]["lastAttemptAt"].is_string(), "{e}");
    }
    let (status, dead) = get(&p, "/events/dead-letters?clientId=dl&page=2&limit=5").await;
    assert_eq!(status, 200, "{dead}");
    assert_eq!(
        dead["pagination"],
        json!({"page": 2, "limit": 5, "total": 12})
    );
    assert_eq!(dead["events"][0]["seq"], 6);
    let expected: BTreeSet<String> = events
        .iter()
        .map(|e| e["eventId"].as_str().unwrap().to_string())
        .collect();

    // The receiver is back: one redelivery brings every event, with its id.
    rx.set_default(Behaviour::Status(200));
    while rx.maybe_next(Duration::ZERO).await.is_some() {}
    let (status, queued) = post(
        &p,
        "/events/redeliver",
        json!({"clientId": "dl", "afterSeq": 0.0}),
    )
    .await;
    assert_eq!((status, queued), (200, json!({"queued": 12})));
    let seen = receive_all(&mut rx, &expected).await;
    assert_eq!(seen.keys().cloned().collect::<BTreeSet<_>>(), expected);
    let events = settled(&p, "dl", ids.len(), "delivered").await;
    assert!(
        events
            .iter()
            .all(|e| e["delivery"]["attempts"] == 1 && e["delivery"]["lastStatus"] == 200)
    );
    let (_, dead) = get(&p, "/events/dead-letters?clientId=dl").await;
    assert_eq!(dead["pagination"]["total"], 0, "{dead}");

    // One event by id: delivered again, same id and body.
    let one = events[3]["eventId"].as_str().unwrap().to_string();
    let (status, queued) = post(
        &p,
        "/events/redeliver",
        json!({"clientId": "dl", "eventIds": [one, "msg_dl_unknown"]}),
    )
    .await;
    assert_eq!((status, queued), (200, json!({"queued": 1})));
    let again = rx.next(WAIT).await;
    assert_eq!(again.header("webhook-id"), Some(one.as_str()));
    assert_eq!(again.json(), events[3]["event"]);
}

#[tokio::test]
async fn the_event_routes_refuse_what_they_cannot_answer() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_events(dir.path()).await;
    let (status, _) = post(&p, "/start?clientId=quiet", json!({})).await;
    assert_eq!(status, 200);
    for (body, why) in [
        (json!({"clientId": "quiet"}), "neither"),
        (
            json!({"clientId": "quiet", "afterSeq": 1, "eventIds": ["a"]}),
            "both",
        ),
        (json!({"clientId": "quiet", "eventIds": null}), "null ids"),
        (json!({"clientId": "quiet", "eventIds": []}), "no ids"),
        (
            json!({"clientId": "quiet", "eventIds": ["a b"]}),
            "a bad id",
        ),
        (
            json!({"clientId": "quiet", "afterSeq": -1}),
            "a negative seq",
        ),
        (json!({"clientId": "quiet", "afterSeq": 1.5}), "a fraction"),
    ] {
        let (status, body) = post(&p, "/events/redeliver", body).await;
        assert_eq!(status, 400, "{why}: {body}");
        assert!(body["error"].is_string(), "{body}");
    }
    for query in ["limit=0", "limit=501", "after=-1", "after=x"] {
        let (status, body) = get(&p, &format!("/events?clientId=quiet&{query}")).await;
        assert_eq!(status, 400, "{query}: {body}");
    }
    let (status, _) = get(&p, "/events/dead-letters?clientId=quiet&page=0").await;
    assert_eq!(status, 400);
    let (status, _) = get(&p, "/events?clientId=nobody").await;
    assert_eq!(status, 404);
    // No webhook to deliver to.
    let (status, body) = post(
        &p,
        "/events/redeliver",
        json!({"clientId": "quiet", "afterSeq": 0}),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    let (status, page) = get(&p, "/events?clientId=quiet").await;
    assert_eq!((status, page), (200, json!({"events": [], "next": null})));
    let res = client()
        .get(p.url("/events?clientId=quiet"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        res.status(),
        401,
        "the account token or the session's secret"
    );
}

#[tokio::test]
async fn a_session_without_a_webhook_logs_its_events_and_pushes_none() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_events(dir.path()).await;
    let mut rx = Receiver::start().await;
    hooked(&p, "nohook", "", json!({})).await;
    contact(&p).await;
    let first = text(&p, "nohook", "nobody listens").await;
    let events = settled(&p, "nohook", 1, "none").await;
    assert_eq!(events[0]["event"]["messageId"], first.as_str());
    assert_eq!(events[0]["delivery"]["attempts"], 0);

    // A URL set later: new events are pushed, the earlier one is not ...
    let (status, _) = post(
        &p,
        "/set-webhook",
        json!({"clientId": "nohook", "webhookUrl": rx.url, "webhookToken": HOOK_TOKEN}),
    )
    .await;
    assert_eq!(status, 200);
    let second = text(&p, "nohook", "now someone does").await;
    let req = rx.next(WAIT).await;
    assert_eq!(
        req.json()["messageId"],
        second.as_str(),
        "the earlier event is not pushed"
    );
    assert_eq!(req.json()["seq"], 2);
    // ... until it is redelivered.
    let (status, queued) = post(
        &p,
        "/events/redeliver",
        json!({"clientId": "nohook", "eventIds": [events[0]["eventId"]]}),
    )
    .await;
    assert_eq!((status, queued), (200, json!({"queued": 1})));
    let req = rx.next(WAIT).await;
    assert_eq!(req.json()["messageId"], first.as_str());
    assert_eq!(req.json()["seq"], 1);

    // /disconnect takes the log with the session.
    let (status, _) = post(&p, "/disconnect", json!({"clientId": "nohook"})).await;
    assert_eq!(status, 200);
    let (status, _) = get(&p, "/events?clientId=nohook").await;
    assert_eq!(status, 404);
    let (status, _) = post(&p, "/start?clientId=nohook", json!({})).await;
    assert_eq!(status, 200);
    assert!(
        all_events(&p, "nohook").await.is_empty(),
        "a new session starts a new log"
    );
}

#[tokio::test]
async fn events_in_retry_at_a_killed_process_are_delivered_after_it_starts_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = serve_events(dir.path()).await;
    let mut rx = Receiver::start().await;
    // Retried 4 s apart: no event runs out of attempts before the kill.
    rx.set_default(Behaviour::RetryAfter(503, 4));
    hooked(&p, "crash", &rx.url, json!({})).await;
    contact(&p).await;
    let mut wanted = BTreeSet::new();
    for n in 0..20 {
        let id = text(&p, "crash", &format!("before the crash {n}")).await;
        wanted.insert(format!("msg_crash_{id}"));
    }
    // At least one attempt has reached the receiver: deliveries are in retry.
    rx.next(WAIT).await;
    p.kill().await;

    rx.set_default(Behaviour::Status(200));
    while rx.maybe_next(Duration::ZERO).await.is_some() {}
    let p = serve_events(dir.path()).await;
    let seen = receive_all(&mut rx, &wanted).await;
    let duplicates: u32 = seen.values().map(|n| n - 1).sum();
    println!(
        "after SIGKILL: {} events delivered, {duplicates} duplicates",
        seen.len()
    );
    let events = eventually(60, "every event settled", || async {
        let events = all_events(&p, "crash").await;
        let done = events.len() == wanted.len()
            && events.iter().all(|e| e["delivery"]["state"] != "pending");
        done.then_some(events)
    })
    .await;
    assert_gap_free(&events);
    // Those that had run out of attempts before the kill are dead letters;
    // every other one was delivered after the start, its count continued.
    for e in &events {
        let attempts = e["delivery"]["attempts"].as_u64().unwrap();
        match e["delivery"]["state"].as_str().unwrap() {
            "delivered" => assert!((1..=4).contains(&attempts), "{e}"),
            "dead" => assert_eq!(attempts, 4, "{e}"),
            other => panic!("unexpected state {other}: {e}"),
        }
    }
}

#[tokio::test]
async fn a_full_log_refuses_messages_and_sends_until_deliveries_make_room() {
    let dir = tempfile::tempdir().unwrap();
    let mut vars = EVENT_VARS.to_vec();
    vars.push(("PARLEY_EVENT_SESSION_CAP", "3"));
    let p = serve_with(dir.path(), &vars).await;
    let rx = Receiver::start().await;
    // Retried 4 s apart: the first three stay undelivered for a while.
    rx.set_default(Behaviour::RetryAfter(503, 4));
    hooked(&p, "cap", &rx.url, json!({})).await;
    contact(&p).await;
    for n in 0..3 {
        text(&p, "cap", &format!("fits {n}")).await;
    }
    // The fourth finds no room: not taken, so the network sends it again.
    let (status, body) = post(
        &p,
        "/sandbox/messages",
        json!({"clientId": "cap", "from": CONTACT, "type": "text", "body": "no room", "messageId": "3EB0NOROOM"}),
    )
    .await;
    assert_eq!(status, 503, "{body}");
    assert!(body["error"].as_str().unwrap().contains("full"), "{body}");
    // A send would have no room for its event: refused before the network.
    let send = json!({"clientId": "cap", "to": format!("+{CONTACT}"), "body": "hold on"});
    let (status, body) = post(&p, "/send-message", send.clone()).await;
    assert_eq!(status, 503, "{body}");
    let refused = eventually(10, "the refusals counted", || async {
        let text = client()
            .get(p.ops_url("/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        text.lines()
            .find(|l| {
                l.starts_with("parley_event_log_failures_total")
                    && l.contains("origin=\"received\"")
                    && l.contains("reason=\"full\"")
            })
            .map(str::to_string)
    })
    .await;
    assert!(refused.ends_with(" 1"), "{refused}");

    // The receiver is back: deliveries make room, and both go through.
    rx.set_default(Behaviour::Status(200));
    eventually(30, "room in the log", || async {
        let (status, _) = post(
            &p,
            "/sandbox/messages",
            json!({"clientId": "cap", "from": CONTACT, "type": "text", "body": "no room", "messageId": "3EB0NOROOM"}),
        )
        .await;
        (status == 200).then_some(())
    })
    .await;
    let (status, body) = post(&p, "/send-message", send).await;
    assert_eq!(status, 200, "{body}");
    let events = eventually(30, "five events delivered", || async {
        let events = all_events(&p, "cap").await;
        let done =
            events.len() == 5 && events.iter().all(|e| e["delivery"]["state"] == "delivered");
        done.then_some(events)
    })
    .await;
    assert_gap_free(&events);
}
