//! `SignalStore` cases: identities, sessions, pre-keys, signed pre-keys, sender keys.
use std::sync::Arc;

use bytes::Bytes;
use whatsapp_rust::wacore::store::traits::SignalStore;

use super::Fixture;

const ALICE: &str = "4915100000001@s.whatsapp.net";
const ALICE_2: &str = "4915100000001:2@s.whatsapp.net";
const BOB: &str = "100000000000002@lid";

pub(super) async fn identities_round_trip(f: &Fixture) {
    let store = f.owner("sig", 1).await;
    assert_eq!(store.load_identity(ALICE).await.expect("load"), None);
    assert!(
        !store
            .has_signal_state_for_user("4915100000001")
            .await
            .expect("has")
    );

    store.put_identity(ALICE, [1; 32]).await.expect("put");
    assert_eq!(
        store.load_identity(ALICE).await.expect("load"),
        Some([1; 32])
    );
    store.put_identity(ALICE, [2; 32]).await.expect("overwrite");
    assert_eq!(
        store.load_identity(ALICE).await.expect("load"),
        Some([2; 32])
    );

    let batch: Vec<(Arc<str>, [u8; 32])> =
        vec![(Arc::from(ALICE_2), [3; 32]), (Arc::from(BOB), [4; 32])];
    store.put_identities_batch(&batch).await.expect("batch");
    assert_eq!(
        store.load_identity(ALICE_2).await.expect("load"),
        Some([3; 32])
    );
    assert_eq!(store.load_identity(BOB).await.expect("load"), Some([4; 32]));
    assert!(
        store
            .has_signal_state_for_user("4915100000001")
            .await
            .expect("has")
    );
    assert!(
        store
            .has_signal_state_for_user("100000000000002")
            .await
            .expect("has")
    );
    assert!(
        !store
            .has_signal_state_for_user("491510000000")
            .await
            .expect("prefix only")
    );

    store.delete_identity(ALICE).await.expect("delete");
    assert_eq!(store.load_identity(ALICE).await.expect("load"), None);
    assert_eq!(
        store.load_identity(ALICE_2).await.expect("load"),
        Some([3; 32])
    );
}

pub(super) async fn sessions_round_trip(f: &Fixture) {
    let store = f.owner("sig", 1).await;
    assert_eq!(store.get_session(ALICE).await.expect("get"), None);
    assert!(!store.has_session(ALICE).await.expect("has"));

    store.put_session(ALICE, b"record-1").await.expect("put");
    assert_eq!(
        store.get_session(ALICE).await.expect("get"),
        Some(Bytes::from_static(b"record-1"))
    );
    assert!(store.has_session(ALICE).await.expect("has"));
    assert!(
        store
            .has_signal_state_for_user("4915100000001")
            .await
            .expect("has")
    );

    let batch: Vec<(Arc<str>, Bytes)> = vec![
        (Arc::from(ALICE), Bytes::from_static(b"record-2")),
        (Arc::from(BOB), Bytes::from_static(b"bob")),
    ];
    store.put_sessions_batch(&batch).await.expect("batch");
    assert_eq!(
        store.get_session(ALICE).await.expect("get"),
        Some(Bytes::from_static(b"record-2"))
    );
    assert_eq!(
        store.get_session(BOB).await.expect("get"),
        Some(Bytes::from_static(b"bob"))
    );

    // Duplicate keys in one batch: the last one wins (one statement, no conflict).
    let duplicates: Vec<(Arc<str>, Bytes)> = vec![
        (Arc::from(BOB), Bytes::from_static(b"bob-1")),
        (Arc::from(BOB), Bytes::from_static(b"bob-2")),
    ];
    store.put_sessions_batch(&duplicates).await.expect("batch");
    assert_eq!(
        store.get_session(BOB).await.expect("get"),
        Some(Bytes::from_static(b"bob-2"))
    );

    store.delete_session(ALICE).await.expect("delete");
    assert!(!store.has_session(ALICE).await.expect("has"));
    assert!(store.has_session(BOB).await.expect("has"));
}

pub(super) async fn prekeys_round_trip(f: &Fixture) {
    let store = f.owner("sig", 1).await;
    assert_eq!(store.get_max_prekey_id().await.expect("max"), 0);
    assert_eq!(store.load_prekey(1).await.expect("load"), None);

    store.store_prekey(1, b"one", false).await.expect("store");
    let batch = vec![
        (2, Bytes::from_static(b"two")),
        (u32::MAX, Bytes::from_static(b"max")),
    ];
    store
        .store_prekeys_batch(&batch, false)
        .await
        .expect("batch");
    assert_eq!(
        store.load_prekey(2).await.expect("load"),
        Some(Bytes::from_static(b"two"))
    );
    assert_eq!(store.get_max_prekey_id().await.expect("max"), u32::MAX);

    let loaded = store
        .load_prekeys_batch(&[u32::MAX, 7, 1])
        .await
        .expect("batch load");
    assert_eq!(
        loaded,
        vec![
            (u32::MAX, Bytes::from_static(b"max")),
            (1, Bytes::from_static(b"one")),
        ]
    );

    // Marking never resurrects a consumed key.
    store.remove_prekey(2).await.expect("remove");
    store.mark_prekeys_uploaded(&[1, 2]).await.expect("mark");
    assert_eq!(store.load_prekey(2).await.expect("load"), None);
    assert_eq!(
        store.load_prekey(1).await.expect("load"),
        Some(Bytes::from_static(b"one"))
    );
    store.remove_prekey(u32::MAX).await.expect("remove");
    assert_eq!(store.get_max_prekey_id().await.expect("max"), 1);
}

pub(super) async fn signed_prekeys_round_trip(f: &Fixture) {
    let store = f.owner("sig", 1).await;
    assert!(
        store
            .load_all_signed_prekeys()
            .await
            .expect("all")
            .is_empty()
    );
    store.store_signed_prekey(2, b"two").await.expect("store");
    store.store_signed_prekey(1, b"one").await.expect("store");
    store
        .store_signed_prekey(2, b"two-b")
        .await
        .expect("overwrite");
    assert_eq!(
        store.load_signed_prekey(2).await.expect("load"),
        Some(b"two-b".to_vec())
    );
    assert_eq!(
        store.load_all_signed_prekeys().await.expect("all"),
        vec![(1, b"one".to_vec()), (2, b"two-b".to_vec())]
    );
    store.remove_signed_prekey(1).await.expect("remove");
    assert_eq!(store.load_signed_prekey(1).await.expect("load"), None);
    assert_eq!(store.load_all_signed_prekeys().await.expect("all").len(), 1);
}

pub(super) async fn sender_keys_round_trip(f: &Fixture) {
    let store = f.owner("sig", 1).await;
    let group_sender = "120363000000000001@g.us::4915100000001:2@s.whatsapp.net";
    assert_eq!(store.get_sender_key(group_sender).await.expect("get"), None);
    store
        .put_sender_key(group_sender, b"sk-1")
        .await
        .expect("put");
    assert_eq!(
        store.get_sender_key(group_sender).await.expect("get"),
        Some(b"sk-1".to_vec())
    );
    let batch: Vec<(Arc<str>, Bytes)> = vec![
        (Arc::from(group_sender), Bytes::from_static(b"sk-2")),
        (Arc::from("other"), Bytes::from_static(b"o")),
    ];
    store.put_sender_keys_batch(&batch).await.expect("batch");
    assert_eq!(
        store.get_sender_key(group_sender).await.expect("get"),
        Some(b"sk-2".to_vec())
    );
    store.delete_sender_key(group_sender).await.expect("delete");
    assert_eq!(store.get_sender_key(group_sender).await.expect("get"), None);
    assert_eq!(
        store.get_sender_key("other").await.expect("get"),
        Some(b"o".to_vec())
    );
}

/// Every stored value of the sealed Signal and sync-key tables.
async fn stored_values(f: &Fixture) -> Vec<Vec<u8>> {
    use crate::store::tables::app_sync::sync_keys;
    use crate::store::tables::signal::{prekeys, sender_keys, sessions, signed_prekeys};
    use sea_orm::EntityTrait;
    let c = f.db.conn();
    let mut all = Vec::new();
    macro_rules! values {
        ($($table:ident . $column:ident),+) => {$(
            let rows = $table::Entity::find().all(c).await.expect("read rows");
            all.extend(rows.into_iter().map(|r| r.$column));
        )+};
    }
    values!(
        sessions.record,
        prekeys.record,
        signed_prekeys.record,
        sender_keys.record,
        sync_keys.key_data
    );
    all
}

pub(super) async fn records_are_sealed_and_rekeyed(f: &Fixture) {
    use base64::Engine;
    use parley_shared::store_keys::StoreKeys;
    use whatsapp_rust::wacore::store::traits::AppSyncStore;
    let secrets: [&[u8]; 5] = [
        b"SESSION-SECRET",
        b"PREKEY-SECRET",
        b"SIGNED-SECRET",
        b"SENDER-SECRET",
        b"SYNCKEY-SECRET",
    ];
    let store = f.owner("sig", 1).await;
    store.put_session(ALICE, secrets[0]).await.expect("session");
    store
        .store_prekey(7, secrets[1], false)
        .await
        .expect("prekey");
    store
        .store_signed_prekey(3, secrets[2])
        .await
        .expect("signed");
    store
        .put_sender_key(BOB, secrets[3])
        .await
        .expect("sender key");
    let sync = whatsapp_rust::wacore::store::traits::AppStateSyncKey {
        key_data: secrets[4].to_vec(),
        fingerprint: vec![1],
        timestamp: 5,
    };
    store.set_sync_key(b"kid", sync).await.expect("sync key");
    let stored = stored_values(f).await;
    assert_eq!(stored.len(), 5);
    for value in &stored {
        for secret in secrets {
            assert!(
                !value.windows(secret.len()).any(|w| w == secret),
                "stored in the clear"
            );
        }
    }

    // Rotation: the test key and a new one, the new one active; rekey; the
    // new key alone opens every value.
    let entry = format!(
        "n:{}",
        base64::engine::general_purpose::STANDARD.encode([3u8; 32])
    );
    let test = format!(
        "t:{}",
        base64::engine::general_purpose::STANDARD.encode([9u8; 32])
    );
    let both =
        f.db.clone()
            .with_keys(StoreKeys::parse(&format!("{test},{entry}"), Some("n")).unwrap());
    let done = crate::store::rekey(&both).await.expect("rekey");
    assert_eq!(done.records, 5, "{done:?}");
    assert_eq!(crate::store::rekey(&both).await.expect("again").records, 0);
    let only_new =
        f.db.clone()
            .with_keys(StoreKeys::parse(&entry, None).unwrap());
    let store = super::store(&only_new, "sig", 1);
    assert_eq!(
        store.get_session(ALICE).await.unwrap().as_deref(),
        Some(secrets[0])
    );
    assert_eq!(
        store.load_prekey(7).await.unwrap().as_deref(),
        Some(secrets[1])
    );
    assert_eq!(
        store.load_signed_prekey(3).await.unwrap().as_deref(),
        Some(secrets[2])
    );
    assert_eq!(
        store.get_sender_key(BOB).await.unwrap().as_deref(),
        Some(secrets[3])
    );
    let key = store.get_sync_key(b"kid").await.unwrap().expect("sync key");
    assert_eq!(key.key_data, secrets[4]);
    let old_only = super::store(&f.db, "sig", 1);
    assert!(
        old_only.get_session(ALICE).await.is_err(),
        "the removed key opens nothing"
    );
}
