//! Opt-in events: a contact typing, recording a voice note or stopping in
//! its chat with the session (`/sandbox/typing`) reaches the webhook as a
//! `typing` event only once the session turned it on with `/set-events`;
//! each has an id of its own, never a message's. In a group both are in,
//! the event is the group's, with the contact as its participant.
use std::collections::BTreeMap;

use parley_tests::receiver::Receiver;
use serde_json::{Value, json};

use super::support::*;
use crate::support::*;

/// A phone in no group of the session's.
const OUTSIDER: &str = "4917600000399";

async fn typing(p: &Parley, state: &str) -> (u16, Value) {
    post(
        p,
        "/sandbox/typing",
        json!({"clientId": "ty", "from": CONTACT, "state": state}),
    )
    .await
}

/// The next `typing` events until one of each of `states` came (in any
/// order: deliveries run side by side), by state.
async fn typing_events(rx: &mut Receiver, states: &[&str]) -> BTreeMap<String, Value> {
    let mut seen = BTreeMap::new();
    while states.iter().any(|s| !seen.contains_key(*s)) {
        let e = rx.next(WAIT).await.json();
        if e["type"] == "typing" {
            let state = e["typing"]["state"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            seen.insert(state, e);
        }
    }
    seen
}

#[tokio::test]
async fn a_contact_typing_is_an_event_once_turned_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut rx = Receiver::start().await;
    let p = serve_events(dir.path()).await;
    let my_lid = hooked(&p, "ty", &rx.url, json!({})).await;
    let lid = contact(&p).await;

    // Off by default: the contact types, and nothing says it.
    let (status, ok) = typing(&p, "composing").await;
    assert_eq!(status, 200, "{ok}");
    assert_eq!(ok, json!({"ok": true}));
    // What the contact sends after it arrives after it: the chat state was
    // taken (and dropped) by then.
    let later = text(&p, "ty", "hello?").await;
    let (_, before) = until_message(&mut rx, &later).await;
    assert!(
        before.iter().all(|r| r.json()["type"] != "typing"),
        "typing off, yet: {:?}",
        before.iter().map(|r| r.json()).collect::<Vec<_>>()
    );

    let (status, set) = post(
        &p,
        "/set-events",
        json!({"clientId": "ty", "events": ["typing"]}),
    )
    .await;
    assert_eq!(status, 200, "{set}");
    for state in ["composing", "recording", "paused"] {
        let (status, ok) = typing(&p, state).await;
        assert_eq!(status, 200, "{state}: {ok}");
    }
    let events = typing_events(&mut rx, &["composing", "recording", "paused"]).await;
    let e = &events["composing"];
    assert_eq!(e["event"], "chat.typing", "{e}");
    assert_eq!(e["typing"], json!({"state": "composing"}), "{e}");
    assert_eq!(e["body"], "", "{e}");
    assert_eq!(e["remoteJid"], format!("{lid}@lid"), "{e}");
    assert_eq!(e["clientLid"], lid.as_str(), "{e}");
    assert_eq!(e["chatRoomId"], format!("ty-{my_lid}-{lid}"), "{e}");
    assert_eq!(e["remotePhone"], CONTACT, "{e}");
    assert_eq!(
        (e["fromMe"].as_bool(), e["isGroup"].as_bool()),
        (Some(false), Some(false))
    );
    let message_id = e["messageId"].as_str().expect("messageId");
    assert_eq!(e["eventId"], format!("typ_ty_{message_id}"), "{e}");
    // Each chat state is an event of its own.
    let ids: std::collections::BTreeSet<&str> = events
        .values()
        .filter_map(|e| e["eventId"].as_str())
        .collect();
    assert_eq!(ids.len(), 3, "{events:?}");

    // In a group both are in: the group's chat, the contact as participant.
    let (status, group) = post(
        &p,
        "/sandbox/groups",
        json!({"clientId": "ty", "subject": "Team", "participants": [CONTACT]}),
    )
    .await;
    assert_eq!(status, 200, "{group}");
    let jid = group["jid"].as_str().expect("jid").to_string();
    let (status, ok) = post(
        &p,
        "/sandbox/typing",
        json!({"clientId": "ty", "from": CONTACT, "state": "composing", "group": jid}),
    )
    .await;
    assert_eq!(status, 200, "{ok}");
    let e = loop {
        let e = rx.next(WAIT).await.json();
        if e["type"] == "typing" && e["isGroup"] == true {
            break e;
        }
    };
    assert_eq!(e["typing"], json!({"state": "composing"}), "{e}");
    assert_eq!(e["remoteJid"], jid.as_str(), "{e}");
    assert_eq!(e["group"]["jid"], jid.as_str(), "{e}");
    assert_eq!(e["group"]["participant"], format!("{lid}@lid"), "{e}");

    // Refusals.
    refused(
        &p,
        "/sandbox/typing",
        [
        (
            json!({"clientId": "ty", "from": OUTSIDER, "state": "paused", "group": jid}),
            409,
        ),
        (
            json!({"clientId": "ty", "from": CONTACT, "state": "paused", "group": "120363999999999999@g.us"}),
            404,
        ),
        (
            json!({"clientId": "ty", "from": CONTACT, "state": "paused", "group": "team"}),
            400,
        ),
        (
            json!({"clientId": "ty", "from": CONTACT, "state": "typing"}),
            400,
        ),
        (
            json!({"clientId": "ty", "from": "12", "state": "paused"}),
            400,
        ),
        (
            json!({"clientId": "nobody", "from": CONTACT, "state": "paused"}),
            404,
        ),
        ],
    )
    .await;
}
