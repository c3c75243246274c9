//! Poll votes travel as option hashes and resolve as the spec orders it: from
//! the session's hosted history, else through the customer's `pollLookupUrl`,
//! else they arrive unresolved with the hashes. Never from a worker's memory,
//! so `serve` and the cluster, and every owner of a session, answer alike.
use std::time::{Duration, Instant};

use parley_tests::receiver::{Behaviour, Receiver};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::history::org;
use super::support::*;
use crate::shapes::{Deployment, Shape};
use crate::support::*;

/// The lookup's budget in the spec.
const LOOKUP_BUDGET: Duration = Duration::from_secs(8);

fn hash(option: &str) -> String {
    hex::encode(Sha256::digest(option.as_bytes()))
}

fn options(list: &[&str]) -> Behaviour {
    Behaviour::Json(200, json!({ "options": list }).to_string())
}

/// Sends a poll through the API and takes its `fromMe` event; returns its id.
async fn send_poll(p: &Parley, rx: &mut Receiver, id: &str, choices: &[&str]) -> String {
    let (status, sent) = post(
        p,
        "/send-poll-message",
        json!({"clientId": id, "to": format!("+{CONTACT}"), "pollName": "Lunch?", "pollOptions": choices}),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    let poll = sent["messageId"].as_str().expect("messageId").to_string();
    until_message(rx, &poll).await;
    poll
}

/// The contact votes `chosen` on `poll`; returns the vote's event.
async fn vote(p: &Parley, rx: &mut Receiver, id: &str, poll: &str, chosen: &[&str]) -> Value {
    let vote = inject(
        p,
        id,
        json!({"type": "vote_update", "pollMessageId": poll, "selectedOptions": chosen}),
    )
    .await;
    let e = until_message(rx, &vote).await.0.json();
    assert_eq!(e["type"], "vote_update", "{e}");
    e
}

fn resolved(poll: &str, chosen: &[&str]) -> Value {
    let hashes: Vec<String> = chosen.iter().map(|c| hash(c)).collect();
    json!({"pollMessageId": poll, "resolved": true, "selectedOptions": chosen, "selectedHashes": hashes})
}

fn unresolved(poll: &str, chosen: &[&str]) -> Value {
    let hashes: Vec<String> = chosen.iter().map(|c| hash(c)).collect();
    json!({"pollMessageId": poll, "resolved": false, "selectedOptions": [], "selectedHashes": hashes})
}

/// The lookup was asked for `poll` of `room`, exactly as the spec says.
fn assert_asked(asked: &parley_tests::receiver::Received, id: &str, room: &str, poll: &str) {
    assert_eq!(asked.method, "POST");
    let bearer = format!("Bearer {HOOK_TOKEN}");
    assert_eq!(asked.header("authorization"), Some(bearer.as_str()));
    assert_eq!(asked.header("user-agent"), Some("Parley-Messaging/1"));
    assert_eq!(asked.header("x-sn-event"), Some("vote_update"));
    assert!(
        asked
            .header("content-type")
            .is_some_and(|c| c.starts_with("application/json")),
        "{:?}",
        asked.headers
    );
    assert_eq!(
        asked.json(),
        json!({"clientId": id, "chatRoomId": room, "pollMessageId": poll})
    );
}

#[tokio::test]
async fn votes_resolve_through_the_lookup_or_not_at_all_on_serve() {
    lookup_rules(Shape::Serve).await;
}

#[tokio::test]
async fn votes_resolve_through_the_lookup_or_not_at_all_on_a_cluster() {
    lookup_rules(Shape::Cluster).await;
}

async fn lookup_rules(shape: Shape) {
    let dir = tempfile::tempdir().unwrap();
    let mut d = Deployment::start(shape, dir.path(), EVENT_VARS).await;
    let mut rx = Receiver::start().await;
    let mut lookup = Receiver::start().await;
    lookup.set_default(Behaviour::Status(500));
    let my_lid = hooked(
        &d.api,
        "poll",
        &rx.url,
        json!({"pollLookupUrl": lookup.url}),
    )
    .await;
    let lid = contact(&d.api).await;
    let room = format!("poll-{my_lid}-{lid}");

    // A poll the session sent itself: the lookup is asked all the same, with
    // the spec's body and headers, and its options (in any order) name the vote.
    let poll = send_poll(&d.api, &mut rx, "poll", &["Pizza", "Soup"]).await;
    lookup.script([options(&["Soup", "Pizza"])]);
    let e = vote(&d.api, &mut rx, "poll", &poll, &["Soup"]).await;
    assert_asked(&lookup.next(WAIT).await, "poll", &room, &poll);
    assert_eq!(e["pollVote"], resolved(&poll, &["Soup"]));

    // A poll the session received: the same.
    let received = inject(
        &d.api,
        "poll",
        json!({"type": "poll_creation", "pollName": "Colour?", "pollOptions": ["Red", "Blue"]}),
    )
    .await;
    until_message(&mut rx, &received).await;
    lookup.script([options(&["Red", "Blue"])]);
    let e = vote(&d.api, &mut rx, "poll", &received, &["Blue", "Red"]).await;
    assert_asked(&lookup.next(WAIT).await, "poll", &room, &received);
    assert_eq!(e["pollVote"], resolved(&received, &["Blue", "Red"]));

    // Every failed lookup delivers the vote unresolved, with the hashes (a
    // vote is encrypted under its poll's secret, so on the real network it
    // names a poll the voter has: the session's).
    for answer in [
        Behaviour::Status(404),
        Behaviour::Status(503),
        Behaviour::Json(200, "not json at all".into()),
        Behaviour::Json(200, r#"{"choices": ["Soup"]}"#.into()),
        options(&["Tea", "Coffee"]),
    ] {
        lookup.script([answer.clone()]);
        let e = vote(&d.api, &mut rx, "poll", &poll, &["Maybe"]).await;
        assert_asked(&lookup.next(WAIT).await, "poll", &room, &poll);
        assert_eq!(e["pollVote"], unresolved(&poll, &["Maybe"]), "{answer:?}");
    }

    // A lookup that does not answer: the vote waits out the 8 s budget on its
    // own, and a message behind it is delivered meanwhile.
    lookup.script([Behaviour::Hang]);
    let t0 = Instant::now();
    let slow = inject(
        &d.api,
        "poll",
        json!({"type": "vote_update", "pollMessageId": poll, "selectedOptions": ["Later"]}),
    )
    .await;
    assert_asked(&lookup.next(WAIT).await, "poll", &room, &poll);
    let behind = text(&d.api, "poll", "behind the vote").await;
    let first = rx.next(WAIT).await.json();
    assert_eq!(
        first["messageId"],
        behind.as_str(),
        "the message behind a vote waiting for its lookup is delivered first: {first}"
    );
    let e = rx.next(LOOKUP_BUDGET + WAIT).await.json();
    assert_eq!(e["messageId"], slow.as_str());
    assert_eq!(e["pollVote"], unresolved(&poll, &["Later"]));
    assert!(
        t0.elapsed() >= LOOKUP_BUDGET - Duration::from_millis(500),
        "the lookup was given its budget ({:?})",
        t0.elapsed()
    );

    // In a cluster the session moves to the other worker: the lookup is asked
    // the same way there.
    if shape == Shape::Cluster {
        let before = d.owner("poll").await;
        let after = d.move_session("poll").await;
        assert_ne!(before, after);
        lookup.script([options(&["Pizza", "Soup"])]);
        let e = vote(&d.api, &mut rx, "poll", &poll, &["Pizza"]).await;
        assert_asked(&lookup.next(WAIT).await, "poll", &room, &poll);
        assert_eq!(e["pollVote"], resolved(&poll, &["Pizza"]));
    }

    // Neither a hosted inbox nor a lookup: votes stay unresolved, even on the
    // session's own poll, and nobody is asked.
    let (status, body) = post(
        &d.api,
        "/set-webhook",
        json!({"clientId": "poll", "webhookUrl": rx.url, "pollLookupUrl": ""}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let e = vote(&d.api, &mut rx, "poll", &poll, &["Soup"]).await;
    assert_eq!(e["pollVote"], unresolved(&poll, &["Soup"]));
    // The vote was resolved before its delivery: a lookup would be in already.
    assert!(
        lookup.maybe_next(Duration::ZERO).await.is_none(),
        "no lookup without a URL"
    );
}

#[tokio::test]
async fn hosted_inbox_votes_resolve_from_history_on_serve() {
    history_rules(Shape::Serve).await;
}

#[tokio::test]
async fn hosted_inbox_votes_resolve_from_history_on_a_cluster() {
    history_rules(Shape::Cluster).await;
}

async fn history_rules(shape: Shape) {
    let dir = tempfile::tempdir().unwrap();
    let mut rx = Receiver::start().await;
    let mut more = EVENT_VARS.to_vec();
    more.push(("PARLEY_HOSTED_RECEIVER_URL", &rx.url));
    let mut d = Deployment::start(shape, dir.path(), &more).await;
    let mut lookup = Receiver::start().await;
    // A lookup that would name other options: history wins, the lookup is not asked.
    lookup.set_default(options(&["Wrong", "Answers"]));
    let my_lid = hooked(
        &d.api,
        "hist",
        &rx.url,
        json!({"pollLookupUrl": lookup.url}),
    )
    .await;
    let lid = contact(&d.api).await;
    let room = format!("hist-{my_lid}-{lid}");
    // A poll sent before the hosted inbox was on: history does not have it.
    let unstored = send_poll(&d.api, &mut rx, "hist", &["Questions", "Answers"]).await;
    org(&d.api, "hist").await;

    let sent = send_poll(&d.api, &mut rx, "hist", &["Pizza", "Soup"]).await;
    let e = vote(&d.api, &mut rx, "hist", &sent, &["Soup"]).await;
    assert_eq!(e["pollVote"], resolved(&sent, &["Soup"]));
    let received = inject(
        &d.api,
        "hist",
        json!({"type": "poll_creation", "pollName": "Colour?", "pollOptions": ["Red", "Blue"]}),
    )
    .await;
    until_message(&mut rx, &received).await;
    let e = vote(&d.api, &mut rx, "hist", &received, &["Red"]).await;
    assert_eq!(e["pollVote"], resolved(&received, &["Red"]));
    assert!(
        lookup.maybe_next(Duration::ZERO).await.is_none(),
        "stored polls resolve without the lookup"
    );

    // A poll history does not have: the lookup names its options.
    let e = vote(&d.api, &mut rx, "hist", &unstored, &["Answers"]).await;
    assert_asked(&lookup.next(WAIT).await, "hist", &room, &unstored);
    assert_eq!(e["pollVote"], resolved(&unstored, &["Answers"]));

    // In a cluster the session moves: the new owner resolves from history too.
    if shape == Shape::Cluster {
        d.move_session("hist").await;
        let e = vote(&d.api, &mut rx, "hist", &sent, &["Pizza"]).await;
        assert_eq!(e["pollVote"], resolved(&sent, &["Pizza"]));
        assert!(
            lookup.maybe_next(Duration::ZERO).await.is_none(),
            "stored polls resolve without the lookup after a move"
        );
    }
}
