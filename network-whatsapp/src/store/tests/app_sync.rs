//! `AppSyncStore` cases: sync keys, collection versions, mutation MACs.
use std::collections::HashMap;

use whatsapp_rust::wacore::appstate::hash::HashState;
use whatsapp_rust::wacore::appstate::processor::AppStateMutationMAC;
use whatsapp_rust::wacore::store::traits::{AppStateSyncKey, AppSyncStore};

use super::Fixture;

fn key(data: u8, timestamp: i64) -> AppStateSyncKey {
    AppStateSyncKey {
        key_data: vec![data; 32],
        fingerprint: vec![data, 0, 1],
        timestamp,
    }
}

pub(super) async fn sync_keys_round_trip(f: &Fixture) {
    let store = f.owner("app", 1).await;
    assert!(store.get_sync_key(b"k1").await.expect("get").is_none());
    assert_eq!(store.get_latest_sync_key_id().await.expect("latest"), None);

    store.set_sync_key(b"k1", key(1, 100)).await.expect("set");
    store.set_sync_key(b"k2", key(2, 50)).await.expect("set");
    let k1 = store.get_sync_key(b"k1").await.expect("get").expect("k1");
    assert_eq!(
        (k1.key_data, k1.fingerprint, k1.timestamp),
        (vec![1; 32], vec![1, 0, 1], 100)
    );
    assert_eq!(
        store.get_latest_sync_key_id().await.expect("latest"),
        Some(b"k2".to_vec()),
        "the most recently stored, not the newest timestamp"
    );

    store
        .set_sync_key(b"k1", key(3, 300))
        .await
        .expect("overwrite");
    let k1 = store.get_sync_key(b"k1").await.expect("get").expect("k1");
    assert_eq!(k1.key_data, vec![3; 32]);
    assert_eq!(
        store.get_latest_sync_key_id().await.expect("latest"),
        Some(b"k1".to_vec())
    );
}

pub(super) async fn versions_round_trip(f: &Fixture) {
    let store = f.owner("app", 1).await;
    let fresh = store.get_version("regular").await.expect("get");
    assert_eq!(fresh.version, 0);
    assert_eq!(fresh.hash, [0; 128]);
    assert!(fresh.index_value_map.is_empty() && !fresh.mac_mismatch_fatal);

    let mut hash = [0u8; 128];
    hash.iter_mut().zip(0u8..).for_each(|(b, i)| *b = i);
    let state = HashState {
        version: u64::try_from(i64::MAX).expect("fits"),
        hash,
        index_value_map: HashMap::from([
            ("idx-a".to_string(), vec![1, 2]),
            ("idx-b".to_string(), vec![3]),
        ]),
        mac_mismatch_fatal: true,
    };
    store
        .set_version("regular", state.clone())
        .await
        .expect("set");
    let got = store.get_version("regular").await.expect("get");
    assert_eq!(got.version, state.version);
    assert_eq!(got.hash, state.hash);
    assert_eq!(got.index_value_map, state.index_value_map);
    assert!(got.mac_mismatch_fatal);

    // A new version replaces the index values; other collections are apart.
    let next = HashState {
        version: 7,
        hash: [9; 128],
        index_value_map: HashMap::from([("idx-c".to_string(), vec![4])]),
        mac_mismatch_fatal: false,
    };
    store
        .set_version("regular", next.clone())
        .await
        .expect("set");
    let got = store.get_version("regular").await.expect("get");
    assert_eq!((got.version, got.hash), (7, [9; 128]));
    assert_eq!(got.index_value_map, next.index_value_map);
    assert!(!got.mac_mismatch_fatal);
    assert_eq!(
        store
            .get_version("critical_block")
            .await
            .expect("get")
            .version,
        0
    );

    // A sync that changed nothing writes nothing: even an owner fenced out
    // since is not refused, while a change of its is.
    super::claim(&f.db, "app", 2).await;
    store
        .set_version("regular", next.clone())
        .await
        .expect("nothing to write");
    let changed = HashState {
        version: 8,
        ..next.clone()
    };
    assert!(store.set_version("regular", changed).await.is_err());

    // The newer owner's patch: one index value changed, one removed, one new.
    let newer = super::store(&f.db, "app", 2);
    let before = HashState {
        version: 9,
        hash: [1; 128],
        index_value_map: HashMap::from([
            ("idx-c".to_string(), vec![4]),
            ("idx-d".to_string(), vec![5]),
            ("idx-e".to_string(), vec![6]),
        ]),
        mac_mismatch_fatal: false,
    };
    newer.set_version("regular", before).await.expect("set");
    let after = HashState {
        version: 10,
        hash: [2; 128],
        index_value_map: HashMap::from([
            ("idx-c".to_string(), vec![4]),
            ("idx-d".to_string(), vec![7]),
            ("idx-f".to_string(), vec![8]),
        ]),
        mac_mismatch_fatal: false,
    };
    newer
        .set_version("regular", after.clone())
        .await
        .expect("set");
    let got = newer.get_version("regular").await.expect("get");
    assert_eq!((got.version, got.hash), (10, [2; 128]));
    assert_eq!(got.index_value_map, after.index_value_map);
}

fn mac(index: u8, value: u8) -> AppStateMutationMAC {
    AppStateMutationMAC {
        index_mac: vec![index; 32],
        value_mac: vec![value; 32],
    }
}

pub(super) async fn mutation_macs_round_trip(f: &Fixture) {
    let store = f.owner("app", 1).await;
    assert_eq!(
        store
            .get_mutation_mac("regular", &[1; 32])
            .await
            .expect("get"),
        None
    );

    store
        .put_mutation_macs("regular", 1, &[mac(1, 10), mac(2, 20), mac(3, 30)])
        .await
        .expect("put");
    store
        .put_mutation_macs("regular_low", 1, &[mac(1, 99)])
        .await
        .expect("put other collection");
    store
        .put_mutation_macs("regular", 2, &[mac(2, 21)])
        .await
        .expect("overwrite");
    assert_eq!(
        store
            .get_mutation_mac("regular", &[2; 32])
            .await
            .expect("get"),
        Some(vec![21; 32])
    );

    let found = store
        .get_mutation_macs("regular", &[[1; 32], [2; 32], [4; 32]])
        .await
        .expect("batch");
    assert_eq!(
        found,
        HashMap::from([([1; 32], vec![10; 32]), ([2; 32], vec![21; 32])])
    );

    store
        .delete_mutation_macs("regular", &[vec![1; 32]])
        .await
        .expect("delete");
    assert_eq!(
        store
            .get_mutation_mac("regular", &[1; 32])
            .await
            .expect("get"),
        None
    );
    assert_eq!(
        store
            .get_mutation_mac("regular_low", &[1; 32])
            .await
            .expect("get"),
        Some(vec![99; 32])
    );

    store.clear_mutation_macs("regular").await.expect("clear");
    assert_eq!(
        store
            .get_mutation_mac("regular", &[3; 32])
            .await
            .expect("get"),
        None
    );
    assert_eq!(
        store
            .get_mutation_mac("regular_low", &[1; 32])
            .await
            .expect("get"),
        Some(vec![99; 32]),
        "clearing one collection keeps the others"
    );
}
