//! Message-bound cases: sent messages, the pending inbound buffer (`ProtocolStore`)
//! and message secrets (`MsgSecretStore`).
use whatsapp_rust::wacore::store::traits::{
    MsgSecretEntry, MsgSecretStore, PendingInboundKey, PendingInboundRow, ProtocolStore,
    SignalStore,
};

use super::Fixture;
use crate::store::GroupAuthor;
use crate::store::values::now_secs;

const CHAT: &str = "4915100000001@s.whatsapp.net";

pub(super) async fn sent_messages_round_trip(f: &Fixture) {
    let store = f.owner("msg", 1).await;
    assert_eq!(
        store.take_sent_message(CHAT, "m1").await.expect("take"),
        None
    );

    store
        .store_sent_message(CHAT, "m1", b"payload-1")
        .await
        .expect("store");
    store
        .store_sent_message(CHAT, "m2", b"payload-2")
        .await
        .expect("store");
    store
        .store_sent_message(CHAT, "m1", b"payload-1b")
        .await
        .expect("replace");
    assert_eq!(
        store.take_sent_message(CHAT, "m1").await.expect("take"),
        Some(b"payload-1b".to_vec())
    );
    assert_eq!(
        store
            .take_sent_message(CHAT, "m1")
            .await
            .expect("take again"),
        None,
        "taking consumes"
    );

    let now = now_secs();
    assert_eq!(
        store
            .delete_expired_sent_messages(now - 3600)
            .await
            .expect("expire"),
        0
    );
    assert_eq!(
        store
            .delete_expired_sent_messages(now + 3600)
            .await
            .expect("expire"),
        1
    );
    assert_eq!(
        store.take_sent_message(CHAT, "m2").await.expect("take"),
        None
    );
}

pub(super) async fn pending_inbound_round_trip(f: &Fixture) {
    let store = f.owner("msg", 1).await;
    let sender = "4915100000001:3@s.whatsapp.net";
    assert_eq!(
        store
            .get_pending_inbound(CHAT, sender, "s1")
            .await
            .expect("get"),
        None
    );

    store
        .store_pending_inbound(CHAT, sender, "s1", b"one")
        .await
        .expect("store");
    let rows = [
        PendingInboundRow {
            chat: CHAT,
            sender,
            id: "s2",
            message: b"two",
        },
        PendingInboundRow {
            chat: CHAT,
            sender: "other@s.whatsapp.net",
            id: "s1",
            message: b"other",
        },
    ];
    store
        .store_pending_inbound_batch(&rows)
        .await
        .expect("batch");
    let again = [
        rows[0],
        PendingInboundRow {
            message: b"two-b",
            ..rows[0]
        },
    ];
    store
        .store_pending_inbound_batch(&again)
        .await
        .expect("duplicate keys");
    assert_eq!(
        store
            .get_pending_inbound(CHAT, sender, "s2")
            .await
            .expect("get"),
        Some(b"two-b".to_vec())
    );
    assert_eq!(
        store
            .get_pending_inbound(CHAT, sender, "s1")
            .await
            .expect("get"),
        Some(b"one".to_vec())
    );
    assert_eq!(
        store
            .get_pending_inbound(CHAT, "other@s.whatsapp.net", "s1")
            .await
            .expect("get"),
        Some(b"other".to_vec()),
        "ids are scoped by chat and sender"
    );

    store
        .delete_pending_inbound(CHAT, sender, "s1")
        .await
        .expect("delete");
    assert_eq!(
        store
            .get_pending_inbound(CHAT, sender, "s1")
            .await
            .expect("get"),
        None
    );
    store
        .delete_pending_inbound_batch(&[PendingInboundKey {
            chat: CHAT,
            sender,
            id: "s2",
        }])
        .await
        .expect("batch delete");
    assert_eq!(
        store
            .get_pending_inbound(CHAT, sender, "s2")
            .await
            .expect("get"),
        None
    );

    let now = now_secs();
    assert_eq!(
        store
            .delete_expired_pending_inbound(now - 3600)
            .await
            .expect("expire"),
        0
    );
    assert_eq!(
        store
            .delete_expired_pending_inbound(now + 3600)
            .await
            .expect("expire"),
        1
    );
}

/// A buffered row reaches the database only with a later write of the
/// session's state (batched or not), which never commits without it; one
/// deleted before never does; and a delete of a row the database may have
/// goes there.
pub(super) async fn pending_rows_are_written_with_the_state_after_them(f: &Fixture) {
    let store = f.owner("buffer", 1).await;
    let other = f.other_process().await;
    let reader = super::store(&other, "buffer", 1);
    let sender = "4915100000001:3@s.whatsapp.net";
    let stored = |s: &crate::store::SeaOrmDeviceStore, id: &'static str| {
        let s = s.clone();
        async move { s.get_pending_inbound(CHAT, sender, id).await.expect("get") }
    };

    store
        .store_pending_inbound(CHAT, sender, "quick", b"q")
        .await
        .expect("store");
    assert_eq!(stored(&store, "quick").await, Some(b"q".to_vec()));
    assert_eq!(stored(&reader, "quick").await, None, "held in memory");
    store
        .delete_pending_inbound(CHAT, sender, "quick")
        .await
        .expect("delete");
    assert_eq!(stored(&store, "quick").await, None);

    // A write that saves no keys leaves it held.
    store
        .store_pending_inbound(CHAT, sender, "batched", b"b")
        .await
        .expect("store");
    store
        .put_msg_secret(CHAT, sender, "m", &[1; 32])
        .await
        .expect("secret");
    assert_eq!(stored(&reader, "batched").await, None, "still held");

    // The keys that decrypted it are saved: the row is written first.
    store
        .put_sessions_batch(&[(
            std::sync::Arc::from(sender),
            bytes::Bytes::from_static(b"s"),
        )])
        .await
        .expect("sessions");
    assert_eq!(stored(&reader, "batched").await, Some(b"b".to_vec()));
    store
        .store_pending_inbound(CHAT, sender, "alone", b"a")
        .await
        .expect("store");
    store.put_identity(sender, [1; 32]).await.expect("identity");
    assert_eq!(stored(&reader, "alone").await, Some(b"a".to_vec()));

    store
        .delete_pending_inbound(CHAT, sender, "batched")
        .await
        .expect("delete");
    assert_eq!(stored(&reader, "batched").await, None, "deleted there");

    // Read back from the database by another process, buffered again (a
    // replay) and deleted: gone from the database too.
    assert_eq!(stored(&reader, "alone").await, Some(b"a".to_vec()));
    reader
        .store_pending_inbound(CHAT, sender, "alone", b"a")
        .await
        .expect("store again");
    reader
        .delete_pending_inbound(CHAT, sender, "alone")
        .await
        .expect("delete");
    assert_eq!(stored(&store, "alone").await, None);
}

fn secret(msg_id: &str, byte: u8, expires_at: i64, message_ts: i64) -> MsgSecretEntry {
    MsgSecretEntry {
        chat: CHAT.into(),
        sender: CHAT.into(),
        msg_id: msg_id.into(),
        secret: [byte; 32],
        expires_at,
        message_ts,
    }
}

pub(super) async fn msg_secrets_round_trip(f: &Fixture) {
    let store = f.owner("msg", 1).await;
    assert_eq!(
        store.get_msg_secret(CHAT, CHAT, "p1").await.expect("get"),
        None
    );

    store
        .put_msg_secret(CHAT, CHAT, "p1", &[1; 32])
        .await
        .expect("put");
    assert_eq!(
        store
            .get_msg_secret_with_ts(CHAT, CHAT, "p1")
            .await
            .expect("get"),
        Some((vec![1; 32], 0))
    );

    let stored = store
        .put_msg_secrets(vec![
            secret("p2", 2, 100, 10),
            secret("p3", 3, 500, 0),
            // Same key twice in one batch: merged, later secret wins.
            secret("p2", 4, 200, 5),
        ])
        .await
        .expect("batch");
    assert_eq!(stored, 3);
    assert_eq!(
        store
            .get_msg_secret_with_ts(CHAT, CHAT, "p2")
            .await
            .expect("get"),
        Some((vec![4; 32], 10))
    );

    // Merges against stored rows: a shorter deadline never shrinks the window,
    // an unknown parent time never clobbers a known one, 0 = never expires.
    store
        .put_msg_secrets(vec![secret("p2", 5, 150, 0), secret("p3", 6, 0, 7)])
        .await
        .expect("merge");
    assert_eq!(
        store
            .get_msg_secret_with_ts(CHAT, CHAT, "p2")
            .await
            .expect("get"),
        Some((vec![5; 32], 10))
    );
    assert_eq!(
        store
            .get_msg_secret_with_ts(CHAT, CHAT, "p3")
            .await
            .expect("get"),
        Some((vec![6; 32], 7))
    );

    // p2 expires at 200; p1 and p3 never do.
    assert_eq!(
        store.delete_expired_msg_secrets(199).await.expect("expire"),
        0
    );
    assert_eq!(
        store.delete_expired_msg_secrets(200).await.expect("expire"),
        1
    );
    assert_eq!(
        store.get_msg_secret(CHAT, CHAT, "p2").await.expect("get"),
        None
    );
    assert_eq!(
        store.get_msg_secret(CHAT, CHAT, "p1").await.expect("get"),
        Some(vec![1; 32])
    );
    assert_eq!(
        store.get_msg_secret(CHAT, CHAT, "p3").await.expect("get"),
        Some(vec![6; 32])
    );
}

pub(super) async fn group_authors_round_trip(f: &Fixture) {
    const GROUP: &str = "120363000000000001@g.us";
    let store = f.owner("authors", 1).await;
    let note = |id: &str, author: &str| GroupAuthor {
        chat: GROUP.into(),
        message_id: id.into(),
        author: author.into(),
    };
    assert_eq!(store.group_author(GROUP, "a1").await.expect("read"), None);
    // A batch may name a message twice: the last author wins, one row.
    store
        .put_group_authors(vec![
            note("a1", "1@lid"),
            note("a2", "2@lid"),
            note("a1", "3@lid"),
        ])
        .await
        .expect("write");
    assert_eq!(
        store
            .group_author(GROUP, "a1")
            .await
            .expect("read")
            .as_deref(),
        Some("3@lid")
    );
    assert_eq!(
        store
            .group_author(GROUP, "a2")
            .await
            .expect("read")
            .as_deref(),
        Some("2@lid")
    );
    assert_eq!(
        store.group_author("other@g.us", "a1").await.expect("read"),
        None
    );
    // Pruning keeps what was noted since `before`, and forgets the rest.
    assert_eq!(
        store
            .prune_group_authors(now_secs() - 60)
            .await
            .expect("prune"),
        0
    );
    assert_eq!(
        store
            .prune_group_authors(now_secs() + 60)
            .await
            .expect("prune"),
        2
    );
    assert_eq!(store.group_author(GROUP, "a2").await.expect("read"), None);
}
