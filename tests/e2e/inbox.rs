//! The hosted inbox read routes end to end through `parley serve` on the sandbox:
//! history is seeded with the worker's `History` writer against the server's own
//! database and media directory, then read back over HTTP (route shapes, the
//! 200-message cap and order, media links and library paging, session-secret
//! isolation, orgId checks, the unread reset), and the history rules of
//! `/mark-read`, `/mark-unread` and `/delete-message`.
use std::sync::Arc;

use chrono::{Duration, TimeZone, Utc};
use parley_contract::event::{Envelope, Media};
use parley_contract::spool::FileBody;
use parley_model::media::MediaInfo;
use parley_shared::db::Db;
use parley_shared::media::fs::FsMediaStore;
use parley_worker::history::{FileData, History, MessageFile};
use serde_json::{Value, json};

use crate::sends::support::{contact, linked, outbox, started};
use crate::support::*;

const RECEIVER: &str = "https://inbox.example/hook";
const PHONE: &str = "4917600000201";
const OTHER_PHONE: &str = "4917600000202";
const SHOP_SECRET: &str = "shop-secret-0123456789";
const OTHER_SECRET: &str = "other-secret-0123456789";

/// The server's own database and media store, opened by the test.
async fn history_of(p: &Parley) -> (Db, Arc<History>) {
    let data = p.dir.join("parley-data");
    let db = Db::connect(&format!(
        "sqlite://{}",
        data.join("parley.sqlite").display()
    ))
    .await
    .expect("open the server's database");
    let store = Arc::new(FsMediaStore::new(data.join("media"), &p.base));
    let history = History::new(db.clone(), store, Some(RECEIVER.into()));
    (db, history)
}

fn event(client: &str, room: &str, my_lid: &str, lid: &str, id: &str, second: i64) -> Envelope {
    Envelope {
        event: "message.received".into(),
        kind: "text".into(),
        client_id: client.into(),
        org_id: "org1".into(),
        timestamp: (Utc.with_ymd_and_hms(2026, 1, 2, 3, 0, 0).unwrap() + Duration::seconds(second))
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        chat_room_id: room.into(),
        my_lid: my_lid.into(),
        client_lid: lid.into(),
        remote_jid: format!("{lid}@lid"),
        remote_name: "Contact".into(),
        remote_phone: PHONE.into(),
        push_name: "Contact".into(),
        message_id: id.into(),
        body: format!("message {second}"),
        ..Default::default()
    }
}

fn image(mut e: Envelope, name: &str) -> Envelope {
    e.kind = "image".into();
    e.body = format!("caption {name}");
    e.media = Some(Media {
        media_type: "image".into(),
        info: MediaInfo {
            mime_type: "image/png".into(),
            file_name: name.into(),
            caption: format!("caption {name}"),
            ptt: false,
            view_once: false,
        },
        ..Default::default()
    });
    e
}

async fn get_as(p: &Parley, token: &str, path: &str) -> (u16, Value) {
    json(
        client()
            .get(p.url(path))
            .bearer_auth(token)
            .send()
            .await
            .unwrap(),
    )
    .await
}

async fn post_as(p: &Parley, token: &str, path: &str) -> (u16, Value) {
    json(
        client()
            .post(p.url(path))
            .bearer_auth(token)
            .send()
            .await
            .unwrap(),
    )
    .await
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    k.sort_unstable();
    k
}

#[tokio::test]
async fn hosted_inbox_routes_read_what_history_stored() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_with(dir.path(), &[("PARLEY_HOSTED_RECEIVER_URL", RECEIVER)]).await;
    linked(&p, "shop").await;
    started(&p, "other").await;
    let lid = contact(&p, PHONE).await;
    let stranger = contact(&p, OTHER_PHONE).await;
    for (id, secret) in [("shop", SHOP_SECRET), ("other", OTHER_SECRET)] {
        let (status, body) = post(
            &p,
            "/set-webhook",
            json!({"clientId": id, "webhookUrl": RECEIVER}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let (status, body) =
            post(&p, "/set-org-id", json!({"clientId": id, "orgId": "org1"})).await;
        assert_eq!(status, 200, "{body}");
        let (status, body) = post(
            &p,
            "/set-api-secret",
            json!({"clientId": id, "secret": secret}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
    }

    let (db, history) = history_of(&p).await;
    let my_lid = db.session("shop").await.unwrap().expect("shop").lid;
    assert!(!my_lid.is_empty());
    let room = format!("shop-{my_lid}-{lid}");
    assert!(history.enabled_for("org1", RECEIVER));

    // 250 inbound texts, recorded concurrently (the writer batches them), then a
    // duplicate delivery of the first, and three images.
    let events: Vec<Envelope> = (0..250)
        .map(|i| event("shop", &room, &my_lid, &lid, &format!("3EB0T{i:04}"), i))
        .collect();
    let results = futures::future::join_all(events.iter().map(|e| history.record(e, None))).await;
    assert!(results.iter().all(|r| r.as_ref().is_ok_and(|r| r.new)));
    assert!(!history.record(&events[0], None).await.unwrap().new);
    let mut images = Vec::new();
    for (i, name) in ["a.png", "b.png", "c.png"].into_iter().enumerate() {
        let bytes = format!("\u{89}PNG image {name}").into_bytes();
        let e = image(
            event(
                "shop",
                &room,
                &my_lid,
                &lid,
                &format!("3EB0I{i}"),
                300 + i as i64,
            ),
            name,
        );
        let media = MessageFile {
            data: FileData::InHand(FileBody::from_bytes(bytes.clone())),
            mime_type: "image/png".into(),
            file_name: name.into(),
        };
        let rec = history.record(&e, Some(media)).await.unwrap();
        assert!(rec.new);
        images.push((e.message_id.clone(), rec, bytes));
    }
    // Another session's room.
    let other_lid = db.session("other").await.unwrap().expect("other").lid;
    let other_room = format!("other-{other_lid}-{lid}");
    history
        .record(
            &event("other", &other_room, &other_lid, &lid, "3EB0OTHER", 1),
            None,
        )
        .await
        .unwrap();

    // Rooms.
    let (status, body) = get(&p, "/chatrooms?clientId=shop").await;
    assert_eq!(status, 200, "{body}");
    let rooms = body["chatRooms"].as_array().unwrap();
    assert_eq!(rooms.len(), 1);
    let r = &rooms[0];
    assert_eq!(
        keys(r),
        [
            "avatarUrl",
            "chatRoomId",
            "clientId",
            "clientLid",
            "isGroup",
            "lastMessage",
            "lastMessageAt",
            "lastMessageFromMe",
            "myLid",
            "name",
            "remoteJid",
            "unreadCount"
        ]
    );
    assert_eq!(r["chatRoomId"], room.as_str());
    assert_eq!(
        (r["clientLid"].as_str(), r["myLid"].as_str()),
        (Some(lid.as_str()), Some(my_lid.as_str()))
    );
    assert_eq!(r["remoteJid"], format!("{lid}@lid"));
    assert_eq!(r["unreadCount"], 253);
    assert_eq!(r["lastMessage"], "caption c.png");
    assert_eq!(r["lastMessageAt"], "2026-01-02T03:05:02Z");
    assert_eq!(r["isGroup"], false);

    // The last 200 messages, oldest first.
    let (status, body) = get(&p, &format!("/chatrooms/{room}/messages")).await;
    assert_eq!(status, 200, "{body}");
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 200);
    assert_eq!(messages[0]["messageId"], "3EB0T0053");
    assert_eq!(messages[199]["messageId"], "3EB0I2");
    let sent: Vec<&str> = messages
        .iter()
        .map(|m| m["sentAt"].as_str().unwrap())
        .collect();
    assert!(sent.windows(2).all(|w| w[0] <= w[1]), "oldest first");
    let text = &messages[0];
    assert_eq!(
        keys(text),
        [
            "body",
            "chatRoomId",
            "clientId",
            "deleted",
            "extras",
            "fromAi",
            "fromMe",
            "messageId",
            "messageType",
            "pushname",
            "sentAt"
        ]
    );
    assert_eq!(text["messageType"], "chat");
    assert_eq!(text["pushname"], "Contact");
    let img = &messages[199];
    assert_eq!(img["messageType"], "image");
    assert_eq!(img["media"]["mimeType"], "image/png");
    assert_eq!(img["media"]["fileName"], "c.png");
    assert_eq!(img["downloadUrl"], images[2].1.download_url.as_str());

    // Media links: the permanent link serves the original bytes.
    for (message_id, rec, bytes) in &images {
        let (status, body) = get(
            &p,
            &format!("/chatrooms/{room}/messages/{message_id}/media-url"),
        )
        .await;
        assert_eq!((status, &body["ok"]), (200, &json!(true)), "{body}");
        assert_eq!(body["url"], rec.download_url.as_str());
        let res = client().get(&rec.download_url).send().await.unwrap();
        assert_eq!(res.status(), 200);
        assert_eq!(res.bytes().await.unwrap().to_vec(), *bytes);
    }
    for missing in ["3EB0T0100", "3EB0NOPE"] {
        let (status, body) = get(
            &p,
            &format!("/chatrooms/{room}/messages/{missing}/media-url"),
        )
        .await;
        assert_eq!(status, 404, "{body}");
        assert!(body["error"].is_string());
    }

    // The media library, paged, newest first.
    let (status, body) = get(&p, "/media-files?clientId=shop&orgId=org1&page=1&limit=2").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["ok"], true);
    assert_eq!(
        body["pagination"],
        json!({"page": 1, "limit": 2, "total": 3})
    );
    let files = body["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(
        keys(&files[0]),
        [
            "caption",
            "clientId",
            "createdAt",
            "fileName",
            "fileSize",
            "mediaType",
            "messageId",
            "mimeType"
        ]
    );
    assert_eq!(files[0]["fileName"], "c.png");
    assert_eq!(files[0]["caption"], "caption c.png");
    assert_eq!(files[0]["fileSize"], images[2].2.len());
    assert_eq!(
        files[0]["messageId"],
        images[2].1.media_file_id.clone().unwrap().as_str()
    );
    let (_, body) = get(&p, "/media-files?clientId=shop&orgId=org1&page=2&limit=2").await;
    assert_eq!(body["files"].as_array().unwrap().len(), 1);
    assert_eq!(body["files"][0]["fileName"], "a.png");
    let (_, body) = get(&p, "/media-files?clientId=shop&orgId=org1").await;
    assert_eq!(
        body["pagination"],
        json!({"page": 1, "limit": 50, "total": 3})
    );
    let (_, body) = get(&p, "/media-files?clientId=shop&orgId=org1&limit=1000").await;
    assert_eq!(body["pagination"]["limit"], 200);
    for bad in [
        "/media-files?clientId=shop&orgId=org1&page=0",
        "/media-files?clientId=shop&orgId=org1&page=x",
        "/media-files?clientId=shop&orgId=org1&limit=0",
        "/media-files?clientId=shop&orgId=org1&limit=-3",
        "/media-files?clientId=shop",
        "/media-files?orgId=org1",
        "/media-files?clientId=sh-op&orgId=org1",
        "/chatrooms",
        "/media-files/not-a-uuid/url",
    ] {
        let (status, body) = get(&p, bad).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(body["error"].is_string(), "{bad}");
    }
    let library_id = files[0]["messageId"].as_str().unwrap().to_string();
    let (status, body) = get(&p, &format!("/media-files/{library_id}/url")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({"ok": true, "url": images[2].1.download_url}));
    let (status, _) = get(&p, "/media-files/00000000-0000-4000-8000-000000000000/url").await;
    assert_eq!(status, 404);

    // orgId that is not the session's: 404, never someone else's data.
    for path in [
        "/chatrooms?clientId=shop&orgId=org2".to_string(),
        format!("/chatrooms/{room}/messages?orgId=org2"),
        "/media-files?clientId=shop&orgId=org2".to_string(),
        format!("/media-files/{library_id}/url?orgId=org2"),
        "/chatrooms?clientId=nosuchsession".to_string(),
        format!("/chatrooms/shop-{my_lid}-999/messages"),
        "/chatrooms/nodash/messages".to_string(),
    ] {
        let (status, body) = get(&p, &path).await;
        assert_eq!(status, 404, "{path}: {body}");
        assert!(body["error"].is_string());
    }

    // Session secrets reach their own session only.
    let (status, body) = get_as(&p, SHOP_SECRET, "/chatrooms?clientId=shop").await;
    assert_eq!(
        (status, body["chatRooms"].as_array().map(Vec::len)),
        (200, Some(1))
    );
    let (status, _) = get_as(&p, SHOP_SECRET, &format!("/chatrooms/{room}/messages")).await;
    assert_eq!(status, 200);
    let (status, body) = get_as(
        &p,
        SHOP_SECRET,
        &format!("/media-files/{library_id}/url?clientId=shop"),
    )
    .await;
    assert_eq!(
        (status, &body["url"]),
        (200, &json!(images[2].1.download_url))
    );
    let (status, body) = get_as(&p, OTHER_SECRET, "/chatrooms?clientId=other").await;
    assert_eq!(status, 200);
    assert_eq!(body["chatRooms"][0]["chatRoomId"], other_room.as_str());
    for path in [
        "/chatrooms?clientId=shop".to_string(),
        format!("/chatrooms/{room}/messages"),
        format!("/chatrooms/{room}/messages/3EB0I0/media-url"),
        "/media-files?clientId=shop&orgId=org1".to_string(),
        format!("/media-files/{library_id}/url"),
    ] {
        let (status, body) = get_as(&p, OTHER_SECRET, &path).await;
        assert_eq!(
            (status, body),
            (401, json!({"error": "unauthorized"})),
            "{path}"
        );
    }
    let (status, _) = post_as(&p, OTHER_SECRET, &format!("/chatrooms/{room}/read")).await;
    assert_eq!(status, 401);
    let (status, body) = get_as(
        &p,
        OTHER_SECRET,
        &format!("/media-files/{library_id}/url?clientId=other"),
    )
    .await;
    assert_eq!(status, 404, "another session's file is not found: {body}");

    // Read reset: no receipt goes out.
    let before = outbox(&p, "shop", "").await.len();
    let (status, body) = post_as(&p, SHOP_SECRET, &format!("/chatrooms/{room}/read")).await;
    assert_eq!((status, body), (200, json!({"status": "ok"})));
    let (_, body) = get(&p, "/chatrooms?clientId=shop").await;
    assert_eq!(body["chatRooms"][0]["unreadCount"], 0);
    assert_eq!(outbox(&p, "shop", "").await.len(), before);
    let (status, _) = post_as(&p, TOKEN, &format!("/chatrooms/shop-{my_lid}-999/read")).await;
    assert_eq!(status, 404);

    // /mark-read clears the badge once the receipts went out.
    history
        .record(&event("shop", &room, &my_lid, &lid, "3EB0NEW", 400), None)
        .await
        .unwrap();
    let (_, body) = get(&p, "/chatrooms?clientId=shop").await;
    assert_eq!(body["chatRooms"][0]["unreadCount"], 1);
    let (status, body) = post(
        &p,
        "/mark-read",
        json!({"clientId": "shop", "to": lid, "messageIds": ["3EB0NEW"]}),
    )
    .await;
    assert_eq!((status, body), (200, json!({"ok": true, "count": 1})));
    let (_, body) = get(&p, "/chatrooms?clientId=shop").await;
    assert_eq!(body["chatRooms"][0]["unreadCount"], 0);

    // /mark-unread needs a stored message for the chat.
    let (status, body) = post(
        &p,
        "/mark-unread",
        json!({"clientId": "shop", "to": stranger}),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = post(&p, "/mark-unread", json!({"clientId": "shop", "to": lid})).await;
    assert_eq!((status, body), (200, json!({"ok": true})));
    let (status, _) = post(
        &p,
        "/mark-unread",
        json!({"clientId": "shop", "to": format!("+{PHONE}")}),
    )
    .await;
    assert_eq!(status, 200, "the room is found by the contact's phone too");

    // /delete-message mode me: only messages in history; the row is marked deleted.
    let (status, body) = post(
        &p,
        "/delete-message",
        json!({"clientId": "shop", "to": lid, "messageId": "3EB0NOPE", "fromMe": false,
               "mode": "me", "chatRoomId": room}),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = post(
        &p,
        "/delete-message",
        json!({"clientId": "shop", "to": lid, "messageId": "3EB0NEW", "fromMe": false, "mode": "me"}),
    )
    .await;
    assert_eq!((status, body), (200, json!({"status": true})));
    let (_, body) = get(&p, &format!("/chatrooms/{room}/messages")).await;
    let last = body["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (last["messageId"].as_str(), &last["deleted"]),
        (Some("3EB0NEW"), &json!(true))
    );

    // The routes are in the inventory.
    let (_, config) = get(&p, "/config").await;
    let routes: Vec<&str> = config["routes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for route in [
        "GET /chatrooms",
        "GET /chatrooms/{chatRoomId}/messages",
        "GET /chatrooms/{chatRoomId}/messages/{messageId}/media-url",
        "POST /chatrooms/{chatRoomId}/read",
        "GET /media-files",
        "GET /media-files/{messageId}/url",
    ] {
        assert!(routes.contains(&route), "{route} missing from {routes:?}");
    }
}
