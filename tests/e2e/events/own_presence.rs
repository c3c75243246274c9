//! The session's own presence (`/set-presence`): said on the network (the
//! outbox shows it), heard as a `presence` event by another session that
//! subscribed to the account, stored, said again after a move to another
//! worker, and no event of the session's own.
use std::time::Duration;

use chrono::{DateTime, Utc};
use parley_tests::receiver::Receiver;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::support::*;
use crate::shapes::{Deployment, Shape};
use crate::support::*;

#[tokio::test]
async fn a_session_says_its_presence_to_subscribers_on_serve() {
    own_presence(Shape::Serve).await;
}

#[tokio::test]
async fn a_session_says_its_presence_again_after_a_move_on_a_cluster() {
    own_presence(Shape::Cluster).await;
}

async fn set(p: &Parley, presence: &str) {
    let (status, set) = post(
        p,
        "/set-presence",
        json!({"clientId": "op", "presence": presence}),
    )
    .await;
    assert_eq!(status, 200, "{set}");
    assert_eq!(
        set,
        json!({"ok": true, "clientId": "op", "presence": presence})
    );
}

/// The presence entries of the session's outbox, oldest first: `(at, state)`.
async fn said(p: &Parley) -> Vec<(DateTime<Utc>, String)> {
    let (status, outbox) = get(p, "/sandbox/outbox?clientId=op").await;
    assert_eq!(status, 200, "{outbox}");
    outbox["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["kind"] == "presence")
        .map(|m| {
            assert_eq!(m["to"], format!("{OWN_PHONE}@s.whatsapp.net"), "{m}");
            let at = m["at"].as_str().expect("at").parse().expect("RFC 3339");
            (
                at,
                m["payload"]["state"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

/// The next `presence` event at `rx` saying `state` within `wait` (others
/// skipped).
async fn heard(rx: &mut Receiver, state: &str, wait: Duration) -> Option<Value> {
    let until = Instant::now() + wait;
    while let Some(req) = rx
        .maybe_next(until.saturating_duration_since(Instant::now()))
        .await
    {
        let e = req.json();
        if e["type"] == "presence" && e["presence"]["state"] == state {
            return Some(e);
        }
    }
    None
}

async fn own_presence(shape: Shape) {
    let dir = tempfile::tempdir().unwrap();
    let mut d = Deployment::start(shape, dir.path(), EVENT_VARS).await;
    let mut rx = Receiver::start().await;
    let my_lid = hooked(&d.api, "op", &rx.url, json!({})).await;
    let p = &d.api;
    refused(
        p,
        "/set-presence",
        [
            (json!({"clientId": "op", "presence": "online"}), 400),
            (json!({"clientId": "op"}), 400),
            (json!({"presence": "available"}), 400),
            (json!({"clientId": "nobody", "presence": "available"}), 404),
        ],
    )
    .await;
    let (status, started) = post(p, "/start?clientId=unlinked", json!({})).await;
    assert_eq!(status, 200, "{started}");
    let (status, body) = post(
        p,
        "/set-presence",
        json!({"clientId": "unlinked", "presence": "available"}),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("unpaired"),
        "{body}"
    );

    // Serve: a session of the contact's phone subscribes to the account
    // (the account's phone wrote to the contact first: its privacy token).
    let mut watcher = None;
    if shape == Shape::Serve {
        let mut wrx = Receiver::start().await;
        hooked_as(p, "watcher", &wrx.url, json!({}), CONTACT).await;
        turn_on(p, "watcher", &["presence"]).await;
        let hello = inject(
            p,
            "watcher",
            json!({"from": OWN_PHONE, "type": "text", "body": "hello"}),
        )
        .await;
        until_message(&mut wrx, &hello).await;
        let (status, ok) = post(
            p,
            "/subscribe-presence",
            json!({"clientId": "watcher", "jid": format!("+{OWN_PHONE}")}),
        )
        .await;
        assert_eq!(status, 200, "{ok}");
        watcher = Some(wrx);
    }

    set(p, "available").await;
    if let Some(wrx) = watcher.as_mut() {
        // On the test network the subscription reaches the server on the
        // watcher's socket, the presence on the session's: the account says
        // it again until the subscription took.
        let mut online = None;
        for _ in 0..10 {
            online = heard(wrx, "available", Duration::from_secs(1)).await;
            if online.is_some() {
                break;
            }
            set(p, "available").await;
        }
        let online = online.expect("the subscribed session heard the account come online");
        assert_eq!(online["remoteJid"], format!("{my_lid}@lid"), "{online}");
        assert_eq!(online["remotePhone"], OWN_PHONE, "{online}");
    }
    set(p, "unavailable").await;
    if let Some(wrx) = watcher.as_mut() {
        let offline = heard(wrx, "unavailable", WAIT)
            .await
            .expect("offline heard");
        assert!(offline["presence"]["lastSeen"].is_string(), "{offline}");
    }
    // The test network's outbox reads what its server took. A state may be
    // said twice in a row (the session says its stored presence again when
    // it reconnects): the last two different ones are these.
    eventually(10, "both presences in the outbox", || async {
        let mut states: Vec<String> = said(p).await.into_iter().map(|(_, s)| s).collect();
        states.dedup();
        states
            .ends_with(&["available".to_string(), "unavailable".to_string()])
            .then_some(())
    })
    .await;
    let (status, page) = get(p, "/sessions?clientId=op").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["sessions"][0]["presence"], "unavailable", "{page}");

    // Setting it is no event of the session's own: the contact's next
    // message is the first thing its webhook hears.
    contact(p).await;
    let next = text(p, "op", "are you there?").await;
    let (_, before) = until_message(&mut rx, &next).await;
    let before: Vec<Value> = before.iter().map(|r| r.json()).collect();
    // (On the test network the phone's own message to the contact reached
    // its sessions too, `fromMe`.)
    assert!(
        before
            .iter()
            .all(|e| e["type"] == "text" && e["fromMe"] == true),
        "events before the text: {before:?}"
    );

    if shape == Shape::Cluster {
        // The next owner says it again once it is connected.
        let moved_at = Utc::now();
        d.move_session("op").await;
        let p = &d.api;
        eventually(15, "the presence said again after the move", || async {
            let after: Vec<(DateTime<Utc>, String)> = said(p)
                .await
                .into_iter()
                .filter(|(at, _)| *at >= moved_at)
                .collect();
            (after.last().map(|(_, s)| s.as_str()) == Some("unavailable")).then_some(())
        })
        .await;
    }
}
