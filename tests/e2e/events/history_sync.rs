//! History sync: the chats the linking phone holds (`/sandbox/history`)
//! reach the hosted inbox of the session it links, oldest first, without
//! counting as unread and without a webhook event, files without their
//! bytes; what arrives live after
//! them is delivered as always. The names the phone's contacts gave
//! themselves name their rooms, also a room of the phone's own messages
//! only. On a cluster, a session moved to another worker keeps them, and
//! the phone's past is not imported a second time.
use chrono::{Duration, SecondsFormat, Utc};
use parley_tests::receiver::Receiver;
use serde_json::{Value, json};

use super::history::{org, rooms};
use super::support::*;
use crate::shapes::{Deployment, Shape};
use crate::support::*;

/// The phone whose past the session receives.
const PAST_PHONE: &str = "4915100000310";
/// A contact the phone only wrote to.
const WRITTEN_TO: &str = "4915100000311";

fn at(minutes_ago: i64) -> String {
    (Utc::now() - Duration::minutes(minutes_ago)).to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The room's messages once there are `count` of them.
async fn stored(p: &Parley, id: &str, room: &str, count: usize) -> Vec<Value> {
    eventually(30, "the phone's chats in the hosted inbox", || async {
        let (status, body) = get(p, &format!("/chatrooms/{room}/messages?clientId={id}")).await;
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        (status == 200 && messages.len() == count).then_some(messages)
    })
    .await
}

#[tokio::test]
async fn the_phones_chats_fill_the_hosted_inbox_at_linking_and_reach_no_webhook() {
    history_sync(Shape::Serve).await;
}

#[tokio::test]
async fn on_a_cluster_the_phones_chats_are_imported_once_and_stay_through_a_move() {
    history_sync(Shape::Cluster).await;
}

async fn history_sync(shape: Shape) {
    let dir = tempfile::tempdir().unwrap();
    let mut rx = Receiver::start().await;
    let hosted = [
        ("PARLEY_ALLOW_HTTP_WEBHOOKS", "true"),
        ("PARLEY_ALLOW_PRIVATE_EGRESS", "true"),
        ("PARLEY_HOSTED_RECEIVER_URL", rx.url.as_str()),
    ];
    let mut d = Deployment::start(shape, dir.path(), &hosted).await;
    let p = &d.api;

    // Bad bodies are 400s that name the field, and change nothing.
    let one = |m: Value| json!({"phone": PAST_PHONE, "messages": [m]});
    for (body, names) in [
        (json!({"phone": "12"}), "phone"),
        (
            one(json!({"chat": PAST_PHONE, "body": "x"})),
            "messages[0].chat",
        ),
        (
            one(json!({"chat": CONTACT, "body": " "})),
            "messages[0].body",
        ),
        (
            one(json!({"chat": CONTACT, "body": "x", "type": "location"})),
            "messages[0].type",
        ),
        (
            one(json!({"chat": CONTACT, "body": "x", "type": "image", "mimeType": "image/png"})),
            "messages[0].data",
        ),
        (
            one(json!({"chat": CONTACT, "type": "image", "data": "bm90IGEgcG5n"})),
            "messages[0].mimeType",
        ),
        (
            one(json!({"chat": CONTACT, "body": "x", "at": "2999-01-01T00:00:00Z"})),
            "future",
        ),
        (
            one(json!({"chat": "120363000000000301@g.us", "body": "x"})),
            "messages[0].from",
        ),
    ] {
        let (status, answer) = post(p, "/sandbox/history", body.clone()).await;
        assert_eq!(status, 400, "{body}: {answer}");
        let error = answer["error"].as_str().unwrap_or_default();
        assert!(error.contains(names), "{body}: {answer}");
    }

    let lid = contact(p).await;
    let (status, written_to) = post(
        p,
        "/sandbox/contacts",
        json!({"phone": WRITTEN_TO, "name": "Bea Lopez"}),
    )
    .await;
    assert_eq!(status, 200, "{written_to}");
    let past = json!({"phone": PAST_PHONE, "messages": [
        {"chat": WRITTEN_TO, "fromMe": true, "body": "your order shipped", "at": at(200), "messageId": "3EB0AAAA00000000000009"},
        {"chat": WRITTEN_TO, "fromMe": true, "type": "document", "body": "the invoice", "data": "JVBERi0xLjQKJSBpbnZvaWNl", "mimeType": "application/pdf", "fileName": "invoice.pdf", "at": at(199), "messageId": "3EB0AAAA00000000000010"},
        {"chat": CONTACT, "fromMe": true, "body": "yes, from ten", "at": at(119), "messageId": "3EB0AAAA00000000000002"},
        {"chat": format!("+{CONTACT}"), "body": "are you open on sunday?", "at": at(120), "messageId": "3EB0AAAA00000000000001"},
        {"chat": CONTACT, "body": "see you then", "at": at(118), "messageId": "3EB0AAAA00000000000003"},
    ]});
    let (status, set) = post(p, "/sandbox/history", past).await;
    assert_eq!(status, 200, "{set}");
    assert_eq!(
        set,
        json!({"phone": PAST_PHONE, "messages": 5, "labels": 0})
    );

    // The session keeps a hosted inbox before its phone links it.
    let (status, body) = post(
        p,
        "/start?clientId=hs",
        json!({"webhookUrl": rx.url, "webhookToken": HOOK_TOKEN}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    eventually(15, "a QR code", || async {
        let (_, body) = get(p, "/qr?clientId=hs").await;
        (body["status"] == "qr").then_some(())
    })
    .await;
    org(p, "hs").await;
    let (status, linked) = post(
        p,
        "/sandbox/link",
        json!({"phone": PAST_PHONE, "clientId": "hs", "name": "Past Phone"}),
    )
    .await;
    assert_eq!(status, 200, "{linked}");
    let my_lid = linked["lid"].as_str().expect("lid");
    let room = format!("hs-{my_lid}-{lid}");

    let messages = stored(p, "hs", &room, 3).await;
    let seen: Vec<(&str, bool, &str)> = messages
        .iter()
        .map(|m| {
            (
                m["messageId"].as_str().unwrap_or_default(),
                m["fromMe"].as_bool().unwrap_or_default(),
                m["body"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("3EB0AAAA00000000000001", false, "are you open on sunday?"),
            ("3EB0AAAA00000000000002", true, "yes, from ten"),
            ("3EB0AAAA00000000000003", false, "see you then"),
        ],
        "{messages:?}"
    );
    assert!(
        messages.iter().all(|m| m["messageType"] == "chat"),
        "{messages:?}"
    );
    let all = rooms(p, "hs").await;
    let r = all
        .iter()
        .find(|r| r["chatRoomId"] == room.as_str())
        .expect("the room");
    assert_eq!(r["lastMessage"], "see you then", "{r}");
    assert_eq!(r["unreadCount"], 0, "history is not unread: {r}");
    // Rooms are named after the names the contacts gave themselves, also
    // one that holds only the phone's own messages.
    let written_to_room = format!("hs-{my_lid}-{}", written_to["lid"].as_str().expect("lid"));
    let sent = stored(p, "hs", &written_to_room, 2).await;
    // A file of the past is stored with what its message says of it, without
    // its bytes.
    let invoice = &sent[1];
    assert_eq!(invoice["messageId"], "3EB0AAAA00000000000010", "{sent:?}");
    assert_eq!(invoice["messageType"], "document", "{invoice}");
    assert_eq!(invoice["body"], "the invoice", "{invoice}");
    assert_eq!(invoice["media"]["mimeType"], "application/pdf", "{invoice}");
    assert_eq!(invoice["media"]["fileName"], "invoice.pdf", "{invoice}");
    assert_eq!(invoice["media"]["fileSize"], 18, "{invoice}");
    assert!(
        invoice["downloadUrl"]
            .as_str()
            .unwrap_or_default()
            .is_empty(),
        "history keeps no file: {invoice}"
    );
    let names = eventually(30, "the rooms named after their contacts", || async {
        let all = rooms(p, "hs").await;
        let name = |id: &str| {
            all.iter()
                .find(|r| r["chatRoomId"] == id)
                .map(|r| r["name"].as_str().unwrap_or_default().to_string())
        };
        let names = (name(&room)?, name(&written_to_room)?);
        (names.1 == "Bea Lopez").then_some(names)
    })
    .await;
    assert_eq!(names, ("Carla".to_string(), "Bea Lopez".to_string()));

    // What comes live is delivered, and nothing of the past before it.
    let live = text(p, "hs", "one more question").await;
    let (event, before) = until_message(&mut rx, &live).await;
    assert_eq!(event.json()["body"], "one more question");
    let earlier: Vec<Value> = before.iter().map(|r| r.json()).collect();
    assert!(
        earlier.iter().all(|e| !e["messageId"]
            .as_str()
            .unwrap_or_default()
            .starts_with("3EB0AAAA")),
        "history reached the webhook: {earlier:?}"
    );
    stored(p, "hs", &room, 4).await;

    // Its next owner connects without a new link: the past is not imported
    // again, and what comes next follows it.
    if shape == Shape::Cluster {
        d.move_session("hs").await;
        let p = &d.api;
        let after = text(p, "hs", "after the move").await;
        until_message(&mut rx, &after).await;
        let messages = stored(p, "hs", &room, 5).await;
        let ids: Vec<&str> = messages
            .iter()
            .map(|m| m["messageId"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(
            ids,
            [
                "3EB0AAAA00000000000001",
                "3EB0AAAA00000000000002",
                "3EB0AAAA00000000000003",
                live.as_str(),
                after.as_str(),
            ]
        );
    }
}
