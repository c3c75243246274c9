//! Hosted-inbox avatars: a room gets its contact's picture, mirrored once per
//! picture version, as `avatarUrl`, and later events carry it;
//! `/refresh-avatars` walks the rooms at about 7 lookups per second and counts
//! what it did. On `parley serve` (SQLite, files) and on the cluster
//! (PostgreSQL, S3).
use std::time::{Duration, Instant};

use parley_tests::receiver::Receiver;
use serde_json::{Value, json};

use super::history::{org, rooms, serve_hosted};
use super::support::*;
use crate::contacts::{avatar, b64, fetch};
use crate::support::*;

const HIDDEN: &str = "4917600000361";
const NO_PICTURE: &str = "4917600000362";
const DANA: &str = "4917600000363";
/// Time between two network lookups of `/refresh-avatars` (about 7 per second),
/// less a little for timer granularity.
const PACE_AT_LEAST: Duration = Duration::from_millis(140);

async fn register(p: &Parley, phone: &str, avatar: &str) -> String {
    let (status, body) = post(
        p,
        "/sandbox/contacts",
        json!({"phone": phone, "name": format!("Contact {phone}"), "avatar": avatar}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["lid"].as_str().expect("lid").to_string()
}

async fn refresh(p: &Parley, id: &str, force: bool) -> (Value, Duration) {
    let started = Instant::now();
    let (status, body) = post(
        p,
        "/refresh-avatars",
        json!({"clientId": id, "force": force}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    (body, started.elapsed())
}

fn counts(rooms: u64, updated: u64, skipped: u64, no_photo: u64) -> Value {
    json!({"rooms": rooms, "updated": updated, "skipped": skipped, "noPhoto": no_photo, "failed": 0})
}

/// The room's `avatarUrl` once it is not `previous`.
async fn avatar_of(p: &Parley, id: &str, room: &str, previous: &str) -> String {
    eventually(15, "the room's avatar", || async {
        rooms(p, id)
            .await
            .iter()
            .find(|r| r["chatRoomId"] == room)
            .and_then(|r| r["avatarUrl"].as_str().map(str::to_string))
            .filter(|u| u != previous)
    })
    .await
}

async fn room_avatars(p: &Parley, id: &str) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = rooms(p, id)
        .await
        .iter()
        .map(|r| {
            (
                r["chatRoomId"].as_str().unwrap().to_string(),
                r["avatarUrl"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    all.sort();
    all
}

#[tokio::test]
async fn rooms_and_events_carry_mirrored_avatars_and_refreshes_count_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut rx = Receiver::start().await;
    let p = serve_hosted(dir.path(), &rx.url, &[]).await;
    let my_lid = hooked(&p, "av", &rx.url, json!({})).await;
    org(&p, "av").await;
    let first = avatar("first");
    let lid = register(&p, CONTACT, &b64(&first)).await;
    let room = format!("av-{my_lid}-{lid}");

    // First sight: the event goes out at once; the lookup runs after it.
    text(&p, "av", "hello").await;
    rx.next(WAIT).await;
    let url = avatar_of(&p, "av", &room, "").await;
    assert_eq!(fetch(&url).await, first, "the mirrored bytes");
    let id = text(&p, "av", "again").await;
    let (e, _) = until_message(&mut rx, &id).await;
    assert_eq!(e.json()["avatarUrl"], url.as_str(), "{}", e.json());

    // Contacts without a visible picture: rooms with an empty avatar.
    let mut others = Vec::new();
    for (phone, kind) in [(HIDDEN, "hidden"), (NO_PICTURE, "none")] {
        let other = register(&p, phone, kind).await;
        let (status, sent) = post(
            &p,
            "/sandbox/messages",
            json!({"clientId": "av", "from": phone, "type": "text", "body": "hi"}),
        )
        .await;
        assert_eq!(status, 200, "{sent}");
        let (e, _) = until_message(&mut rx, sent["messageId"].as_str().unwrap()).await;
        assert_eq!(e.json()["avatarUrl"], "", "{}", e.json());
        others.push(format!("av-{my_lid}-{other}"));
    }

    // Without force, a room with a picture is skipped; the others are asked.
    let (body, _) = refresh(&p, "av", false).await;
    assert_eq!(body, counts(3, 0, 1, 2));

    // The picture changes: a forced refresh copies the new version once.
    let second = avatar("second");
    register(&p, CONTACT, &b64(&second)).await;
    let (body, took) = refresh(&p, "av", true).await;
    assert_eq!(body, counts(3, 1, 0, 2));
    assert!(
        took >= PACE_AT_LEAST * 2,
        "3 network lookups are paced: {took:?}"
    );
    let url2 = avatar_of(&p, "av", &room, &url).await;
    assert_eq!(fetch(&url2).await, second);
    assert_eq!(fetch(&url).await, first, "older copies stay");
    let (body, _) = refresh(&p, "av", true).await;
    assert_eq!(body, counts(3, 0, 1, 2), "unchanged: not copied again");
    let mut expected = vec![(room.clone(), url2.clone())];
    expected.extend(others.iter().map(|r| (r.clone(), String::new())));
    expected.sort();
    assert_eq!(room_avatars(&p, "av").await, expected);
    let id = text(&p, "av", "after the change").await;
    let (e, _) = until_message(&mut rx, &id).await;
    assert_eq!(e.json()["avatarUrl"], url2.as_str());

    // Hidden now: the room's avatar is emptied.
    register(&p, CONTACT, "hidden").await;
    let (body, _) = refresh(&p, "av", true).await;
    assert_eq!(body, counts(3, 0, 0, 3));
    assert!(
        room_avatars(&p, "av")
            .await
            .iter()
            .all(|(_, u)| u.is_empty())
    );

    // A room first seen through an API send gets its picture too.
    let dana = avatar("dana");
    let dana_lid = register(&p, DANA, &b64(&dana)).await;
    let (status, sent) = post(
        &p,
        "/send-message",
        json!({"clientId": "av", "to": dana_lid, "body": "welcome"}),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    let dana_room = format!("av-{my_lid}-{dana_lid}");
    assert_eq!(
        fetch(&avatar_of(&p, "av", &dana_room, "").await).await,
        dana
    );

    // Bad input.
    refused(
        &p,
        "/refresh-avatars",
        [
            (json!({"clientId": "av", "force": "yes"}), 400),
            (json!({"force": true}), 400),
            (json!({"clientId": "a-b"}), 400),
            (json!({"clientId": "nobody"}), 404),
        ],
    )
    .await;
}

#[tokio::test]
async fn avatars_are_mirrored_to_the_bucket_in_the_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let env = services::ClusterEnv::new().await;
    let mut rx = Receiver::start().await;
    let (api, _worker) = api_and_worker(
        &env,
        dir.path(),
        &[
            ("PARLEY_ALLOW_HTTP_WEBHOOKS", "true"),
            ("PARLEY_ALLOW_PRIVATE_EGRESS", "true"),
            ("PARLEY_HOSTED_RECEIVER_URL", &rx.url),
        ],
    )
    .await;
    let my_lid = hooked(&api, "avc", &rx.url, json!({})).await;
    org(&api, "avc").await;
    let data = avatar("cluster");
    let lid = register(&api, CONTACT, &b64(&data)).await;
    let room = format!("avc-{my_lid}-{lid}");

    text(&api, "avc", "hello").await;
    rx.next(WAIT).await;
    let url = avatar_of(&api, "avc", &room, "").await;
    assert!(url.contains(&env.bucket), "{url}");
    assert_eq!(fetch(&url).await, data);
    let id = text(&api, "avc", "again").await;
    let (e, _) = until_message(&mut rx, &id).await;
    assert_eq!(e.json()["avatarUrl"], url.as_str());

    let (body, _) = refresh(&api, "avc", true).await;
    assert_eq!(body, counts(1, 0, 1, 0));
    let second = avatar("cluster second");
    register(&api, CONTACT, &b64(&second)).await;
    let (body, _) = refresh(&api, "avc", true).await;
    assert_eq!(body, counts(1, 1, 0, 0));
    let url2 = avatar_of(&api, "avc", &room, &url).await;
    assert!(url2.contains(&env.bucket), "{url2}");
    assert_eq!(fetch(&url2).await, second);
}
