//! Ownership cases: a stale owner's writes are refused and change nothing, state
//! survives a move to another process, clients are apart, `take_sent_message`
//! hands a message out once under concurrency, `forget` wipes a client,
//! `retire` wipes a logged-out device for good, and a forget stops every open
//! store of the session after the write it was doing.
use std::sync::Arc;

use bytes::Bytes;
use whatsapp_rust::wacore::appstate::processor::AppStateMutationMAC;
use whatsapp_rust::wacore::store::error::StoreError;
use whatsapp_rust::wacore::store::traits::{
    AppStateSyncKey, AppSyncStore, DeviceListRecord, DeviceStore, LidPnMappingEntry,
    MsgSecretStore, ProtocolStore, SignalStore, TcTokenEntry,
};

use super::device::{full_device, persisted};
use super::{Fixture, claim, store};
use crate::store::tables::protocol::lid_pn_mappings;
use crate::store::{FenceRejected, GroupAuthor, OpenStores, SeaOrmDeviceStore, fence_rejection};
use sea_orm::{ActiveModelTrait, Set};

const PEER: &str = "4915100000001:2@s.whatsapp.net";
const CHAT: &str = "4915100000001@s.whatsapp.net";
const GROUP: &str = "120363000000000001@g.us";

/// Writes one value of every table through `s`.
async fn write_everything(s: &SeaOrmDeviceStore, byte: u8) -> Result<(), StoreError> {
    s.save(&full_device()).await?;
    s.put_identity(PEER, [byte; 32]).await?;
    s.put_session(PEER, &[byte; 8]).await?;
    s.store_prekey(1, &[byte; 8], false).await?;
    s.store_signed_prekey(1, &[byte; 8]).await?;
    s.put_sender_key("group::peer", &[byte; 8]).await?;
    let key = AppStateSyncKey {
        key_data: vec![byte; 32],
        fingerprint: vec![byte],
        timestamp: 1,
    };
    s.set_sync_key(b"key", key).await?;
    let mut version = s.get_version("regular").await?;
    version.version += 1;
    version.hash = [byte; 128];
    s.set_version("regular", version).await?;
    let mac = AppStateMutationMAC {
        index_mac: vec![1; 32],
        value_mac: vec![byte; 32],
    };
    s.put_mutation_macs("regular", 1, &[mac]).await?;
    s.set_sender_key_status("group", &[(PEER, byte.is_multiple_of(2))])
        .await?;
    let mapping = LidPnMappingEntry {
        lid: "100".into(),
        phone_number: format!("49151{byte}"),
        created_at: 1,
        updated_at: i64::from(byte),
        learning_source: "usync".into(),
    };
    s.put_lid_mapping(&mapping).await?;
    s.save_base_key(PEER, "m", &[byte; 8]).await?;
    let devices = DeviceListRecord {
        user: "4915100000001".into(),
        devices: Vec::new(),
        timestamp: i64::from(byte),
        phash: None,
        raw_id: None,
    };
    s.update_device_list(devices).await?;
    s.put_group_metadata("group", &[byte; 8]).await?;
    let token = TcTokenEntry {
        token: vec![byte; 8],
        token_timestamp: i64::from(byte),
        sender_timestamp: None,
    };
    s.put_tc_token(PEER, &token).await?;
    s.store_sent_message(CHAT, "sent", &[byte; 8]).await?;
    s.store_pending_inbound(CHAT, PEER, "in", &[byte; 8])
        .await?;
    s.put_msg_secret(CHAT, CHAT, "poll", &[byte; 32]).await?;
    s.put_group_authors(vec![GroupAuthor {
        chat: GROUP.into(),
        message_id: "g1".into(),
        author: format!("{byte}@lid"),
    }])
    .await?;
    Ok(())
}

/// Everything `write_everything` wrote, as read through `s`.
async fn read_everything(s: &SeaOrmDeviceStore) -> String {
    let device = s.load().await.expect("load").as_ref().map(persisted);
    let version = s.get_version("regular").await.expect("version");
    let sync_key = s.get_sync_key(b"key").await.expect("sync key");
    let devices = s.get_devices("4915100000001").await.expect("devices");
    let token = s.get_tc_token(PEER).await.expect("tc token");
    let lid = s.get_lid_mapping("100").await.expect("lid");
    format!(
        "{device:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
        s.load_identity(PEER).await.expect("identity"),
        s.get_session(PEER).await.expect("session"),
        s.load_prekey(1).await.expect("prekey"),
        s.load_signed_prekey(1).await.expect("signed prekey"),
        s.get_sender_key("group::peer").await.expect("sender key"),
        sync_key.map(|k| k.key_data),
        (version.version, version.hash.to_vec()),
        s.get_mutation_mac("regular", &[1; 32]).await.expect("mac"),
        s.has_same_base_key(PEER, "m", &[1; 8])
            .await
            .expect("base key"),
        s.get_sender_key_devices("group").await.expect("skd"),
        lid.map(|l| (l.phone_number, l.updated_at)),
        devices.map(|d| d.timestamp),
        s.get_group_metadata("group").await.expect("group"),
        token.map(|t| t.token),
        s.get_pending_inbound(CHAT, PEER, "in")
            .await
            .expect("pending"),
        s.get_msg_secret(CHAT, CHAT, "poll").await.expect("secret"),
        s.get_latest_sync_key_id().await.expect("latest"),
        s.get_all_tc_token_jids().await.expect("jids"),
    ) + &format!("|{:?}", s.group_author(GROUP, "g1").await.expect("author"))
}

fn assert_stale(result: Result<impl std::fmt::Debug, StoreError>, what: &str) {
    match result {
        Err(e) => assert!(
            matches!(
                fence_rejection(&e),
                Some(FenceRejected::Stale {
                    ours: 1,
                    stored: 2,
                    ..
                })
            ),
            "{what}: expected a stale-fence rejection, got {e:?}"
        ),
        Ok(v) => panic!("{what}: a stale owner's write was applied: {v:?}"),
    }
}

pub(super) async fn stale_owner_writes_are_rejected_and_change_nothing(f: &Fixture) {
    let old = f.owner("fenced", 1).await;
    write_everything(&old, 1).await.expect("owner 1 writes");

    // Another worker takes the session over with fence 2.
    claim(&f.db, "fenced", 2).await;
    let new = store(&f.db, "fenced", 2);
    let before = read_everything(&new).await;

    // Every kind of write of the stale owner is refused.
    assert_stale(old.save(&full_device()).await, "save");
    assert_stale(old.create().await, "create");
    assert_stale(old.put_identity(PEER, [9; 32]).await, "put_identity");
    assert_stale(
        old.put_identities_batch(&[(Arc::from(PEER), [9; 32])])
            .await,
        "put_identities_batch",
    );
    assert_stale(old.delete_identity(PEER).await, "delete_identity");
    assert_stale(old.put_session(PEER, b"x").await, "put_session");
    assert_stale(
        old.put_sessions_batch(&[(Arc::from(PEER), Bytes::from_static(b"x"))])
            .await,
        "put_sessions_batch",
    );
    assert_stale(old.delete_session(PEER).await, "delete_session");
    assert_stale(old.store_prekey(1, b"x", true).await, "store_prekey");
    assert_stale(
        old.mark_prekeys_uploaded(&[1]).await,
        "mark_prekeys_uploaded",
    );
    assert_stale(old.remove_prekey(1).await, "remove_prekey");
    assert_stale(
        old.store_signed_prekey(1, b"x").await,
        "store_signed_prekey",
    );
    assert_stale(old.remove_signed_prekey(1).await, "remove_signed_prekey");
    assert_stale(
        old.put_sender_key("group::peer", b"x").await,
        "put_sender_key",
    );
    assert_stale(
        old.delete_sender_key("group::peer").await,
        "delete_sender_key",
    );
    let key = AppStateSyncKey::default();
    assert_stale(old.set_sync_key(b"other", key).await, "set_sync_key");
    // (The version as it stands would be no write at all: `versions_round_trip`.)
    let mut version = new.get_version("regular").await.expect("version");
    version.version += 1;
    assert_stale(old.set_version("regular", version).await, "set_version");
    assert_stale(
        old.clear_mutation_macs("regular").await,
        "clear_mutation_macs",
    );
    assert_stale(
        old.delete_mutation_macs("regular", &[vec![1; 32]]).await,
        "delete_mutation_macs",
    );
    assert_stale(
        old.clear_all_sender_key_devices().await,
        "clear_all_sender_key_devices",
    );
    assert_stale(old.delete_base_key(PEER, "m").await, "delete_base_key");
    assert_stale(old.delete_devices("4915100000001").await, "delete_devices");
    assert_stale(
        old.delete_group_metadata("group").await,
        "delete_group_metadata",
    );
    assert_stale(old.delete_tc_token(PEER).await, "delete_tc_token");
    let author = GroupAuthor {
        chat: GROUP.into(),
        message_id: "g2".into(),
        author: "9@lid".into(),
    };
    assert_stale(
        old.put_group_authors(vec![author]).await,
        "put_group_authors",
    );
    assert_stale(
        old.prune_group_authors(i64::MAX).await,
        "prune_group_authors",
    );
    assert_stale(
        old.touch_tc_token_sender_timestamp(PEER, 999).await,
        "touch_tc_token_sender_timestamp",
    );
    assert_stale(
        old.store_received_tc_token(PEER, b"x", 999).await,
        "store_received_tc_token",
    );
    assert_stale(
        old.delete_expired_tc_tokens(i64::MAX, i64::MAX).await,
        "expire tc",
    );
    assert_stale(
        old.take_sent_message(CHAT, "sent").await,
        "take_sent_message",
    );
    assert_stale(
        old.delete_expired_sent_messages(i64::MAX).await,
        "expire sent",
    );
    assert_stale(
        old.delete_pending_inbound(CHAT, PEER, "in").await,
        "delete_pending_inbound",
    );
    assert_stale(
        old.delete_expired_msg_secrets(i64::MAX).await,
        "expire secrets",
    );
    assert_stale(write_everything(&old, 7).await, "write_everything");

    assert_eq!(read_everything(&new).await, before, "nothing changed");
    assert_eq!(
        new.take_sent_message(CHAT, "sent").await.expect("take"),
        Some(vec![1; 8]),
        "the message is still there for the current owner"
    );

    // The current owner writes; and a store at an even newer fence may too.
    write_everything(&new, 2).await.expect("owner 2 writes");
    assert_eq!(
        new.load_identity(PEER).await.expect("identity"),
        Some([2; 32])
    );
    let newest = store(&f.db, "fenced", 3);
    newest
        .put_identity(PEER, [3; 32])
        .await
        .expect("newer fence writes");
}

pub(super) async fn writes_without_a_session_are_rejected(f: &Fixture) {
    let orphan = store(&f.db, "nobody", 5);
    let err = orphan
        .put_identity(PEER, [1; 32])
        .await
        .expect_err("no session");
    assert_eq!(
        fence_rejection(&err),
        Some(&FenceRejected::NoSession {
            client_id: "nobody".into()
        })
    );
    assert_eq!(orphan.load_identity(PEER).await.expect("load"), None);
}

pub(super) async fn another_process_reads_what_one_wrote(f: &Fixture) {
    let first = f.owner("moving", 1).await;
    write_everything(&first, 4).await.expect("worker 1 writes");
    let written = read_everything(&first).await;

    // The session moves: another process (its own pool) claims fence 2.
    let other = f.other_process().await;
    claim(&other, "moving", 2).await;
    let second = store(&other, "moving", 2);
    assert_eq!(
        read_everything(&second).await,
        written,
        "same identity and Signal state"
    );

    // It continues writing; the first process reads the new state back.
    second.put_session(PEER, b"ratchet-2").await.expect("write");
    assert_eq!(
        first.get_session(PEER).await.expect("read"),
        Some(Bytes::from_static(b"ratchet-2"))
    );
}

pub(super) async fn clients_do_not_see_each_other(f: &Fixture) {
    let a = f.owner("client-a", 1).await;
    let b = f.owner("client-b", 7).await;
    write_everything(&a, 1).await.expect("a writes");
    assert_eq!(b.load().await.expect("load").map(|d| persisted(&d)), None);
    assert_eq!(b.load_identity(PEER).await.expect("identity"), None);
    assert_eq!(b.get_latest_sync_key_id().await.expect("latest"), None);
    assert!(b.get_all_tc_token_jids().await.expect("jids").is_empty());
    assert!(
        !b.has_signal_state_for_user("4915100000001")
            .await
            .expect("has")
    );
    assert_eq!(b.take_sent_message(CHAT, "sent").await.expect("take"), None);
    assert_eq!(
        a.take_sent_message(CHAT, "sent").await.expect("take"),
        Some(vec![1; 8])
    );
}

pub(super) async fn concurrent_take_sent_message_yields_once(f: &Fixture) {
    let owner = f.owner("racing", 1).await;
    for round in 0..3 {
        let id = format!("m{round}");
        owner
            .store_sent_message(CHAT, &id, id.as_bytes())
            .await
            .expect("store");
        let takers: Vec<_> = (0..12)
            .map(|_| {
                let s = owner.clone();
                let id = id.clone();
                tokio::spawn(async move { s.take_sent_message(CHAT, &id).await })
            })
            .collect();
        let mut got = Vec::new();
        for taker in takers {
            if let Some(payload) = taker.await.expect("join").expect("take") {
                got.push(payload);
            }
        }
        assert_eq!(
            got,
            vec![id.into_bytes()],
            "round {round}: exactly one taker"
        );
    }
}

pub(super) async fn forget_removes_every_row(f: &Fixture) {
    let gone = f.owner("gone", 1).await;
    let kept = f.owner("kept", 1).await;
    write_everything(&gone, 1).await.expect("write");
    write_everything(&kept, 1).await.expect("write");
    let kept_state = read_everything(&kept).await;

    SeaOrmDeviceStore::forget(&f.db, "gone")
        .await
        .expect("forget");
    let empty = f.owner("empty", 1).await;
    assert_eq!(read_everything(&gone).await, read_everything(&empty).await);
    assert!(gone.get_all_lid_mappings().await.expect("all").is_empty());
    assert!(
        gone.load_all_signed_prekeys()
            .await
            .expect("all")
            .is_empty()
    );
    assert_eq!(read_everything(&kept).await, kept_state);
}

pub(super) async fn retiring_a_logged_out_device_removes_it_for_good(f: &Fixture) {
    let gone = f.owner("gone", 1).await;
    let kept = f.owner("kept", 1).await;
    write_everything(&gone, 1).await.expect("write");
    write_everything(&kept, 1).await.expect("write");
    let kept_state = read_everything(&kept).await;

    gone.retire().await.expect("retire");
    let empty = f.owner("empty", 1).await;
    assert_eq!(read_everything(&gone).await, read_everything(&empty).await);
    // A late flush of the library (any clone of the store) is refused.
    let late = gone
        .clone()
        .save(&full_device())
        .await
        .expect_err("refused");
    assert_eq!(
        fence_rejection(&late),
        Some(&FenceRejected::LoggedOut {
            client_id: "gone".into()
        })
    );
    assert_eq!(read_everything(&gone).await, read_everything(&empty).await);
    assert_eq!(read_everything(&kept).await, kept_state);
}

pub(super) async fn a_stale_owner_cannot_retire_the_device(f: &Fixture) {
    let stale = f.owner("moved", 1).await;
    write_everything(&stale, 1).await.expect("write");
    claim(&f.db, "moved", 2).await;
    let current = store(&f.db, "moved", 2);
    let before = read_everything(&current).await;
    let refused = stale.retire().await.expect_err("refused");
    assert!(matches!(
        fence_rejection(&refused),
        Some(FenceRejected::Stale { .. })
    ));
    assert_eq!(read_everything(&current).await, before);
}

pub(super) async fn forgetting_stops_every_open_store_after_its_write_under_way(f: &Fixture) {
    let open = OpenStores::default();
    let gone = f.owner("gone", 1).await;
    // An earlier connection's store of the same session, still flushing.
    let earlier = store(&f.db, "gone", 1);
    let kept = f.owner("kept", 1).await;
    for s in [&gone, &earlier, &kept] {
        open.track(s);
        write_everything(s, 1).await.expect("write");
    }
    let kept_state = read_everything(&kept).await;

    // A write under way when the forget comes: it holds the session's lock
    // and has written a row the forget cannot see before it commits.
    let under_way = gone.write().await.expect("write lock");
    lid_pn_mappings::ActiveModel {
        client_id: Set("gone".into()),
        lid: Set("100000000000001".into()),
        phone_number: Set("4915100000009".into()),
        created_at: Set(1),
        updated_at: Set(1),
        learning_source: Set("usync".into()),
    }
    .insert(&under_way)
    .await
    .expect("insert under way");
    let forgetting = tokio::spawn({
        let (open, db) = (open.clone(), f.db.clone());
        async move { open.forget(&db, "gone").await }
    });
    tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while gone.deleted.refusal("gone").is_none() {
            tokio::task::yield_now().await;
        }
        // PostgreSQL: the forget is seen waiting for the session's lock (a
        // forget that did not wait would delete now and miss the row).
        // SQLite has one writer: the forget waits for it by construction.
        while f.db.backend() == "postgres" && !waiting_for_a_lock(&f.db).await {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the forget marks the open stores, then waits for the write under way");
    under_way.commit().await.expect("commit under way");
    forgetting.await.expect("join").expect("forget");

    // The write under way was deleted with the rest, not left behind.
    let empty = f.owner("empty", 1).await;
    assert_eq!(read_everything(&gone).await, read_everything(&empty).await);
    assert!(gone.get_all_lid_mappings().await.expect("all").is_empty());
    // Every open store of the session refuses a late flush.
    for s in [&gone, &earlier] {
        let late = s.save(&full_device()).await.expect_err("refused");
        assert_eq!(
            fence_rejection(&late),
            Some(&FenceRejected::Forgotten {
                client_id: "gone".into()
            })
        );
    }
    assert_eq!(read_everything(&gone).await, read_everything(&empty).await);
    // Another session's stores write on.
    assert_eq!(read_everything(&kept).await, kept_state);
    write_everything(&kept, 2).await.expect("kept writes on");
}

/// Whether a connection of this test's PostgreSQL database waits for a lock.
async fn waiting_for_a_lock(db: &parley_shared::db::Db) -> bool {
    use sea_orm::{ConnectionTrait, DbBackend, Statement};
    let sql = "SELECT count(*)::bigint AS n FROM pg_stat_activity \
               WHERE wait_event_type = 'Lock' AND datname = current_database()";
    let row = db
        .conn()
        .query_one_raw(Statement::from_string(DbBackend::Postgres, sql))
        .await
        .expect("pg_stat_activity")
        .expect("a row");
    row.try_get::<i64>("", "n").expect("n") > 0
}
