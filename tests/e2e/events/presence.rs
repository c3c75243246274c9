//! Opt-in events: a contact's presence. The session asks for it
//! (`/subscribe-presence`); the network lets the subscription through only
//! once the contact wrote to the session's phone (its client then issued
//! the phone a privacy token, which the subscription carries), and then
//! tells the session when the contact comes online or goes offline
//! (`/sandbox/presence`), a `presence` event once the session turned it on.
use std::time::Duration;

use parley_tests::receiver::{Received, Receiver};
use serde_json::{Value, json};

use super::support::*;
use crate::support::*;

async fn subscribe(p: &Parley) -> (u16, Value) {
    post(
        p,
        "/subscribe-presence",
        json!({"clientId": "prs", "jid": format!("+{CONTACT}")}),
    )
    .await
}

async fn presence(p: &Parley, state: &str) -> (u16, Value) {
    post(
        p,
        "/sandbox/presence",
        json!({"clientId": "prs", "from": CONTACT, "state": state}),
    )
    .await
}

/// The contact writes; what reached the webhook before its message.
async fn before_a_text(p: &Parley, rx: &mut Receiver, body: &str) -> Vec<Value> {
    let id = text(p, "prs", body).await;
    let (_, before) = until_message(rx, &id).await;
    before.iter().map(Received::json).collect()
}

/// The next `presence` event saying `state`.
async fn presence_event(rx: &mut Receiver, state: &str) -> Value {
    loop {
        let e = rx.next(WAIT).await.json();
        if e["type"] == "presence" && e["presence"]["state"] == state {
            return e;
        }
    }
}

#[tokio::test]
async fn a_contacts_presence_is_an_event_once_subscribed_and_turned_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut rx = Receiver::start().await;
    let p = serve_events(dir.path()).await;
    hooked(&p, "prs", &rx.url, json!({})).await;
    let lid = contact(&p).await;
    let (status, body) = post(
        &p,
        "/set-events",
        json!({"clientId": "prs", "events": ["presence"]}),
    )
    .await;
    assert_eq!(status, 200, "{body}");

    // Before the contact wrote, the network ignores the subscription.
    let (status, ok) = subscribe(&p).await;
    assert_eq!((status, &ok), (200, &json!({"ok": true})), "{ok}");
    let (status, ok) = presence(&p, "available").await;
    assert_eq!((status, &ok), (200, &json!({"ok": true})), "{ok}");
    let before = before_a_text(&p, &mut rx, "Hi, it's Carla").await;
    assert!(
        before.iter().all(|e| e["type"] != "presence"),
        "a subscription without the contact's token: {before:?}"
    );

    // Once the contact wrote, it goes through. On the real network the
    // token reaches the session a moment after the message: asked again
    // until the contact's presence comes, within a deadline.
    let until = tokio::time::Instant::now() + Duration::from_secs(15);
    let online = loop {
        assert!(
            tokio::time::Instant::now() < until,
            "no presence event within 15 s"
        );
        assert_eq!(subscribe(&p).await.0, 200);
        assert_eq!(presence(&p, "available").await.0, 200);
        if let Some(req) = rx.maybe_next(Duration::from_millis(500)).await {
            let e = req.json();
            if e["type"] == "presence" {
                break e;
            }
        }
    };
    assert_eq!(online["event"], "contact.presence", "{online}");
    assert_eq!(
        online["presence"],
        json!({"state": "available"}),
        "{online}"
    );
    assert_eq!(online["remoteJid"], format!("{lid}@lid"), "{online}");
    assert_eq!(online["remotePhone"], CONTACT, "{online}");
    assert_eq!(online["fromMe"], false, "{online}");
    assert_eq!(online["body"], "", "{online}");
    let id = online["messageId"].as_str().expect("messageId");
    assert_eq!(online["eventId"], format!("prs_prs_{id}"), "{online}");

    let (status, _) = presence(&p, "unavailable").await;
    assert_eq!(status, 200);
    let offline = presence_event(&mut rx, "unavailable").await;
    let last_seen = offline["presence"]["lastSeen"].as_str().unwrap_or_default();
    // RFC 3339 in UTC, to the second: `2026-11-29T18:04:23Z`.
    assert!(
        last_seen.len() == 20 && last_seen.ends_with('Z') && last_seen.contains('T'),
        "{offline}"
    );

    // Turned off: the subscription stands, and nothing is delivered.
    let (status, body) = post(&p, "/set-events", json!({"clientId": "prs", "events": []})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(presence(&p, "available").await.0, 200);
    let before = before_a_text(&p, &mut rx, "Still there?").await;
    assert!(
        before.iter().all(|e| e["type"] != "presence"),
        "presence off, yet: {before:?}"
    );

    refused(
        &p,
        "/subscribe-presence",
        [
            (
                json!({"clientId": "prs", "jid": "120363000000000001@g.us"}),
                400,
            ),
            (json!({"clientId": "prs"}), 400),
            (
                json!({"clientId": "nobody", "jid": format!("+{CONTACT}")}),
                404,
            ),
        ],
    )
    .await;
    refused(
        &p,
        "/sandbox/presence",
        [
            (
                json!({"clientId": "prs", "from": CONTACT, "state": "away"}),
                400,
            ),
            (
                json!({"clientId": "prs", "from": "12", "state": "available"}),
                400,
            ),
            (
                json!({"clientId": "nobody", "from": CONTACT, "state": "available"}),
                404,
            ),
        ],
    )
    .await;
}
