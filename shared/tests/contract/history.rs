//! Contract of the hosted-inbox queries (`Db::history_*`, rooms, messages, media
//! library): one suite, run on SQLite and PostgreSQL.
use chrono::{DateTime, Duration, TimeZone, Utc};
use parley_shared::db::Db;
use parley_shared::db::history::{
    Change, MessageMedia, NewMediaFile, NewMessage, RoomFacts, Target, Write, Written,
};
use serde_json::json;

use crate::db::db_contract;

db_contract! {
    adapters: [sqlite, postgres],
    cases: [
        duplicate_delivery_adds_no_row_and_counts_unread_once,
        duplicates_inside_one_batch,
        reaction_edit_revoke_update_the_target_and_insert_nothing,
        updates_may_target_a_message_of_the_same_batch,
        last_200_of_250_oldest_first,
        rooms_newest_activity_first_and_last_message_current,
        unread_reset,
        media_library_paging,
        poll_options_of_a_stored_poll,
        rooms_found_by_contact,
        delete_for_me_marks_the_row,
        one_batch_over_many_rooms_sums_each_room,
        room_avatars_are_kept_unless_replaced,
        unnamed_rooms_are_named_after_their_contacts,
        concurrent_batches_all_commit,
    ]
}

const ROOM: &str = "shop-111-222";

fn at(second: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 2, 3, 0, 0).unwrap() + Duration::seconds(second)
}

fn message(room: &str, id: &str, second: i64, from_me: bool) -> NewMessage {
    let other = room.rsplit('-').next().unwrap_or_default().to_string();
    NewMessage {
        client_id: "shop".into(),
        org_id: "org1".into(),
        chat_room_id: room.into(),
        message_id: id.into(),
        room: RoomFacts {
            name: "Ann".into(),
            my_lid: "111".into(),
            client_lid: other.clone(),
            is_group: false,
            remote_jid: format!("{other}@lid"),
            remote_phone: "4917600000201".into(),
            avatar_url: String::new(),
        },
        body: format!("body {id}"),
        message_type: "chat".into(),
        from_me,
        pushname: "Ann".into(),
        sender: format!("{other}@lid"),
        sent_at: at(second),
        from_ai: false,
        media: None,
        download_url: String::new(),
        extras: json!({"forwarded": false, "mentions": []}),
        media_file: None,
        activity: true,
        unread: true,
    }
}

fn insert(m: NewMessage) -> Write {
    Write::Message(Box::new(m))
}

fn target(id: &str) -> Target {
    Target {
        client_id: "shop".into(),
        chat_room_id: ROOM.into(),
        message_id: id.into(),
    }
}

async fn write(db: &Db, writes: Vec<Write>) -> Vec<Written> {
    db.history_write(&writes).await.expect("history write")
}

async fn room(db: &Db, id: &str) -> parley_shared::db::history::ChatRoomRow {
    db.chat_room("shop", id).await.expect("read").expect("room")
}

async fn duplicate_delivery_adds_no_row_and_counts_unread_once(db: &Db) {
    let m = message(ROOM, "3EB0A", 1, false);
    assert_eq!(
        write(db, vec![insert(m.clone())]).await,
        [Written::Inserted]
    );
    assert_eq!(
        write(db, vec![insert(m.clone())]).await,
        [Written::Duplicate]
    );
    assert_eq!(write(db, vec![insert(m)]).await, [Written::Duplicate]);
    let rows = db.last_messages("shop", ROOM, 200).await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].body, "body 3EB0A");
    assert_eq!(room(db, ROOM).await.unread_count, 1);
    // The same id in another room is another message.
    let other = message("shop-111-333", "3EB0A", 2, false);
    assert_eq!(write(db, vec![insert(other)]).await, [Written::Inserted]);
}

async fn duplicates_inside_one_batch(db: &Db) {
    let a = message(ROOM, "3EB0A", 1, false);
    let b = message(ROOM, "3EB0B", 2, false);
    let out = write(db, vec![insert(a.clone()), insert(b), insert(a)]).await;
    assert_eq!(
        out,
        [Written::Inserted, Written::Inserted, Written::Duplicate]
    );
    assert_eq!(room(db, ROOM).await.unread_count, 2);
    assert_eq!(db.last_messages("shop", ROOM, 200).await.unwrap().len(), 2);
}

async fn reaction_edit_revoke_update_the_target_and_insert_nothing(db: &Db) {
    write(db, vec![insert(message(ROOM, "3EB0T", 1, true))]).await;
    let react = |emoji: &str| Write::Update {
        target: target("3EB0T"),
        change: Change::React {
            reactor: "222".into(),
            emoji: emoji.into(),
        },
    };
    assert_eq!(write(db, vec![react("👍")]).await, [Written::Updated]);
    assert_eq!(write(db, vec![react("👍")]).await, [Written::Updated]);
    let row = db
        .history_message("shop", ROOM, "3EB0T")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.extras["reactions"], json!({"222": "👍"}));
    assert_eq!(row.extras["mentions"], json!([]), "other extras are kept");
    assert_eq!(write(db, vec![react("")]).await, [Written::Updated]);
    let row = db
        .history_message("shop", ROOM, "3EB0T")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.extras["reactions"], json!({}));

    let edit = Write::Update {
        target: target("3EB0T"),
        change: Change::Edit {
            edit_id: "3EB0E".into(),
            body: "new body".into(),
            at: at(5),
        },
    };
    assert_eq!(
        write(db, vec![edit.clone(), edit]).await,
        [Written::Updated; 2]
    );
    let row = db
        .history_message("shop", ROOM, "3EB0T")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.body, "new body");
    assert_eq!(row.extras["edited"], true);
    assert_eq!(
        row.extras["editHistory"],
        json!([{"editId": "3EB0E", "body": "body 3EB0T", "editedAt": "2026-01-02T03:00:05Z"}])
    );
    assert_eq!(room(db, ROOM).await.last_message, "new body");

    let revoke = Write::Update {
        target: target("3EB0T"),
        change: Change::Revoke { at: at(6) },
    };
    assert_eq!(write(db, vec![revoke]).await, [Written::Updated]);
    let row = db
        .history_message("shop", ROOM, "3EB0T")
        .await
        .unwrap()
        .unwrap();
    assert!(row.deleted);
    assert_eq!(row.extras["revoked"], true);

    let missing = Write::Update {
        target: target("3EB0NOPE"),
        change: Change::Revoke { at: at(7) },
    };
    assert_eq!(write(db, vec![missing]).await, [Written::TargetMissing]);
    assert_eq!(db.last_messages("shop", ROOM, 200).await.unwrap().len(), 1);
    assert_eq!(room(db, ROOM).await.unread_count, 0);
}

async fn updates_may_target_a_message_of_the_same_batch(db: &Db) {
    let out = write(
        db,
        vec![
            Write::Update {
                target: target("3EB0P"),
                change: Change::Vote {
                    voter: "222".into(),
                    selected_options: vec!["Pizza".into()],
                    selected_hashes: vec!["ab".into()],
                },
            },
            insert(message(ROOM, "3EB0P", 1, true)),
        ],
    )
    .await;
    assert_eq!(out, [Written::Updated, Written::Inserted]);
    let row = db
        .history_message("shop", ROOM, "3EB0P")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        row.extras["votes"]["222"],
        json!({"selectedOptions": ["Pizza"], "selectedHashes": ["ab"]})
    );
}

async fn last_200_of_250_oldest_first(db: &Db) {
    let writes: Vec<Write> = (0..250)
        .map(|i| insert(message(ROOM, &format!("3EB0{i:04}"), i, i % 2 == 0)))
        .collect();
    // Written newest first, in two batches: the order comes from the timestamps.
    let mut writes = writes;
    writes.reverse();
    let rest = writes.split_off(100);
    write(db, writes).await;
    write(db, rest).await;
    let rows = db.last_messages("shop", ROOM, 200).await.unwrap();
    assert_eq!(rows.len(), 200);
    assert_eq!(rows[0].message_id, "3EB00050");
    assert_eq!(rows[199].message_id, "3EB00249");
    assert!(rows.windows(2).all(|w| w[0].sent_at <= w[1].sent_at));
    let room = room(db, ROOM).await;
    assert_eq!(room.unread_count, 125);
    assert_eq!(room.last_message_id, "3EB00249");
}

async fn rooms_newest_activity_first_and_last_message_current(db: &Db) {
    write(
        db,
        vec![insert(message("shop-111-200", "3EB0A", 10, false))],
    )
    .await;
    write(db, vec![insert(message("shop-111-300", "3EB0B", 20, true))]).await;
    // An older message arriving late does not become the last one.
    write(db, vec![insert(message("shop-111-300", "3EB0C", 5, false))]).await;
    // Vote updates are stored but are no activity.
    let mut vote = message("shop-111-200", "3EB0V", 30, false);
    vote.message_type = "vote_update".into();
    vote.activity = false;
    write(db, vec![insert(vote)]).await;

    let rooms = db.chat_rooms("shop").await.unwrap();
    let ids: Vec<&str> = rooms.iter().map(|r| r.chat_room_id.as_str()).collect();
    assert_eq!(ids, ["shop-111-300", "shop-111-200"]);
    let r300 = &rooms[0];
    assert_eq!(r300.last_message_id, "3EB0B");
    assert_eq!(r300.last_message, "body 3EB0B");
    assert!(r300.last_message_from_me);
    assert_eq!(r300.last_message_at, Some(at(20)));
    assert_eq!(r300.unread_count, 1);
    assert_eq!(
        (r300.client_lid.as_str(), r300.my_lid.as_str()),
        ("300", "111")
    );
    let r200 = &rooms[1];
    assert_eq!(r200.last_message_id, "3EB0A");
    assert_eq!(r200.unread_count, 1);
    assert!(db.chat_rooms("other").await.unwrap().is_empty());
}

async fn unread_reset(db: &Db) {
    write(
        db,
        vec![
            insert(message(ROOM, "3EB0A", 1, false)),
            insert(message(ROOM, "3EB0B", 2, false)),
        ],
    )
    .await;
    assert_eq!(room(db, ROOM).await.unread_count, 2);
    assert!(db.reset_unread("shop", ROOM).await.unwrap());
    assert_eq!(room(db, ROOM).await.unread_count, 0);
    assert!(!db.reset_unread("shop", "shop-111-999").await.unwrap());
    assert!(!db.reset_unread("other", ROOM).await.unwrap());
    write(db, vec![insert(message(ROOM, "3EB0C", 3, false))]).await;
    assert_eq!(room(db, ROOM).await.unread_count, 1);
    assert!(db.room_has_messages("shop", ROOM).await.unwrap());
    assert!(!db.room_has_messages("shop", "shop-111-999").await.unwrap());
}

fn with_file(room: &str, id: &str, second: i64, org: &str) -> NewMessage {
    let mut m = message(room, id, second, false);
    m.org_id = org.into();
    m.message_type = "image".into();
    m.media = Some(MessageMedia {
        mime_type: "image/png".into(),
        media_type: "image".into(),
        file_name: format!("{id}.png"),
        file_size: 3,
    });
    let uuid = uuid::Uuid::new_v4();
    m.download_url = format!("https://media.example/{uuid}.png");
    m.media_file = Some(NewMediaFile {
        id: uuid,
        storage_key: format!("history/shop/{uuid}.png"),
        url: m.download_url.clone(),
        mime_type: "image/png".into(),
        media_type: "image".into(),
        file_name: format!("{id}.png"),
        file_size: 3,
        caption: format!("caption {id}"),
        sha256: format!("sha-{id}"),
        created_at: at(second),
    });
    m
}

async fn media_library_paging(db: &Db) {
    let writes: Vec<Write> = (0..7)
        .map(|i| insert(with_file(ROOM, &format!("3EB0M{i}"), i, "org1")))
        .chain([insert(with_file(ROOM, "3EB0OTHERORG", 50, "org2"))])
        .collect();
    write(db, writes).await;
    // A duplicate adds no library record.
    write(db, vec![insert(with_file(ROOM, "3EB0M0", 0, "org1"))]).await;

    let p1 = db.media_files("shop", "org1", 1, 3).await.unwrap();
    assert_eq!(p1.total, 7);
    let names: Vec<&str> = p1.files.iter().map(|f| f.message_id.as_str()).collect();
    assert_eq!(names, ["3EB0M6", "3EB0M5", "3EB0M4"], "newest first");
    let p3 = db.media_files("shop", "org1", 3, 3).await.unwrap();
    assert_eq!((p3.total, p3.files.len()), (7, 1));
    assert_eq!(p3.files[0].message_id, "3EB0M0");
    let past = db.media_files("shop", "org1", 9, 3).await.unwrap();
    assert_eq!((past.total, past.files.len()), (7, 0));
    let all = db.media_files("shop", "org1", 1, 1000).await.unwrap();
    assert_eq!(all.files.len(), 7, "limit is capped at 200, not refused");
    assert_eq!(
        db.media_files("shop", "org2", 1, 50).await.unwrap().total,
        1
    );
    assert_eq!(
        db.media_files("other", "org1", 1, 50).await.unwrap().total,
        0
    );

    let first = &p1.files[0];
    let found = db.media_file(&first.id).await.unwrap().unwrap();
    assert_eq!(&found, first);
    assert_eq!(found.caption, "caption 3EB0M6");
    assert!(
        db.media_file("00000000-0000-0000-0000-000000000000")
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(
        db.media_by_sha256("shop", "sha-3EB0M6").await.unwrap(),
        Some((found.storage_key.clone(), found.url.clone()))
    );
    assert_eq!(
        db.media_by_sha256("other", "sha-3EB0M6").await.unwrap(),
        None
    );
    let row = db
        .history_message("shop", ROOM, "3EB0M6")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.media_file_id.as_deref(), Some(found.id.as_str()));
    assert_eq!(row.media.unwrap().file_name, "3EB0M6.png");
}

async fn poll_options_of_a_stored_poll(db: &Db) {
    let mut poll = message(ROOM, "3EB0POLL", 1, true);
    poll.message_type = "poll".into();
    poll.extras =
        json!({"poll": {"name": "Lunch?", "options": ["Pizza", "Sushi"], "selectableCount": 1}});
    let mut not_poll = message(ROOM, "3EB0TEXT", 2, true);
    not_poll.extras = json!({"poll": {"options": ["x"]}});
    write(db, vec![insert(poll), insert(not_poll)]).await;
    assert_eq!(
        db.poll_options("shop", "3EB0POLL").await.unwrap(),
        Some(vec!["Pizza".to_string(), "Sushi".to_string()])
    );
    assert_eq!(db.poll_options("shop", "3EB0TEXT").await.unwrap(), None);
    assert_eq!(db.poll_options("shop", "3EB0NONE").await.unwrap(), None);
    assert_eq!(db.poll_options("other", "3EB0POLL").await.unwrap(), None);
}

async fn rooms_found_by_contact(db: &Db) {
    let mut group = message("shop-111-120363025246125486", "3EB0G", 2, false);
    group.room.is_group = true;
    group.room.client_lid = "120363025246125486".into();
    write(
        db,
        vec![insert(message(ROOM, "3EB0A", 1, false)), insert(group)],
    )
    .await;
    let by_lid = db
        .chat_room_for("shop", "222", false)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(by_lid.chat_room_id, ROOM);
    let by_phone = db
        .chat_room_for("shop", "4917600000201", false)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(by_phone.chat_room_id, ROOM);
    let g = db
        .chat_room_for("shop", "120363025246125486", true)
        .await
        .unwrap()
        .unwrap();
    assert!(g.is_group);
    assert!(
        db.chat_room_for("shop", "999", false)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        db.chat_room_for("other", "222", false)
            .await
            .unwrap()
            .is_none()
    );
}

async fn delete_for_me_marks_the_row(db: &Db) {
    write(db, vec![insert(message(ROOM, "3EB0A", 1, false))]).await;
    assert!(db.delete_for_me("shop", ROOM, "3EB0A").await.unwrap());
    let row = db
        .history_message("shop", ROOM, "3EB0A")
        .await
        .unwrap()
        .unwrap();
    assert!(row.deleted);
    assert!(!db.delete_for_me("shop", ROOM, "3EB0NOPE").await.unwrap());
}

/// One statement upserts every room of a batch: each room gets its own unread
/// sum and its own newest message, on top of what was stored.
async fn one_batch_over_many_rooms_sums_each_room(db: &Db) {
    let rooms: Vec<String> = (0..300)
        .map(|i| format!("shop-111-{:03}", 400 + i))
        .collect();
    write(db, vec![insert(message(&rooms[0], "3EB0PRE", 1, false))]).await;
    let mut batch = Vec::new();
    for (i, r) in rooms.iter().enumerate() {
        let n = (i % 3) as i64 + 1;
        for k in 0..n {
            // Out of time order inside the batch: the newest still wins.
            let second = 100 + (n - k) * 10;
            batch.push(insert(message(r, &format!("3EB0{i}x{k}"), second, false)));
        }
        batch.push(insert(message(r, &format!("3EB0{i}me"), 50, true)));
    }
    let out = write(db, batch).await;
    assert!(out.iter().all(|w| *w == Written::Inserted), "{out:?}");
    for (i, r) in rooms.iter().enumerate() {
        let n = (i % 3) as i64 + 1;
        let row = room(db, r).await;
        let earlier = i64::from(i == 0);
        assert_eq!(row.unread_count, n + earlier, "{r}");
        assert_eq!(row.last_message_id, format!("3EB0{i}x0"), "{r}");
        assert_eq!(row.last_message_at, Some(at(100 + n * 10)), "{r}");
        assert!(!row.last_message_from_me);
    }
    assert_eq!(db.chat_rooms("shop").await.unwrap().len(), 300);
}

async fn room_avatars_are_kept_unless_replaced(db: &Db) {
    let mut m = message(ROOM, "3EB0AV1", 1, false);
    m.room.avatar_url = "https://m/a.png".into();
    write(db, vec![insert(m)]).await;
    assert_eq!(room(db, ROOM).await.avatar_url, "https://m/a.png");
    // A later message that knows no avatar does not blank it.
    write(db, vec![insert(message(ROOM, "3EB0AV2", 2, false))]).await;
    assert_eq!(room(db, ROOM).await.avatar_url, "https://m/a.png");
    assert!(
        db.set_room_avatar("shop", ROOM, "https://m/b.png")
            .await
            .unwrap()
    );
    assert_eq!(room(db, ROOM).await.avatar_url, "https://m/b.png");
    assert!(db.set_room_avatar("shop", ROOM, "").await.unwrap());
    assert_eq!(room(db, ROOM).await.avatar_url, "");
    assert_eq!(room(db, ROOM).await.unread_count, 2, "counters untouched");
    assert!(
        !db.set_room_avatar("shop", "shop-111-999", "x")
            .await
            .unwrap()
    );
}

/// A history's push names: a direct room without a name takes its
/// contact's; a named room, a group and a contact without a name do not.
async fn unnamed_rooms_are_named_after_their_contacts(db: &Db) {
    let unnamed = |room: &str, id: &str| {
        let mut m = message(room, id, 1, true);
        m.room.name = String::new();
        m
    };
    let mut group = unnamed("shop-111-120363025246125486", "3EB0NG");
    group.room.is_group = true;
    group.room.client_lid = "120363025246125486".into();
    write(
        db,
        vec![
            insert(unnamed(ROOM, "3EB0N1")),
            insert(unnamed("shop-111-333", "3EB0N2")),
            insert(message("shop-111-444", "3EB0N3", 1, false)),
            insert(group),
        ],
    )
    .await;
    for (lid, name) in [
        ("222", "Ann Lee"),
        ("333", ""),
        ("444", "Not Ann"),
        ("120363025246125486", "Not a group"),
    ] {
        db.learn_contact("shop", lid, "", name).await.unwrap();
    }
    db.learn_contact("other", "333", "", "Someone else's")
        .await
        .unwrap();
    assert_eq!(db.name_rooms_after_contacts("shop").await.unwrap(), 1);
    assert_eq!(room(db, ROOM).await.name, "Ann Lee");
    assert_eq!(room(db, "shop-111-333").await.name, "");
    assert_eq!(room(db, "shop-111-444").await.name, "Ann", "named already");
    assert_eq!(room(db, "shop-111-120363025246125486").await.name, "");
    assert_eq!(db.name_rooms_after_contacts("shop").await.unwrap(), 0);
}

/// Batches that read before they write (an edit reads its target, an insert
/// looks for a duplicate), written at once from many tasks as a session's
/// events arrive: none fails (on SQLite a deferred transaction would fail
/// with a busy snapshot when another commits between its read and its write).
async fn concurrent_batches_all_commit(db: &Db) {
    write(db, vec![insert(message(ROOM, "3EB0BASE", 0, false))]).await;
    let tasks: Vec<_> = (0..16)
        .map(|task| {
            let db = db.clone();
            tokio::spawn(async move {
                for round in 0..25 {
                    let id = format!("3EB0C{task}R{round}");
                    let edit = Write::Update {
                        target: target("3EB0BASE"),
                        change: Change::Edit {
                            edit_id: format!("3EB0E{task}R{round}"),
                            body: format!("edit {task}/{round}"),
                            at: at(100 + round),
                        },
                    };
                    let batch = vec![insert(message(ROOM, &id, 1 + round, false)), edit];
                    db.history_write(&batch)
                        .await
                        .map_err(|e| format!("{id}: {e}"))?;
                }
                Ok::<_, String>(())
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("task").expect("every batch commits");
    }
    assert_eq!(
        db.last_messages("shop", ROOM, 200).await.unwrap().len(),
        200
    );
}
