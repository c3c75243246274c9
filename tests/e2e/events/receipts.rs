//! Opt-in events: a contact's receipt of a message the session sent, to it
//! or to a group both are in (`/sandbox/receipts`: delivered, read or
//! played) reaches the webhook as a
//! `receipt` event only once the session turned it on with `/set-events`;
//! its id names the reader, the status and the message, so it is never taken
//! for the message's own event.
use parley_tests::receiver::{Received, Receiver};
use serde_json::{Value, json};

use super::support::*;
use crate::support::*;

/// Sends the contact a text through the API; its message id.
async fn send(p: &Parley, body: &str) -> String {
    let (status, sent) = post(
        p,
        "/send-message",
        json!({"clientId": "rc", "to": format!("+{CONTACT}"), "body": body}),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    sent["messageId"].as_str().expect("messageId").to_string()
}

async fn receipt(p: &Parley, status: &str, ids: &[&str]) -> (u16, Value) {
    post(
        p,
        "/sandbox/receipts",
        json!({"clientId": "rc", "from": CONTACT, "status": status, "messageIds": ids}),
    )
    .await
}

/// The next `receipt` event saying `status` (others are skipped: the
/// network's phones send a delivery receipt for each message by themselves);
/// the requests skipped on the way too.
async fn receipt_event(rx: &mut Receiver, status: &str) -> (Received, Vec<Value>) {
    let mut skipped = Vec::new();
    loop {
        let req = rx.next(WAIT).await;
        let e = req.json();
        if e["type"] == "receipt" && e["receipt"]["status"] == status {
            return (req, skipped);
        }
        skipped.push(e);
    }
}

#[tokio::test]
async fn receipts_of_sent_messages_are_events_once_turned_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut rx = Receiver::start().await;
    let p = serve_events(dir.path()).await;
    let my_lid = hooked(&p, "rc", &rx.url, json!({})).await;
    let lid = contact(&p).await;

    // Off by default: the contact reads the first message, and nothing says it.
    let first = send(&p, "Your order is ready").await;
    until_message(&mut rx, &first).await;
    let (status, ok) = receipt(&p, "read", &[&first]).await;
    assert_eq!(status, 200, "{ok}");
    assert_eq!(ok, json!({"ok": true}));
    // What the contact sends after it arrives after it: the receipt was
    // taken (and dropped) by then.
    let later = text(&p, "rc", "thanks").await;
    let (_, before) = until_message(&mut rx, &later).await;
    assert!(
        before.iter().all(|r| r.json()["type"] != "receipt"),
        "receipts off, yet: {:?}",
        before.iter().map(Received::json).collect::<Vec<_>>()
    );

    let (status, set) = post(
        &p,
        "/set-events",
        json!({"clientId": "rc", "events": ["receipt"]}),
    )
    .await;
    assert_eq!(status, 200, "{set}");
    let second = send(&p, "It ships tomorrow").await;
    let third = send(&p, "Tracking to follow").await;
    let (status, ok) = receipt(&p, "read", &[&second, &third]).await;
    assert_eq!(status, 200, "{ok}");
    let (read, skipped) = receipt_event(&mut rx, "read").await;
    assert_headers(&read, HOOK_TOKEN);
    let e = read.json();
    assert_eq!(e["event"], "message.receipt", "{e}");
    assert_eq!(
        e["receipt"],
        json!({"status": "read", "messageIds": [second, third]}),
        "{e}"
    );
    assert_eq!(e["remoteJid"], format!("{lid}@lid"), "{e}");
    assert_eq!(e["clientLid"], lid.as_str(), "{e}");
    assert_eq!(e["chatRoomId"], format!("rc-{my_lid}-{lid}"), "{e}");
    assert_eq!(e["remotePhone"], CONTACT, "{e}");
    assert_eq!(
        (e["fromMe"].as_bool(), e["isGroup"].as_bool()),
        (Some(false), Some(false))
    );
    assert_eq!(
        e["eventId"],
        format!("rcpt_rc_read_{lid}_{second}"),
        "one per reader, status and message: {e}"
    );
    assert!(
        skipped
            .iter()
            .all(|s| !(s["type"] == "receipt" && s["receipt"]["messageIds"][0] == first.as_str())),
        "the receipt of a message read while receipts were off: {skipped:?}"
    );

    // A delivery receipt is an event of its own, beside the read one (on
    // the real network the contact's phone sent it already, by itself: the
    // same receipt again is the same event, logged once).
    let (status, ok) = receipt(&p, "delivered", &[&third]).await;
    assert_eq!(status, 200, "{ok}");
    let is_third = |e: &Value| {
        e["type"] == "receipt"
            && e["receipt"]["status"] == "delivered"
            && e["receipt"]["messageIds"] == json!([third])
    };
    let delivered = match skipped.iter().find(|s| is_third(s)) {
        Some(seen) => seen.clone(),
        None => loop {
            let (next, _) = receipt_event(&mut rx, "delivered").await;
            if is_third(&next.json()) {
                break next.json();
            }
        },
    };
    assert_eq!(
        delivered["eventId"],
        format!("rcpt_rc_delivered_{lid}_{third}")
    );

    // In a group: a member reads the session's message there; the event is
    // the group's, naming the reader.
    let (status, created) = post(
        &p,
        "/sandbox/groups",
        json!({"clientId": "rc", "subject": "Orders", "participants": [CONTACT]}),
    )
    .await;
    assert_eq!(status, 200, "{created}");
    let group = created["jid"].as_str().expect("jid").to_string();
    let (status, sent) = post(
        &p,
        "/send-message",
        json!({"clientId": "rc", "to": group, "body": "Shipping today"}),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    let in_group = sent["messageId"].as_str().expect("messageId").to_string();
    let (status, ok) = post(
        &p,
        "/sandbox/receipts",
        json!({"clientId": "rc", "from": CONTACT, "status": "read", "messageIds": [in_group], "group": group}),
    )
    .await;
    assert_eq!(status, 200, "{ok}");
    let e = loop {
        let (read, _) = receipt_event(&mut rx, "read").await;
        let e = read.json();
        if e["receipt"]["messageIds"] == json!([in_group]) {
            break e;
        }
    };
    assert_eq!(
        (e["remoteJid"].as_str(), e["isGroup"].as_bool()),
        (Some(group.as_str()), Some(true)),
        "{e}"
    );
    assert_eq!(e["group"]["jid"], group.as_str(), "{e}");
    let reader = e["group"]["participant"].as_str().unwrap_or_default();
    assert!(reader.starts_with(lid.as_str()), "the member read it: {e}");
    assert_eq!(
        e["eventId"],
        format!("rcpt_rc_read_{lid}_{in_group}"),
        "{e}"
    );

    // Refusals.
    refused(
        &p,
        "/sandbox/receipts",
        [
        (
            json!({"clientId": "rc", "from": CONTACT, "status": "seen", "messageIds": [second]}),
            400,
        ),
        (
            json!({"clientId": "rc", "from": CONTACT, "status": "read", "messageIds": []}),
            400,
        ),
        (
            json!({"clientId": "rc", "from": "12", "status": "read", "messageIds": [second]}),
            400,
        ),
        (
            json!({"clientId": "nobody", "from": CONTACT, "status": "read", "messageIds": [second]}),
            404,
        ),
        (
            json!({"clientId": "rc", "from": CONTACT, "status": "read", "messageIds": [second], "group": "12345"}),
            400,
        ),
        (
            json!({"clientId": "rc", "from": "4915100000999", "status": "read", "messageIds": [second], "group": group}),
            409,
        ),
        ],
    )
    .await;
}
