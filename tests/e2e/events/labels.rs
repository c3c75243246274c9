//! Chat labels (Parley's routes, beside the spec) on `serve` and on the
//! cluster through a worker move, on either network: refusals, creating,
//! changing and deleting labels and putting them on a chat as app-state
//! patches the account's phone sees (the outbox), the list, the hosted
//! inbox's rooms by label, and no event for any of it.
use parley_tests::receiver::Receiver;
use serde_json::{Value, json};

use super::support::*;
use crate::sends::support::outbox;
use crate::shapes::{Deployment, Shape};
use crate::support::*;

const ID: &str = "lb";

#[tokio::test]
async fn labels_are_kept_on_chats_and_filter_the_inbox_on_serve() {
    labels(Shape::Serve).await;
}

#[tokio::test]
async fn labels_are_kept_on_chats_and_filter_the_inbox_through_a_move_on_a_cluster() {
    labels(Shape::Cluster).await;
}

async fn listed(p: &Parley) -> Vec<Value> {
    let (status, list) = get(p, &format!("/labels?clientId={ID}")).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["clientId"], ID);
    list["labels"].as_array().expect("labels").clone()
}

async fn rooms(p: &Parley, label: &str) -> (u16, Value) {
    get(p, &format!("/chatrooms?clientId={ID}&labelId={label}")).await
}

async fn set_label(p: &Parley, body: Value) -> Value {
    let (status, saved) = post(p, "/set-label", body).await;
    assert_eq!(status, 200, "{saved}");
    saved
}

/// The outbox entries of `kind` (label changes as the phone sees them).
async fn seen(p: &Parley, kind: &str) -> Vec<Value> {
    outbox(p, ID, "")
        .await
        .into_iter()
        .filter(|m| m["kind"] == kind)
        .map(|m| m["payload"].clone())
        .collect()
}

async fn labels(shape: Shape) {
    let dir = tempfile::tempdir().unwrap();
    let mut rx = Receiver::start().await;
    let mut more = EVENT_VARS.to_vec();
    more.push(("PARLEY_HOSTED_RECEIVER_URL", rx.url.as_str()));
    let mut d = Deployment::start(shape, dir.path(), &more).await;
    let (status, _) = get(&d.api, "/labels?clientId=nobody").await;
    assert_eq!(status, 404, "an unknown session");
    hooked(&d.api, ID, &rx.url, json!({})).await;
    super::history::org(&d.api, ID).await;
    let lid = contact(&d.api).await;
    let p = &d.api;
    let (status, _) = get(p, "/labels").await;
    assert_eq!(status, 400, "no clientId");
    assert!(listed(p).await.is_empty());

    refused(
        p,
        "/set-label",
        [
            (json!({"clientId": ID}), 400),
            (json!({"clientId": ID, "name": " "}), 400),
            (json!({"clientId": ID, "name": "x".repeat(101)}), 400),
            (json!({"clientId": ID, "name": "x", "color": 20}), 400),
            (json!({"clientId": ID, "name": "x", "color": -1}), 400),
            (json!({"clientId": ID, "name": "x", "labelId": "a b"}), 400),
            (json!({"clientId": ID, "name": "x", "labelId": "9"}), 404),
            (json!({"clientId": "nobody", "name": "x"}), 404),
        ],
    )
    .await;
    refused(
        p,
        "/delete-label",
        [
            (json!({"clientId": ID}), 400),
            (json!({"clientId": ID, "labelId": "9"}), 404),
        ],
    )
    .await;
    refused(
        p,
        "/set-chat-label",
        [
            (json!({"clientId": ID, "labelId": "1"}), 400),
            (json!({"clientId": ID, "to": "x", "labelId": "1"}), 400),
            (json!({"clientId": ID, "to": format!("+{CONTACT}")}), 400),
            (
                json!({"clientId": ID, "to": format!("+{CONTACT}"), "labelId": "9"}),
                404,
            ),
        ],
    )
    .await;

    // A contact writes: the session's inbox has a room for the chat.
    let first = inject(p, ID, json!({"type": "text", "body": "hello"})).await;
    until_message(&mut rx, &first).await;

    let saved = set_label(
        p,
        json!({"clientId": ID, "name": "New customer", "color": 3}),
    )
    .await;
    assert_eq!(
        saved,
        json!({"ok": true, "clientId": ID, "label": {"id": "1", "name": "New customer", "color": 3}})
    );
    let paid = set_label(p, json!({"clientId": ID, "name": " Paid "})).await;
    assert_eq!(
        paid["label"],
        json!({"id": "2", "name": "Paid", "color": 0})
    );
    // A change keeps what it does not name.
    let renamed = set_label(p, json!({"clientId": ID, "labelId": "1", "name": "Lead"})).await;
    assert_eq!(
        renamed["label"],
        json!({"id": "1", "name": "Lead", "color": 3})
    );
    let to = format!("+{CONTACT}");
    let (status, on) = post(
        p,
        "/set-chat-label",
        json!({"clientId": ID, "to": to, "labelId": "1"}),
    )
    .await;
    assert_eq!(status, 200, "{on}");
    assert_eq!(
        on,
        json!({"ok": true, "clientId": ID, "to": to, "labelId": "1", "labeled": true})
    );

    // The account's phone sees each change.
    let edits = seen(p, "label").await;
    assert!(
        edits.contains(&json!({"labelId": "1", "name": "Lead", "color": 3, "deleted": false})),
        "{edits:?}"
    );
    assert!(
        edits.contains(&json!({"labelId": "2", "name": "Paid", "color": 0, "deleted": false})),
        "{edits:?}"
    );
    let chat_labels = seen(p, "chat_label").await;
    assert_eq!(chat_labels, vec![json!({"labelId": "1", "labeled": true})]);

    if shape == Shape::Cluster {
        d.move_session(ID).await;
    }
    let p = &d.api;
    let labels = listed(p).await;
    assert_eq!(labels.len(), 2, "{labels:?}");
    assert_eq!(
        (&labels[0]["id"], &labels[0]["name"], &labels[0]["color"]),
        (&json!("1"), &json!("Lead"), &json!(3))
    );
    let chats = labels[0]["chats"].as_array().expect("chats");
    assert_eq!(chats.len(), 1, "{labels:?}");
    let chat = chats[0].as_str().unwrap_or_default();
    assert!(
        chat.starts_with(&lid) || chat.starts_with(CONTACT),
        "the contact's chat: {chat}"
    );
    assert_eq!(labels[1]["chats"], json!([]));

    // The inbox's rooms by label.
    let (status, labelled) = rooms(p, "1").await;
    assert_eq!(status, 200, "{labelled}");
    let found = labelled["chatRooms"].as_array().expect("rooms");
    assert_eq!(found.len(), 1, "{labelled}");
    assert_eq!(found[0]["clientLid"], lid.as_str(), "{labelled}");
    let (status, none) = rooms(p, "2").await;
    assert_eq!((status, none["chatRooms"].clone()), (200, json!([])));
    assert_eq!(rooms(p, "9").await.0, 404, "no such label");

    // Off the chat, then deleted.
    let (status, off) = post(
        p,
        "/set-chat-label",
        json!({"clientId": ID, "to": to, "labelId": "1", "labeled": false}),
    )
    .await;
    assert_eq!(
        (status, off["labeled"].clone()),
        (200, json!(false)),
        "{off}"
    );
    assert_eq!(listed(p).await[0]["chats"], json!([]));
    let (status, deleted) = post(p, "/delete-label", json!({"clientId": ID, "labelId": "2"})).await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(deleted, json!({"ok": true, "clientId": ID, "labelId": "2"}));
    let labels = listed(p).await;
    assert_eq!(labels.len(), 1, "{labels:?}");
    let edits = seen(p, "label").await;
    assert!(
        edits.contains(&json!({"labelId": "2", "deleted": true})),
        "{edits:?}"
    );
    assert!(
        seen(p, "chat_label")
            .await
            .contains(&json!({"labelId": "1", "labeled": false}))
    );

    // None of it was an event: the next request is the next message.
    let next = inject(p, ID, json!({"type": "text", "body": "after the labels"})).await;
    next_is_message(&mut rx, &next).await;
}

#[tokio::test]
async fn labels_made_on_the_phone_are_kept_and_are_events_when_turned_on_on_serve() {
    phone_labels(Shape::Serve).await;
}

#[tokio::test]
async fn labels_made_on_the_phone_are_kept_and_are_events_when_turned_on_on_a_cluster() {
    phone_labels(Shape::Cluster).await;
}

async fn on_phone(p: &Parley, body: Value) -> (u16, Value) {
    let mut all = json!({"clientId": ID});
    if let (Some(all), Some(body)) = (all.as_object_mut(), body.as_object()) {
        all.extend(body.clone());
    }
    post(p, "/sandbox/labels", all).await
}

async fn phone(p: &Parley, body: Value) {
    let (status, answer) = on_phone(p, body).await;
    assert_eq!(status, 200, "{answer}");
}

/// The next webhook request: a label event of `event`; its `label`.
async fn label_event(rx: &mut Receiver, event: &str) -> Value {
    let req = rx.next(WAIT).await;
    let body = req.json();
    assert_eq!(
        (&body["event"], &body["type"]),
        (&json!(event), &json!("label")),
        "{body}"
    );
    let event_id = body["eventId"].as_str().unwrap_or_default();
    assert!(event_id.starts_with(&format!("lbl_{ID}_")), "{body}");
    body["label"].clone()
}

async fn phone_labels(shape: Shape) {
    let dir = tempfile::tempdir().unwrap();
    let mut rx = Receiver::start().await;
    let mut d = Deployment::start(shape, dir.path(), EVENT_VARS).await;
    hooked(&d.api, ID, &rx.url, json!({})).await;
    let lid = contact(&d.api).await;
    refused(
        &d.api,
        "/sandbox/labels",
        [
            (json!({"clientId": ID, "name": "x"}), 400),
            (json!({"clientId": ID, "labelId": "7"}), 400),
            (
                json!({"clientId": ID, "labelId": "7", "chat": "nobody"}),
                400,
            ),
            (
                json!({"clientId": "nobody", "labelId": "7", "name": "x"}),
                404,
            ),
        ],
    )
    .await;

    // Without the label events the session keeps what the phone does.
    // (On the test network the phone's patches reach the session's device
    // as the real ones do: it is told, and syncs. One change at a time, as
    // a person makes them.)
    phone(&d.api, json!({"labelId": "7", "name": "VIP", "color": 5})).await;
    let saved = json!([{"id": "7", "name": "VIP", "color": 5, "chats": []}]);
    eventually(15, "the phone's label kept", || async {
        (Value::Array(listed(&d.api).await) == saved).then_some(())
    })
    .await;
    phone(
        &d.api,
        json!({"labelId": "7", "chat": format!("+{CONTACT}")}),
    )
    .await;
    let kept = json!([{"id": "7", "name": "VIP", "color": 5, "chats": [format!("{lid}@lid")]}]);
    eventually(15, "the phone's label on the chat kept", || async {
        (Value::Array(listed(&d.api).await) == kept).then_some(())
    })
    .await;
    if shape == Shape::Cluster {
        d.move_session(ID).await;
        let after = Value::Array(listed(&d.api).await);
        assert_eq!(after, kept, "kept through the move");
    }
    let p = &d.api;

    // With them, each change is an event; the API's own are not.
    turn_on(p, ID, &["label"]).await;
    phone(p, json!({"labelId": "7", "name": "VIP+", "color": 6})).await;
    assert_eq!(
        label_event(&mut rx, "label.saved").await,
        json!({"labelId": "7", "name": "VIP+", "color": 6})
    );
    phone(
        p,
        json!({"labelId": "7", "chat": format!("+{CONTACT}"), "labeled": false}),
    )
    .await;
    assert_eq!(
        label_event(&mut rx, "label.chat").await,
        json!({"labelId": "7", "chatJid": format!("{lid}@lid"), "labeled": false})
    );
    set_label(p, json!({"clientId": ID, "name": "From the API"})).await;
    phone(p, json!({"labelId": "7", "deleted": true})).await;
    assert_eq!(
        label_event(&mut rx, "label.deleted").await,
        json!({"labelId": "7"})
    );
    // What changes nothing is no event.
    phone(p, json!({"labelId": "7", "deleted": true})).await;
    let next = inject(p, ID, json!({"type": "text", "body": "after the labels"})).await;
    next_is_message(&mut rx, &next).await;
    let labels = listed(p).await;
    let ids: Vec<&Value> = labels.iter().map(|l| &l["id"]).collect();
    assert_eq!(ids, vec![&json!("8")], "the API's, the phone's gone");
}

#[tokio::test]
async fn labels_the_phone_had_before_the_link_are_kept_without_events_on_serve() {
    labels_before_the_link(Shape::Serve).await;
}

#[tokio::test]
async fn labels_the_phone_had_before_the_link_are_kept_without_events_on_a_cluster() {
    labels_before_the_link(Shape::Cluster).await;
}

/// The phone's labels before the session linked (app state's first sync)
/// are kept, on their chats, and are no events though the session turned
/// label events on; the phone's labels set again once it is linked, and
/// its next change, are.
async fn labels_before_the_link(shape: Shape) {
    let dir = tempfile::tempdir().unwrap();
    let mut rx = Receiver::start().await;
    let mut d = Deployment::start(shape, dir.path(), EVENT_VARS).await;
    let lid = contact(&d.api).await;
    let (status, set) = post(
        &d.api,
        "/sandbox/history",
        json!({"phone": OWN_PHONE, "messages": [], "labels": [
            {"labelId": "3", "name": "Paid", "color": 2, "chats": [format!("+{CONTACT}")]},
            {"labelId": "4", "name": "Open", "color": 9},
        ]}),
    )
    .await;
    assert_eq!(status, 200, "{set}");
    assert_eq!(set, json!({"phone": OWN_PHONE, "messages": 0, "labels": 2}));
    started(&d.api, ID, &rx.url, json!({})).await;
    turn_on(&d.api, ID, &["label"]).await;
    linked_as(&d.api, ID, OWN_PHONE).await;
    let kept = json!([
        {"id": "3", "name": "Paid", "color": 2, "chats": [format!("{lid}@lid")]},
        {"id": "4", "name": "Open", "color": 9, "chats": []},
    ]);
    eventually(15, "the phone's labels kept", || async {
        (Value::Array(listed(&d.api).await) == kept).then_some(())
    })
    .await;
    let next = inject(
        &d.api,
        ID,
        json!({"type": "text", "body": "after the link"}),
    )
    .await;
    next_is_message(&mut rx, &next).await;
    if shape == Shape::Cluster {
        d.move_session(ID).await;
        assert_eq!(
            Value::Array(listed(&d.api).await),
            kept,
            "kept through the move"
        );
    }
    // The phone's labels set again while the session is linked: what
    // changed reaches it as live changes, so as events (label 3 and its
    // chat, unchanged, are none).
    let (status, set) = post(
        &d.api,
        "/sandbox/history",
        json!({"phone": OWN_PHONE, "messages": [], "labels": [
            {"labelId": "3", "name": "Paid", "color": 2, "chats": [format!("+{CONTACT}")]},
        ]}),
    )
    .await;
    assert_eq!(status, 200, "{set}");
    assert_eq!(
        label_event(&mut rx, "label.deleted").await,
        json!({"labelId": "4"})
    );
    phone(&d.api, json!({"labelId": "3", "name": "Paid", "color": 10})).await;
    assert_eq!(
        label_event(&mut rx, "label.saved").await,
        json!({"labelId": "3", "name": "Paid", "color": 10})
    );
}
