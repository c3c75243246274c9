//! Posting status updates (`/send-status`): a text status with its
//! background and font to the contacts named, then to every contact the
//! session knows; the outbox shows each going to `status@broadcast` with
//! its audience; its `fromMe` event is a `status` event, only once the
//! session turned `status` on; `/delete-status` revokes one for the same
//! audience.
use parley_tests::receiver::Receiver;
use serde_json::{Value, json};

use super::support::*;
use crate::sends::support::{Answer, file_server};
use crate::shapes::{Deployment, Shape};
use crate::support::*;

/// The session's status updates in the outbox, oldest first.
async fn posted(p: &Parley) -> Vec<Value> {
    let (status, outbox) = get(p, "/sandbox/outbox?clientId=sp").await;
    assert_eq!(status, 200, "{outbox}");
    outbox["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["to"] == "status@broadcast")
        .cloned()
        .collect()
}

/// The outbox entry of status `id`, once it is there.
async fn entry(p: &Parley, id: &str) -> Value {
    eventually(10, "the status in the outbox", || async {
        posted(p).await.into_iter().find(|m| m["messageId"] == id)
    })
    .await
}

/// Posts the status `body` asks for, to one contact: its outbox entry,
/// checked to name `lid` as its audience.
async fn posted_to(p: &Parley, body: Value, lid: &str) -> Value {
    let (status, sent) = post(p, "/send-status", body).await;
    assert_eq!(status, 200, "{sent}");
    assert_eq!(sent["status"], "sent", "{sent}");
    assert_eq!(sent["audience"], 1, "{sent}");
    let id = sent["messageId"].as_str().expect("messageId");
    let e = entry(p, id).await;
    assert_eq!(
        e["payload"]["audience"],
        json!([format!("{lid}@lid")]),
        "{e}"
    );
    e
}

/// Deletes status `id`: answered, then in the outbox as a revoke to the
/// audience it was shown to (`lid`).
async fn deleted(p: &Parley, id: &str, lid: &str) {
    let (status, done) = post(
        p,
        "/delete-status",
        json!({"clientId": "sp", "messageId": id}),
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done, json!({"ok": true, "clientId": "sp", "messageId": id}));
    let revoke = eventually(10, "the deletion in the outbox", || async {
        posted(p)
            .await
            .into_iter()
            .find(|m| m["kind"] == "revoke" && m["payload"]["targetId"] == id)
    })
    .await;
    assert_eq!(
        revoke["payload"]["audience"],
        json!([format!("{lid}@lid")]),
        "{revoke}"
    );
}

#[tokio::test]
async fn a_session_posts_statuses_to_the_contacts_named_or_all() {
    let dir = tempfile::tempdir().unwrap();
    let mut rx = Receiver::start().await;
    let p = serve_events(dir.path()).await;
    hooked(&p, "sp", &rx.url, json!({})).await;
    let lid = contact(&p).await;
    // The contact wrote: the session knows it.
    let hello = text(&p, "sp", "hello").await;
    until_message(&mut rx, &hello).await;

    refused(
        &p,
        "/send-status",
        [
            (json!({"clientId": "sp"}), 400),
            (
                json!({"clientId": "sp", "body": "x", "backgroundColor": "green"}),
                400,
            ),
            (json!({"clientId": "sp", "body": "x", "font": "comic"}), 400),
            (json!({"clientId": "sp", "body": "x", "audience": []}), 400),
            (
                json!({"clientId": "sp", "body": "x", "audience": ["120363025246125486@g.us"]}),
                400,
            ),
            (json!({"clientId": "sp", "type": "story", "body": "x"}), 400),
            (
                json!({"clientId": "sp", "type": "image", "font": "system",
                "downloadUrl": "https://example.com/a.jpg"}),
                400,
            ),
            (json!({"clientId": "nobody", "body": "x"}), 404),
        ],
    )
    .await;

    let body = json!({"clientId": "sp", "body": "Open today until 8", "backgroundColor": "#1E6E4F",
        "font": "system_bold", "audience": [format!("+{CONTACT}")]});
    let e = posted_to(&p, body, &lid).await;
    assert_eq!(e["kind"], "text", "{e}");
    assert_eq!(e["payload"]["body"], "Open today until 8", "{e}");
    assert_eq!(e["payload"]["backgroundColor"], "#FF1E6E4F", "{e}");
    assert_eq!(e["payload"]["font"], "system_bold", "{e}");
    // With `status` off its event is not delivered: the contact's next
    // message is the next thing the webhook hears.
    let next = text(&p, "sp", "nice").await;
    next_is_message(&mut rx, &next).await;

    // Every contact the session knows, with `status` on: a status event
    // of the session's own.
    turn_on(&p, "sp", &["status"]).await;
    let e = posted_to(
        &p,
        json!({"clientId": "sp", "body": "Closed on Monday"}),
        &lid,
    )
    .await;
    let id = e["messageId"].as_str().expect("messageId").to_string();
    let event = rx.next(WAIT).await.json();
    assert_eq!(event["type"], "status", "{event}");
    assert_eq!(event["event"], "status.received", "{event}");
    assert_eq!(event["fromMe"], true, "{event}");
    assert_eq!(event["messageId"], id.as_str(), "{event}");
    assert_eq!(event["body"], "Closed on Monday", "{event}");
    assert_eq!(event["status"], json!({"type": "text"}), "{event}");

    // An image status, fetched from its URL like a media send.
    let png = file_server(Answer::file("image/png", b"\x89PNG\r\n\x1a\n".to_vec())).await;
    let body = json!({"clientId": "sp", "type": "image", "downloadUrl": format!("{}/a.png", png.base),
        "caption": "our new shop", "audience": [format!("+{CONTACT}")]});
    let e = posted_to(&p, body, &lid).await;
    let id = e["messageId"].as_str().expect("messageId").to_string();
    assert_eq!(e["kind"], "image", "{e}");
    assert_eq!(e["payload"]["caption"], "our new shop", "{e}");
    assert_eq!(
        e["payload"]["audience"],
        json!([format!("{lid}@lid")]),
        "{e}"
    );
    let event = rx.next(WAIT).await.json();
    assert_eq!(event["type"], "status", "{event}");
    assert_eq!(event["status"], json!({"type": "image"}), "{event}");
    assert_eq!(event["messageId"], id.as_str(), "{event}");

    // Deleted: a revoke to the audience it was shown to, once; no event.
    refused(
        &p,
        "/delete-status",
        [
            (json!({"clientId": "sp"}), 400),
            (json!({"clientId": "sp", "messageId": "not an id"}), 400),
            (
                json!({"clientId": "sp", "messageId": "3EB0000000000000DEAD"}),
                404,
            ),
            (json!({"clientId": "nobody", "messageId": id}), 404),
        ],
    )
    .await;
    deleted(&p, &id, &lid).await;
    let delete = json!({"clientId": "sp", "messageId": id});
    let (status, gone) = post(&p, "/delete-status", delete).await;
    assert_eq!(status, 404, "deleted once: {gone}");
    let next = text(&p, "sp", "it is gone").await;
    next_is_message(&mut rx, &next).await;
}

/// The audience of a posted status is kept with the session: the worker
/// that owns it after a move deletes it for the same contacts.
#[tokio::test]
async fn a_status_posted_before_a_move_is_deleted_after_it_on_a_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let mut d = Deployment::start(Shape::Cluster, dir.path(), EVENT_VARS).await;
    let mut rx = Receiver::start().await;
    hooked(&d.api, "sp", &rx.url, json!({})).await;
    let lid = contact(&d.api).await;
    let hello = text(&d.api, "sp", "hello").await;
    until_message(&mut rx, &hello).await;
    let e = posted_to(
        &d.api,
        json!({"clientId": "sp", "body": "Back on Tuesday"}),
        &lid,
    )
    .await;
    let id = e["messageId"].as_str().expect("messageId").to_string();
    d.move_session("sp").await;
    deleted(&d.api, &id, &lid).await;
}
