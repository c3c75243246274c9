//! What each send route leaves in the hosted inbox, on `serve` and on the
//! cluster: one row of the spec's `messageType` per message sent (a media send
//! that fell back to a text link is `chat`, buttons are `interactive`), and no
//! new row for reactions, edits and deletes, which change their target. And
//! `/mark-unread`, which needs a stored message of the chat (404 otherwise,
//! also for every session without the hosted inbox).
use parley_tests::receiver::Receiver;
use serde_json::{Value, json};

use crate::events::history::org;
use crate::events::support::{
    CONTACT, EVENT_VARS, contact, hooked, hooked_as, text, until_message,
};
use crate::sends::support::{Answer, Part, file_server, outbox, upload};
use crate::shapes::{Deployment, Shape};
use crate::support::*;

/// Over the 60 MB attachment limit: sent as a link.
const OVER_ATTACHMENT_LIMIT: usize = 61 * 1024 * 1024;

async fn hosted(shape: Shape, dir: &std::path::Path, rx: &Receiver) -> Deployment {
    let mut more = EVENT_VARS.to_vec();
    more.push(("PARLEY_HOSTED_RECEIVER_URL", &rx.url));
    Deployment::start(shape, dir, &more).await
}

async fn stored(p: &Parley, id: &str, room: &str) -> Vec<Value> {
    let (status, body) = get(p, &format!("/chatrooms/{room}/messages?clientId={id}")).await;
    assert_eq!(status, 200, "{body}");
    body["messages"].as_array().expect("messages").clone()
}

fn row<'a>(rows: &'a [Value], message_id: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["messageId"] == message_id)
        .unwrap_or_else(|| panic!("no stored row {message_id} in {rows:?}"))
}

#[tokio::test]
async fn each_send_is_stored_with_its_message_type_on_serve() {
    message_types(Shape::Serve).await;
}

#[tokio::test]
async fn each_send_is_stored_with_its_message_type_on_a_cluster() {
    message_types(Shape::Cluster).await;
}

async fn message_types(shape: Shape) {
    let dir = tempfile::tempdir().unwrap();
    let mut rx = Receiver::start().await;
    let d = hosted(shape, dir.path(), &rx).await;
    let p = &d.api;
    let my_lid = hooked(p, "st", &rx.url, json!({})).await;
    org(p, "st").await;
    let lid = contact(p).await;
    let room = format!("st-{my_lid}-{lid}");
    let to = format!("+{CONTACT}");
    let png = file_server(Answer::file("image/png", b"\x89PNG\r\n\x1a\n".to_vec())).await;
    let ogg = file_server(Answer::file("audio/ogg", b"OggS voice".to_vec())).await;
    let webp = file_server(Answer::file("image/webp", b"RIFF....WEBP".to_vec())).await;
    let big = file_server(Answer::file("video/mp4", vec![0u8; OVER_ATTACHMENT_LIMIT])).await;

    let json_sends: Vec<(&str, &str, Value)> = vec![
        ("chat", "/send-message", json!({"body": "hello"})),
        (
            "image",
            "/send-media-message",
            json!({"downloadUrl": format!("{}/a.png", png.base), "caption": "a picture"}),
        ),
        (
            "audio",
            "/send-media-message",
            json!({"downloadUrl": format!("{}/v.ogg", ogg.base), "sendAudioAsVoice": true}),
        ),
        (
            "sticker",
            "/send-media-message",
            json!({"downloadUrl": format!("{}/s.webp", webp.base), "asSticker": true}),
        ),
        (
            "chat",
            "/send-media-message",
            json!({"downloadUrl": format!("{}/big.mp4", big.base), "caption": "too big"}),
        ),
        (
            "poll",
            "/send-poll-message",
            json!({"pollName": "Lunch?", "pollOptions": ["Pizza", "Soup"]}),
        ),
        (
            "interactive",
            "/send-interactive-message",
            json!({"bodyText": "Pick one", "buttons": [{"type": "quick_reply", "displayText": "Yes", "id": "yes"}]}),
        ),
        (
            "location",
            "/send-location",
            json!({"latitude": 52.52, "longitude": 13.405, "name": "Berlin"}),
        ),
        (
            "contact",
            "/send-contact",
            json!({"displayName": "Bob", "phone": "4915112345678"}),
        ),
    ];
    let mut expected = Vec::new();
    for (message_type, route, mut body) in json_sends {
        body["clientId"] = json!("st");
        body["to"] = json!(to);
        let (status, sent) = post(p, route, body.clone()).await;
        assert_eq!(status, 200, "{route} {body}: {sent}");
        if body.get("caption") == Some(&json!("too big")) {
            assert_eq!(sent["fallback"], "text", "{sent}");
        }
        let id = sent["messageId"].as_str().expect("messageId").to_string();
        until_message(&mut rx, &id).await;
        expected.push((message_type, route, id));
    }
    for (message_type, file_name, content_type) in [
        ("document", "invoice.pdf", "application/pdf"),
        ("video", "clip.mp4", "video/mp4"),
    ] {
        let (status, sent) = upload(
            p,
            "?clientId=st",
            &[
                Part::File {
                    name: "file",
                    file_name,
                    content_type,
                    data: b"file bytes",
                },
                Part::Text("to", &to),
            ],
        )
        .await;
        assert_eq!(status, 200, "{file_name}: {sent}");
        let id = sent["messageId"].as_str().expect("messageId").to_string();
        until_message(&mut rx, &id).await;
        expected.push((message_type, "/send-media-message (multipart)", id));
    }

    let rows = stored(p, "st", &room).await;
    for (message_type, route, id) in &expected {
        let r = row(&rows, id);
        assert_eq!(r["messageType"], *message_type, "{route}: {r}");
        assert_eq!(r["fromMe"], true, "{route}: {r}");
    }
    assert_eq!(rows.len(), expected.len(), "one row per message sent");

    // Reactions, edits and deletes change their target and store no new row.
    let target = expected[0].2.clone();
    for (route, body) in [
        (
            "/send-reaction",
            json!({"messageId": target, "emoji": "🔥", "targetFromMe": true}),
        ),
        (
            "/edit-message",
            json!({"messageId": target, "body": "hello again"}),
        ),
        (
            "/delete-message",
            json!({"messageId": target, "fromMe": true, "mode": "everyone"}),
        ),
    ] {
        let mut body = body;
        body["clientId"] = json!("st");
        body["to"] = json!(to);
        let (status, answer) = post(p, route, body).await;
        assert_eq!(status, 200, "{route}: {answer}");
        // The update's own event is in once the row was changed.
        let marker = text(p, "st", &format!("after {route}")).await;
        until_message(&mut rx, &marker).await;
        expected.push(("chat", "marker", marker));
        let rows = stored(p, "st", &room).await;
        assert_eq!(rows.len(), expected.len(), "{route} stored no new row");
        let changed = row(&rows, &target);
        match route {
            "/send-reaction" => {
                assert_eq!(changed["extras"]["reactions"][&my_lid], "🔥", "{changed}")
            }
            "/edit-message" => assert_eq!(changed["body"], "hello again", "{changed}"),
            _ => assert_eq!(changed["deleted"], true, "{changed}"),
        }
    }
}

#[tokio::test]
async fn mark_unread_needs_a_stored_message_on_serve() {
    mark_unread(Shape::Serve).await;
}

#[tokio::test]
async fn mark_unread_needs_a_stored_message_on_a_cluster() {
    mark_unread(Shape::Cluster).await;
}

async fn mark_unread(shape: Shape) {
    let dir = tempfile::tempdir().unwrap();
    let mut rx = Receiver::start().await;
    let plain_rx = Receiver::start().await;
    let d = hosted(shape, dir.path(), &rx).await;
    let p = &d.api;
    hooked(p, "inbox", &rx.url, json!({})).await;
    org(p, "inbox").await;
    let lid = contact(p).await;

    // Nothing stored for the chat yet: 404, and nothing reaches the network.
    let (status, body) = post(p, "/mark-unread", json!({"clientId": "inbox", "to": lid})).await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{body}"
    );
    let message = text(p, "inbox", "hello").await;
    until_message(&mut rx, &message).await;
    let (status, body) = post(p, "/mark-unread", json!({"clientId": "inbox", "to": lid})).await;
    assert_eq!((status, body), (200, json!({"ok": true})));
    let unread: Vec<Value> = outbox(p, "inbox", "")
        .await
        .into_iter()
        .filter(|m| m["kind"] == "unread")
        .collect();
    assert_eq!(unread.len(), 1, "{unread:?}");
    // The network refuses the app-state patch: 502.
    let (status, _) = post(
        p,
        "/sandbox/faults",
        json!({"clientId": "inbox", "op": "receipt", "count": 1}),
    )
    .await;
    assert_eq!(status, 200);
    let (status, body) = post(p, "/mark-unread", json!({"clientId": "inbox", "to": lid})).await;
    assert_eq!(status, 502, "{body}");

    // A session without the hosted inbox stores nothing: always 404.
    // Another account (one account's sessions share its app state).
    hooked_as(p, "plain", &plain_rx.url, json!({}), "4915100000302").await;
    inject_text(p, "plain").await;
    let (status, body) = post(p, "/mark-unread", json!({"clientId": "plain", "to": lid})).await;
    assert_eq!(status, 404, "{body}");
    assert!(
        outbox(p, "plain", "")
            .await
            .iter()
            .all(|m| m["kind"] != "unread"),
        "nothing reached the network"
    );
}

/// A message to `id` from the contact (delivered or not: `id` keeps no history).
async fn inject_text(p: &Parley, id: &str) {
    text(p, id, "hi").await;
}
