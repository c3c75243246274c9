//! Webhook events end to end through `parley serve` on the sandbox network and a
//! real local receiver: every type inbound and `fromMe`, headers, signature and
//! envelope, the group and broadcast filters. Delivery rules are in
//! `events/delivery.rs`, poll votes in `events/polls.rs`, room avatars in
//! `events/avatars.rs`.
mod avatars;
mod calls;
mod delivery;
mod group_changes;
mod group_settings;
pub(crate) mod history;
mod history_sync;
mod hosted_cluster;
mod labels;
mod lease_cut;
mod lease_reset;
mod live_feed;
mod log;
mod log_cluster;
mod own_presence;
pub(crate) mod ownership;
mod polls;
mod presence;
mod receipts;
mod selection;
mod status_posts;
mod statuses;
mod stream_outage;
mod subjects;
pub mod support;
mod typing;
mod view_once;

use base64::Engine;
use parley_tests::receiver::Receiver;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use self::support::*;
use crate::support::*;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[tokio::test]
async fn every_inbound_type_arrives_signed_with_its_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_events(dir.path()).await;
    let mut rx = Receiver::start().await;
    let my_lid = hooked(&p, "ev1", &rx.url, json!({})).await;
    let lid = contact(&p).await;
    let room = format!("ev1-{my_lid}-{lid}");
    let image = b"\x89PNG\r\n\x1a\n fake image bytes".to_vec();

    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"type": "text", "body": "Hello", "mentions": [OWN_PHONE], "isForwarded": true}),
            "text",
        ),
        (
            json!({"type": "image", "data": b64(&image), "mimeType": "image/png", "caption": "look"}),
            "image",
        ),
        (
            json!({"type": "video", "data": b64(b"video"), "mimeType": "video/mp4"}),
            "video",
        ),
        (
            json!({"type": "audio", "data": b64(b"voice"), "mimeType": "audio/ogg", "ptt": true}),
            "audio",
        ),
        (
            json!({"type": "document", "data": b64(b"%PDF"), "mimeType": "application/pdf", "fileName": "a.pdf"}),
            "document",
        ),
        (
            json!({"type": "sticker", "data": b64(b"RIFF"), "mimeType": "image/webp"}),
            "sticker",
        ),
        (
            json!({"type": "location", "latitude": 52.52, "longitude": 13.405, "name": "Berlin", "live": false}),
            "location",
        ),
        (
            json!({"type": "contact", "displayName": "Bob", "vcard": "BEGIN:VCARD\nEND:VCARD"}),
            "contact",
        ),
        (
            json!({"type": "poll_creation", "pollName": "Lunch?", "pollOptions": ["Pizza", "Soup"], "selectableCount": 1}),
            "poll_creation",
        ),
        (
            json!({"type": "interactive_reply", "targetId": "3EB0BUTTONS", "buttonId": "yes", "displayText": "Yes"}),
            "interactive_reply",
        ),
        (
            json!({"type": "reaction", "targetId": "3EB0TARGET", "emoji": "👍"}),
            "reaction",
        ),
        (
            json!({"type": "edit", "targetId": "3EB0TARGET", "body": "fixed"}),
            "edit",
        ),
        (
            json!({"type": "revoke", "targetId": "3EB0TARGET"}),
            "revoke",
        ),
        (
            json!({"type": "text", "body": "a reply", "quotedMessageId": "3EB0QUOTED"}),
            "text",
        ),
    ];
    for (message, kind) in cases {
        let id = inject(&p, "ev1", message.clone()).await;
        let req = rx.next(WAIT).await;
        assert_headers(&req, HOOK_TOKEN);
        let e = req.json();
        assert_eq!(e["type"], kind, "{e}");
        assert_eq!(e["event"], "message.received");
        assert_eq!(e["messageId"], id.as_str());
        assert_eq!(
            req.header("webhook-id"),
            Some(format!("msg_ev1_{id}").as_str())
        );
        assert_eq!(
            (e["clientId"].as_str(), e["orgId"].as_str()),
            (Some("ev1"), Some(""))
        );
        assert_eq!(e["chatRoomId"], room.as_str());
        assert_eq!(
            (e["myLid"].as_str(), e["clientLid"].as_str()),
            (Some(my_lid.as_str()), Some(lid.as_str()))
        );
        assert_eq!(e["remoteJid"], format!("{lid}@lid").as_str());
        assert_eq!(
            (e["remotePhone"].as_str(), e["pushName"].as_str()),
            (Some(CONTACT), Some("Carla"))
        );
        assert_eq!(
            (e["fromMe"].as_bool(), e["isGroup"].as_bool()),
            (Some(false), Some(false))
        );
        assert!(
            e["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')),
            "{e}"
        );
        assert!(e.get("group").is_none() && e.get("meta").is_none(), "{e}");
        check_type_object(&e, &message);
    }
}

/// The per-type object of event `e` matches the injected `m`.
fn check_type_object(e: &Value, m: &Value) {
    match e["type"].as_str().unwrap() {
        "text" => {
            assert_eq!(e["body"], m["body"]);
            if m.get("mentions").is_some() {
                assert_eq!(e["mentions"], m["mentions"]);
                assert_eq!(e["isForwarded"], true);
            }
            if let Some(quoted) = m.get("quotedMessageId") {
                assert_eq!(e["quoted"]["messageId"], *quoted, "{e}");
            }
        }
        "image" | "video" | "audio" | "document" | "sticker" => {
            let media = &e["media"];
            assert_eq!(media["mimeType"], m["mimeType"]);
            assert_eq!(media["mediaType"], e["type"]);
            let data = base64::engine::general_purpose::STANDARD
                .decode(m["data"].as_str().unwrap())
                .unwrap();
            assert_eq!(media["fileSize"], data.len());
            let download = &media["download"];
            assert!(
                download["directPath"]
                    .as_str()
                    .is_some_and(|p| !p.is_empty()),
                "{e}"
            );
            assert!(
                download["mediaKey"].as_str().is_some_and(|k| !k.is_empty()),
                "{e}"
            );
            assert_eq!(download["fileSha256"], b64(&Sha256::digest(&data)));
            assert!(
                !e.to_string().contains(m["data"].as_str().unwrap()),
                "the bytes are never in the event"
            );
            assert_eq!(media["downloadUrl"], "", "no hosted inbox: no stored link");
            if m.get("ptt").is_some() {
                assert_eq!(media["ptt"], true);
            }
            if let Some(caption) = m.get("caption") {
                assert_eq!((&media["caption"], &e["body"]), (caption, caption));
            }
            if let Some(name) = m.get("fileName") {
                assert_eq!(media["fileName"], *name);
            }
        }
        "location" => {
            let l = &e["location"];
            assert_eq!(
                (&l["latitude"], &l["longitude"]),
                (&m["latitude"], &m["longitude"])
            );
            assert_eq!((&l["name"], &l["live"]), (&m["name"], &json!(false)));
        }
        "contact" => {
            assert_eq!(e["contact"]["displayName"], m["displayName"]);
            assert_eq!(e["contact"]["vcard"], m["vcard"]);
        }
        "poll_creation" => {
            assert_eq!(e["poll"]["name"], m["pollName"]);
            assert_eq!(e["poll"]["options"], m["pollOptions"]);
            assert_eq!(e["poll"]["selectableCount"], 1);
        }
        "interactive_reply" => {
            let i = &e["interactive"];
            assert_eq!(
                (&i["targetId"], &i["buttonId"]),
                (&m["targetId"], &m["buttonId"])
            );
            assert_eq!(i["displayText"], m["displayText"]);
        }
        "reaction" => {
            assert_eq!(
                e["reaction"],
                json!({"targetId": m["targetId"], "emoji": m["emoji"]})
            );
        }
        "edit" => {
            assert_eq!(
                e["edit"],
                json!({"targetId": m["targetId"], "body": m["body"]})
            );
        }
        "revoke" => assert_eq!(e["revoke"], json!({"targetId": m["targetId"]})),
        other => panic!("unexpected type {other}"),
    }
}

#[tokio::test]
async fn from_me_events_come_from_the_phone_and_from_api_sends_with_meta() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_events(dir.path()).await;
    let mut rx = Receiver::start().await;
    let my_lid = hooked(&p, "me1", &rx.url, json!({})).await;
    let lid = contact(&p).await;
    let room = format!("me1-{my_lid}-{lid}");

    // Written on the linked phone itself.
    let id = inject(
        &p,
        "me1",
        json!({"from": "me", "chat": CONTACT, "type": "text", "body": "from my phone"}),
    )
    .await;
    let e = rx.next(WAIT).await.json();
    assert_eq!(
        (e["messageId"].as_str(), e["fromMe"].as_bool()),
        (Some(id.as_str()), Some(true))
    );
    assert_eq!(
        (e["chatRoomId"].as_str(), e["body"].as_str()),
        (Some(room.as_str()), Some("from my phone"))
    );
    assert!(e.get("meta").is_none(), "{e}");

    // Sent through the API: the event carries the send's metaData as meta.
    let meta = json!({"fromAI": true, "userId": 7, "userName": "agent", "sender": "bot", "name": "N", "extra": [1]});
    let (status, sent) = post(
        &p,
        "/send-message",
        json!({"clientId": "me1", "to": format!("+{CONTACT}"), "body": "via API", "metaData": meta}),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    let req = rx.next(WAIT).await;
    assert_headers(&req, HOOK_TOKEN);
    let e = req.json();
    assert_eq!(e["messageId"], sent["messageId"]);
    assert_eq!(
        (e["type"].as_str(), e["fromMe"].as_bool()),
        (Some("text"), Some(true))
    );
    assert_eq!(e["chatRoomId"], room.as_str());
    assert_eq!(
        e["meta"],
        json!({"fromAI": true, "userId": 7, "userName": "agent", "sender": "bot", "name": "N", "raw": meta})
    );

    // Every kind of send produces its event: a poll, a reaction, an edit, a revoke.
    let (status, poll) = post(
        &p,
        "/send-poll-message",
        json!({"clientId": "me1", "to": format!("+{CONTACT}"), "pollName": "Q", "pollOptions": ["a", "b"]}),
    )
    .await;
    assert_eq!(status, 200, "{poll}");
    let e = rx.next(WAIT).await.json();
    assert_eq!(
        (e["type"].as_str(), &e["messageId"]),
        (Some("poll_creation"), &poll["messageId"])
    );
    assert_eq!(e["poll"]["options"], json!(["a", "b"]));
    let (status, body) = post(
        &p,
        "/send-reaction",
        json!({"clientId": "me1", "to": format!("+{CONTACT}"), "messageId": sent["messageId"], "emoji": "🔥", "targetFromMe": true}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let e = rx.next(WAIT).await.json();
    assert_eq!(e["type"], "reaction");
    assert_eq!(
        e["reaction"],
        json!({"targetId": sent["messageId"], "emoji": "🔥"})
    );
    let (status, body) = post(
        &p,
        "/edit-message",
        json!({"clientId": "me1", "to": format!("+{CONTACT}"), "messageId": sent["messageId"], "body": "via API (edited)"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let e = rx.next(WAIT).await.json();
    assert_eq!(
        e["edit"],
        json!({"targetId": sent["messageId"], "body": "via API (edited)"})
    );
    let (status, body) = post(
        &p,
        "/delete-message",
        json!({"clientId": "me1", "to": format!("+{CONTACT}"), "messageId": sent["messageId"], "fromMe": true, "mode": "everyone"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let e = rx.next(WAIT).await.json();
    assert_eq!(
        (e["type"].as_str(), e["fromMe"].as_bool()),
        (Some("revoke"), Some(true))
    );
    assert_eq!(e["revoke"], json!({"targetId": sent["messageId"]}));
    // Typing and receipts are not messages: no event.
    let (status, body) = post(
        &p,
        "/send-typing",
        json!({"clientId": "me1", "to": format!("+{CONTACT}"), "composing": true}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let marker = text(&p, "me1", "marker").await;
    let (req, before) = until_message(&mut rx, &marker).await;
    assert!(
        before.is_empty(),
        "no event between: {:?}",
        before.iter().map(|r| r.json()).collect::<Vec<_>>()
    );
    assert_eq!(req.json()["fromMe"], false);
}

#[tokio::test]
async fn groups_only_when_enabled_and_broadcasts_and_channels_never() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_events(dir.path()).await;
    let mut rx = Receiver::start().await;
    let my_lid = hooked(&p, "grp", &rx.url, json!({})).await;
    let lid = contact(&p).await;
    let group = "120363000000000001@g.us";

    for chat in [
        group,
        "status@broadcast",
        "1234@broadcast",
        "5678@newsletter",
    ] {
        inject(
            &p,
            "grp",
            json!({"type": "text", "body": "hidden", "chat": chat}),
        )
        .await;
    }
    let marker = text(&p, "grp", "direct").await;
    let (_, before) = until_message(&mut rx, &marker).await;
    assert!(before.is_empty(), "filtered events were delivered");

    let (status, body) = post(
        &p,
        "/set-enable-group-ai",
        json!({"clientId": "grp", "enabled": true}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let id = inject(
        &p,
        "grp",
        json!({"type": "text", "body": "in the group", "chat": group}),
    )
    .await;
    for chat in ["status@broadcast", "5678@newsletter"] {
        inject(
            &p,
            "grp",
            json!({"type": "text", "body": "hidden", "chat": chat}),
        )
        .await;
    }
    let marker = text(&p, "grp", "direct again").await;
    let (req, before) = until_message(&mut rx, &marker).await;
    assert_eq!(before.len(), 1, "only the group message");
    let e = before[0].json();
    assert_eq!(e["messageId"], id.as_str());
    assert_eq!(
        (e["isGroup"].as_bool(), e["remoteJid"].as_str()),
        (Some(true), Some(group))
    );
    assert_eq!(
        e["chatRoomId"],
        format!("grp-{my_lid}-120363000000000001").as_str()
    );
    assert_eq!(e["group"]["jid"], group);
    assert_eq!(e["group"]["participant"], format!("{lid}@lid").as_str());
    assert_eq!(req.json()["isGroup"], false);
}

#[tokio::test]
async fn sandbox_messages_reject_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_events(dir.path()).await;
    let rx = Receiver::start().await;
    hooked(&p, "bad", &rx.url, json!({})).await;
    for (body, status) in [
        (json!({"clientId": "bad", "from": CONTACT}), 400),
        (
            json!({"clientId": "bad", "from": CONTACT, "type": "nope"}),
            400,
        ),
        (
            json!({"clientId": "bad", "from": CONTACT, "type": "text"}),
            400,
        ),
        (json!({"clientId": "bad", "type": "text", "body": "x"}), 400),
        (
            json!({"clientId": "bad", "from": "12", "type": "text", "body": "x"}),
            400,
        ),
        (
            json!({"clientId": "bad", "from": "me", "type": "text", "body": "x"}),
            400,
        ),
        (
            json!({"clientId": "bad", "from": CONTACT, "type": "image", "data": "***", "mimeType": "image/png"}),
            400,
        ),
        (
            json!({"clientId": "bad", "from": CONTACT, "type": "image", "data": "aGk="}),
            400,
        ),
        (
            json!({"clientId": "bad", "from": CONTACT, "type": "location", "latitude": 91, "longitude": 0}),
            400,
        ),
        (
            json!({"clientId": "bad", "from": CONTACT, "type": "poll_creation", "pollName": "x", "pollOptions": ["one"]}),
            400,
        ),
        (
            json!({"clientId": "nobody", "from": CONTACT, "type": "text", "body": "x"}),
            404,
        ),
    ] {
        let (got, answer) = post(&p, "/sandbox/messages", body.clone()).await;
        assert_eq!(got, status, "{body} -> {answer}");
        assert!(
            answer["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{answer}"
        );
    }
    // A session that is not connected: 409.
    let (status, _) = post(&p, "/start?clientId=idle", json!({})).await;
    assert_eq!(status, 200);
    let (status, answer) = post(
        &p,
        "/sandbox/messages",
        json!({"clientId": "idle", "from": CONTACT, "type": "text", "body": "x"}),
    )
    .await;
    assert_eq!(status, 409, "{answer}");
}
