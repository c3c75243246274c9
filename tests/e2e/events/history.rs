//! The hosted inbox written by events: a session with an `orgId` whose webhook
//! is the hosted receiver keeps every inbound and outbound message, files
//! included, and votes resolve from it; a send whose history write fails still
//! answers 200, with a `warning`.
use std::time::Duration;

use base64::Engine;
use parley_tests::receiver::{Behaviour, Receiver};
use serde_json::{Value, json};

use super::support::*;
use crate::support::*;

/// `parley serve` whose hosted receiver is `hook` (plus `more` settings).
pub(crate) async fn serve_hosted(
    dir: &std::path::Path,
    hook: &str,
    more: &[(&str, &str)],
) -> Parley {
    let mut vars = vec![
        ("PARLEY_ALLOW_HTTP_WEBHOOKS", "true"),
        ("PARLEY_ALLOW_PRIVATE_EGRESS", "true"),
        ("PARLEY_HOSTED_RECEIVER_URL", hook),
    ];
    vars.extend_from_slice(more);
    serve_with(dir, &vars).await
}

pub(crate) async fn org(p: &Parley, id: &str) {
    let (status, body) = post(p, "/set-org-id", json!({"clientId": id, "orgId": "org-9"})).await;
    assert_eq!(status, 200, "{body}");
}

pub(crate) async fn rooms(p: &Parley, id: &str) -> Vec<Value> {
    let (status, body) = get(p, &format!("/chatrooms?clientId={id}")).await;
    assert_eq!(status, 200, "{body}");
    body["chatRooms"].as_array().expect("chatRooms").clone()
}

pub(crate) async fn messages(p: &Parley, id: &str, room: &str) -> Vec<Value> {
    let (status, body) = get(p, &format!("/chatrooms/{room}/messages?clientId={id}")).await;
    assert_eq!(status, 200, "{body}");
    body["messages"].as_array().expect("messages").clone()
}

#[tokio::test]
async fn events_and_sends_fill_the_hosted_inbox() {
    let dir = tempfile::tempdir().unwrap();
    let mut rx = Receiver::start().await;
    let p = serve_hosted(dir.path(), &rx.url, &[]).await;
    let my_lid = hooked(&p, "inb", &rx.url, json!({})).await;
    org(&p, "inb").await;
    let lid = contact(&p).await;
    let room = format!("inb-{my_lid}-{lid}");

    let hello = inject(&p, "inb", json!({"type": "text", "body": "hello"})).await;
    assert_eq!(rx.next(WAIT).await.json()["orgId"], "org-9");
    let data: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
    let b64 = base64::engine::general_purpose::STANDARD.encode(&data);
    let photo = inject(
        &p,
        "inb",
        json!({"type": "image", "data": b64, "mimeType": "image/jpeg", "caption": "photo"}),
    )
    .await;
    let e = rx.next(WAIT).await.json();
    let url = e["media"]["downloadUrl"].as_str().unwrap().to_string();
    assert!(
        url.starts_with("http"),
        "the event carries the stored link: {e}"
    );
    let res = client().get(&url).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.headers()["content-type"].to_str().unwrap(),
        "image/jpeg"
    );
    assert_eq!(res.bytes().await.unwrap().to_vec(), data, "the same bytes");

    // A duplicate delivery from the network: the log has its event already
    // (the same eventId), so it is neither delivered again nor stored twice.
    inject(
        &p,
        "inb",
        json!({"type": "text", "body": "hello", "messageId": hello}),
    )
    .await;
    inject(
        &p,
        "inb",
        json!({"type": "reaction", "targetId": hello, "emoji": "👍"}),
    )
    .await;
    // A session's messages are taken in arrival order: the duplicate came first.
    assert_eq!(
        rx.next(WAIT).await.json()["type"],
        "reaction",
        "the duplicate is not delivered again"
    );
    inject(
        &p,
        "inb",
        json!({"type": "edit", "targetId": hello, "body": "hello (edited)"}),
    )
    .await;
    rx.next(WAIT).await;
    let (status, sent) = post(
        &p,
        "/send-message",
        json!({"clientId": "inb", "to": lid, "body": "an AI answer", "metaData": {"fromAI": true},
               "quotedMessageId": hello}),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    assert!(sent.get("warning").is_none(), "{sent}");
    let e = rx.next(WAIT).await.json();
    assert_eq!(
        e["quoted"]["body"], "hello (edited)",
        "quoted preview from history: {e}"
    );

    let listed = rooms(&p, "inb").await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    let r = &listed[0];
    assert_eq!(
        (r["chatRoomId"].as_str(), r["unreadCount"].as_u64()),
        (Some(room.as_str()), Some(2))
    );
    assert_eq!(
        (r["lastMessage"].as_str(), r["lastMessageFromMe"].as_bool()),
        (Some("an AI answer"), Some(true))
    );
    let stored = messages(&p, "inb", &room).await;
    let ids: Vec<&str> = stored
        .iter()
        .map(|m| m["messageId"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            hello.as_str(),
            photo.as_str(),
            sent["messageId"].as_str().unwrap()
        ]
    );
    assert_eq!(stored[0]["body"], "hello (edited)");
    assert_eq!(stored[0]["extras"]["edited"], true);
    assert!(
        stored[0]["extras"]["reactions"].to_string().contains("👍"),
        "{}",
        stored[0]
    );
    assert_eq!(
        (
            stored[1]["messageType"].as_str(),
            stored[1]["downloadUrl"].as_str()
        ),
        (Some("image"), Some(url.as_str()))
    );
    assert_eq!(
        (stored[2]["fromMe"].as_bool(), stored[2]["fromAi"].as_bool()),
        (Some(true), Some(true))
    );

    let (status, body) = post(
        &p,
        &format!("/chatrooms/{room}/read?clientId=inb"),
        json!({}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(rooms(&p, "inb").await[0]["unreadCount"], 0);

    // Another webhook: not the hosted receiver, so nothing more is stored.
    let mut other = Receiver::start().await;
    let (status, body) = post(
        &p,
        "/set-webhook",
        json!({"clientId": "inb", "webhookUrl": other.url}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let id = inject(&p, "inb", json!({"type": "text", "body": "not stored"})).await;
    assert_eq!(other.next(WAIT).await.json()["messageId"], id.as_str());
    assert_eq!(messages(&p, "inb", &room).await.len(), 3);
}

#[tokio::test]
async fn votes_resolve_from_history_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut rx = Receiver::start().await;
    let mut lookup = Receiver::start().await;
    lookup.set_default(Behaviour::Json(200, r#"{"options": ["wrong"]}"#.into()));
    let p = serve_hosted(dir.path(), &rx.url, &[]).await;
    hooked(&p, "hv", &rx.url, json!({"pollLookupUrl": lookup.url})).await;
    org(&p, "hv").await;
    contact(&p).await;
    let poll = inject(
        &p,
        "hv",
        json!({"type": "poll_creation", "pollName": "When?", "pollOptions": ["Mon", "Tue"]}),
    )
    .await;
    rx.next(WAIT).await;

    // A new process knows no polls in memory: the stored one answers.
    let mut p = p;
    assert_eq!(p.terminate().await, Some(0), "{}", p.output());
    let p = serve_hosted(dir.path(), &rx.url, &[]).await;
    eventually(15, "connected again", || async {
        let (_, body) = post(&p, "/check-state", json!({"clientId": "hv"})).await;
        (body["status"] == true).then_some(())
    })
    .await;
    inject(
        &p,
        "hv",
        json!({"type": "vote_update", "pollMessageId": poll, "selectedOptions": ["Tue"]}),
    )
    .await;
    // The poll's event may come again first: delivery is at least once, and
    // the first process may have stopped before it recorded the delivery.
    let e = loop {
        let e = rx.next(WAIT).await.json();
        if e["type"] != "poll_creation" {
            break e;
        }
    };
    assert_eq!(e["pollVote"]["resolved"], true, "{e}");
    assert_eq!(e["pollVote"]["selectedOptions"], json!(["Tue"]));
    assert!(
        lookup
            .maybe_next(Duration::from_millis(300))
            .await
            .is_none(),
        "history answered; the lookup was not asked"
    );
}

#[tokio::test]
async fn a_send_whose_history_write_fails_answers_200_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let database = services::fresh_postgres().await;
    let mut rx = Receiver::start().await;
    let p = serve_hosted(dir.path(), &rx.url, &[("PARLEY_DATABASE_URL", &database)]).await;
    let my_lid = hooked(&p, "warn", &rx.url, json!({})).await;
    org(&p, "warn").await;
    let lid = contact(&p).await;
    let (status, sent) = post(
        &p,
        "/send-message",
        json!({"clientId": "warn", "to": lid, "body": "stored"}),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    assert!(sent.get("warning").is_none(), "{sent}");
    rx.next(WAIT).await;

    // The history table goes away under the running process.
    let db = parley_shared::db::Db::connect(&database).await.unwrap();
    use parley_shared::db::ConnectionTrait;
    db.conn()
        .execute_unprepared("ALTER TABLE history_messages RENAME TO history_messages_away")
        .await
        .unwrap();
    let (status, sent) = post(
        &p,
        "/send-message",
        json!({"clientId": "warn", "to": lid, "body": "not stored"}),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    assert!(
        sent["warning"]
            .as_str()
            .is_some_and(|w| w.contains("not stored in the hosted inbox")),
        "{sent}"
    );
    let e = rx.next(WAIT).await.json();
    assert_eq!(
        e["messageId"], sent["messageId"],
        "the event is still delivered"
    );
    let outbox = get(&p, "/sandbox/outbox?clientId=warn").await.1;
    assert_eq!(
        outbox["messages"].as_array().unwrap().len(),
        2,
        "both were sent"
    );

    db.conn()
        .execute_unprepared("ALTER TABLE history_messages_away RENAME TO history_messages")
        .await
        .unwrap();
    let room = format!("warn-{my_lid}-{lid}");
    let stored = messages(&p, "warn", &room).await;
    assert_eq!(stored.len(), 1, "only the first was stored: {stored:?}");
}
