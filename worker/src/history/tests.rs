//! `History::record` against a real database and real media stores (files, and
//! S3 on the test server): stored bytes come back equal from `downloadUrl`, the
//! same file is stored once, duplicates and updates insert nothing.
use std::sync::Arc;

use bytes::Bytes;
use parley_contract::event::{Edit, Envelope, Media, Meta, Poll, Reaction, Revoke};
use parley_contract::spool::FileBody;
use parley_model::ids::ClientId;
use parley_model::media::MediaInfo;
use parley_shared::db::Db;
use parley_shared::media::MediaStore;
use parley_shared::media::fs::FsMediaStore;
use parley_shared::media::s3::{S3MediaStore, S3Settings};
use parley_tests::services;

use super::{FileData, History, MessageFile};

const FS_BASE: &str = "http://gateway.test:8080";

struct Fixture {
    history: Arc<History>,
    db: Db,
    store: Arc<dyn MediaStore>,
    _dir: tempfile::TempDir,
}

async fn fixture(s3: bool) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = Db::connect(&format!("sqlite://{}", dir.path().join("h.db").display()))
        .await
        .expect("open SQLite");
    db.migrate().await.expect("migrate");
    let store: Arc<dyn MediaStore> = if s3 {
        let endpoint = services::s3_endpoint();
        Arc::new(
            S3MediaStore::new(S3Settings {
                endpoint: endpoint.clone(),
                bucket: services::unique("parley-h-"),
                region: "eu-west-1".into(),
                access_key: "test".into(),
                secret_key: "test".into(),
                public_url: None,
            })
            .await
            .unwrap_or_else(|e| panic!("an S3 server is required at {endpoint}: {e}")),
        )
    } else {
        Arc::new(FsMediaStore::new(dir.path().join("media"), FS_BASE))
    };
    let history = History::new(
        db.clone(),
        Arc::clone(&store),
        Some("https://inbox.example/hook".into()),
    );
    Fixture {
        history,
        db,
        store,
        _dir: dir,
    }
}

/// A test's `clientId`.
fn cid(raw: &str) -> ClientId {
    ClientId::parse(raw).expect("a clientId")
}

fn envelope(kind: &str, message_id: &str) -> Envelope {
    Envelope {
        event: "message.received".into(),
        kind: kind.into(),
        client_id: "shop".into(),
        org_id: "org1".into(),
        timestamp: "2026-01-02T03:04:05Z".into(),
        chat_room_id: "shop-111-222".into(),
        my_lid: "111".into(),
        client_lid: "222".into(),
        remote_jid: "222@lid".into(),
        remote_name: "Ann".into(),
        push_name: "Ann".into(),
        message_id: message_id.into(),
        body: "hello".into(),
        ..Default::default()
    }
}

fn image(message_id: &str) -> Envelope {
    let mut e = envelope("image", message_id);
    e.body = "a caption".into();
    e.media = Some(Media {
        media_type: "image".into(),
        info: MediaInfo {
            mime_type: "image/png".into(),
            file_name: "pic.png".into(),
            caption: "a caption".into(),
            ptt: false,
            view_once: false,
        },
        file_size: 0,
        ..Default::default()
    });
    e
}

fn file(bytes: &'static [u8]) -> MessageFile {
    MessageFile {
        data: FileData::InHand(FileBody::from_bytes(bytes)),
        mime_type: "image/png".into(),
        file_name: "pic.png".into(),
    }
}

/// The bytes behind a permanent link: over HTTP for S3, through the store for
/// files (the gateway serves them at `/media/{key}`, shown end to end).
async fn fetch(f: &Fixture, url: &str) -> Bytes {
    match url.strip_prefix(&format!("{FS_BASE}/media/")) {
        Some(key) => f.store.get(key).await.expect("get").expect("stored").1,
        None => {
            let res = reqwest::get(url).await.expect("GET downloadUrl");
            assert!(res.status().is_success(), "{url}: {}", res.status());
            res.bytes().await.expect("body")
        }
    }
}

async fn media_is_stored_once_and_links_return_the_bytes(s3: bool) {
    let f = fixture(s3).await;
    let bytes: &'static [u8] = b"\x89PNG\r\n\x1a\nnot really an image";
    let first = f
        .history
        .record(&image("3EB0IMG1"), Some(file(bytes)))
        .await
        .expect("record");
    assert!(first.new);
    assert!(!first.download_url.is_empty());
    assert_eq!(
        fetch(&f, &first.download_url).await,
        Bytes::from_static(bytes)
    );
    assert!(
        first.download_url.ends_with(".png"),
        "{}",
        first.download_url
    );

    // A duplicate delivery: no new row, same link, no second library record.
    let again = f
        .history
        .record(&image("3EB0IMG1"), Some(file(bytes)))
        .await
        .expect("record again");
    assert!(!again.new);
    assert_eq!(again.download_url, first.download_url);
    assert_eq!(again.media_file_id, first.media_file_id);

    // The same bytes in another message reuse the stored object.
    let other = f
        .history
        .record(&image("3EB0IMG2"), Some(file(bytes)))
        .await
        .expect("record other");
    assert!(other.new);
    assert_eq!(other.download_url, first.download_url);
    assert_ne!(other.media_file_id, first.media_file_id);

    let page = f.db.media_files("shop", "org1", 1, 50).await.expect("page");
    assert_eq!(page.total, 2);
    let record =
        f.db.media_file(first.media_file_id.as_deref().expect("library id"))
            .await
            .expect("read")
            .expect("record");
    assert_eq!(record.file_size, bytes.len() as i64);
    assert_eq!(record.caption, "a caption");
    assert_eq!(record.message_id, "3EB0IMG1");
    assert!(uuid::Uuid::parse_str(&record.id).is_ok());

    let messages =
        f.db.last_messages("shop", "shop-111-222", 200)
            .await
            .expect("messages");
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0].message_type, "image");
    assert_eq!(messages[0].download_url, first.download_url);
    let media = messages[0].media.as_ref().expect("media");
    assert_eq!(
        (media.file_size, media.mime_type.as_str()),
        (bytes.len() as u64, "image/png")
    );
    let rooms = f.db.chat_rooms("shop").await.expect("rooms");
    assert_eq!(rooms[0].unread_count, 2);
}

#[tokio::test]
async fn media_on_files() {
    media_is_stored_once_and_links_return_the_bytes(false).await;
}

#[tokio::test]
async fn media_on_s3() {
    media_is_stored_once_and_links_return_the_bytes(true).await;
}

#[tokio::test]
async fn concurrent_duplicates_store_one_file_and_one_row() {
    let f = fixture(false).await;
    let bytes: &'static [u8] = b"same bytes twice";
    let event = image("3EB0DUP");
    let (a, b) = tokio::join!(
        f.history.record(&event, Some(file(bytes))),
        f.history.record(&event, Some(file(bytes))),
    );
    let (a, b) = (a.expect("a"), b.expect("b"));
    assert!(a.new != b.new, "exactly one is new: {a:?} {b:?}");
    assert_eq!(a.download_url, b.download_url);
    assert_eq!(
        f.db.media_files("shop", "org1", 1, 50).await.unwrap().total,
        1
    );
    let rooms = f.db.chat_rooms("shop").await.unwrap();
    assert_eq!(rooms[0].unread_count, 1);
    let mut objects = Vec::new();
    let mut dirs = vec![f._dir.path().join("media")];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                dirs.push(p);
            } else if !entry.file_name().to_string_lossy().starts_with('.') {
                objects.push(p);
            }
        }
    }
    assert_eq!(objects.len(), 1, "{objects:?}");
}

#[tokio::test]
async fn updates_change_their_target_and_insert_nothing() {
    let f = fixture(false).await;
    let mut text = envelope("text", "3EB0T");
    text.from_me = true;
    text.meta = Some(Meta::from_metadata(&serde_json::json!({"fromAI": true})));
    assert!(f.history.record(&text, None).await.unwrap().new);

    let mut reaction = envelope("reaction", "3EB0R");
    reaction.reaction = Some(Reaction {
        target_id: "3EB0T".into(),
        emoji: "👍".into(),
    });
    let r = f.history.record(&reaction, None).await.unwrap();
    assert!(r.updated && !r.new);

    let mut edit = envelope("edit", "3EB0E");
    edit.from_me = true;
    edit.edit = Some(Edit {
        target_id: "3EB0T".into(),
        body: "hello, edited".into(),
    });
    assert!(f.history.record(&edit, None).await.unwrap().updated);
    // The same edit delivered twice is applied once.
    assert!(f.history.record(&edit, None).await.unwrap().updated);

    let rows =
        f.db.last_messages("shop", "shop-111-222", 200)
            .await
            .unwrap();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert!(row.from_ai);
    assert_eq!(row.body, "hello, edited");
    assert_eq!(row.extras["reactions"], serde_json::json!({"222": "👍"}));
    assert_eq!(row.extras["edited"], true);
    assert_eq!(row.extras["editHistory"].as_array().map(Vec::len), Some(1));
    assert_eq!(row.extras["editHistory"][0]["body"], "hello");
    assert_eq!(row.extras["meta"]["fromAI"], true);
    let room =
        f.db.chat_room("shop", "shop-111-222")
            .await
            .unwrap()
            .unwrap();
    assert_eq!(room.last_message, "hello, edited");
    assert_eq!(room.unread_count, 0, "own messages are not unread");

    let mut revoke = envelope("revoke", "3EB0X");
    revoke.revoke = Some(Revoke {
        target_id: "3EB0T".into(),
    });
    assert!(f.history.record(&revoke, None).await.unwrap().updated);
    let row =
        f.db.history_message("shop", "shop-111-222", "3EB0T")
            .await
            .unwrap()
            .unwrap();
    assert!(row.deleted);
    assert_eq!(row.extras["revoked"], true);

    // A target that is not stored changes nothing and is not an error.
    let mut lost = envelope("reaction", "3EB0R2");
    lost.reaction = Some(Reaction {
        target_id: "3EB0NOPE".into(),
        emoji: "x".into(),
    });
    assert_eq!(
        f.history.record(&lost, None).await.unwrap(),
        super::Recorded::default()
    );
    assert_eq!(
        f.db.last_messages("shop", "shop-111-222", 200)
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn polls_and_quotes_come_back_from_history() {
    let f = fixture(false).await;
    let mut poll = envelope("poll_creation", "3EB0POLL");
    poll.body = "Lunch?".into();
    poll.poll = Some(Poll {
        name: "Lunch?".into(),
        options: vec!["Pizza".into(), "Sushi".into()],
        selectable_count: 1,
    });
    f.history.record(&poll, None).await.unwrap();
    assert_eq!(
        f.history.poll_options(&cid("shop"), "3EB0POLL").await,
        Some(vec!["Pizza".to_string(), "Sushi".to_string()])
    );
    assert_eq!(f.history.poll_options(&cid("shop"), "3EB0NONE").await, None);
    assert_eq!(
        f.history.poll_options(&cid("other"), "3EB0POLL").await,
        None
    );

    let quoted = f
        .history
        .quoted(&cid("shop"), "shop-111-222", "3EB0POLL")
        .await
        .expect("quoted");
    assert_eq!(quoted.body, "Lunch?");
    assert_eq!(quoted.kind, "poll_creation");
    assert_eq!(quoted.participant.as_deref(), Some("222@lid"));
    assert!(
        f.history
            .quoted(&cid("shop"), "shop-111-222", "3EB0NONE")
            .await
            .is_none()
    );
}

#[tokio::test]
async fn enabled_only_with_an_org_and_the_hosted_receiver() {
    let f = fixture(false).await;
    assert!(f.history.enabled_for("org1", "https://inbox.example/hook"));
    assert!(!f.history.enabled_for("", "https://inbox.example/hook"));
    assert!(
        !f.history
            .enabled_for("org1", "https://elsewhere.example/hook")
    );
}

#[tokio::test]
async fn unstorable_events_are_errors_not_panics() {
    let f = fixture(false).await;
    let mut e = envelope("text", "");
    assert!(f.history.record(&e, None).await.is_err());
    e.message_id = "3EB0Q".into();
    e.kind = "mystery".into();
    assert!(f.history.record(&e, None).await.is_err());
    e.kind = "reaction".into();
    assert!(f.history.record(&e, None).await.is_err());
}
