//! `ProtocolStore` cases: sender-key devices, LID-PN mappings, base keys, device
//! lists, group metadata and tc tokens.
use whatsapp_rust::wacore::store::traits::{
    DeviceInfo, DeviceListRecord, LidPnMappingEntry, ProtocolStore, TcTokenEntry,
};

use super::Fixture;

const GROUP: &str = "120363000000000001@g.us";
const OTHER_GROUP: &str = "120363000000000002@g.us";

pub(super) async fn sender_key_devices_round_trip(f: &Fixture) {
    let store = f.owner("proto", 1).await;
    assert!(
        store
            .get_sender_key_devices(GROUP)
            .await
            .expect("get")
            .is_empty()
    );

    store
        .set_sender_key_status(
            GROUP,
            &[("a:1@lid", true), ("b:2@lid", false), ("a:1@lid", false)],
        )
        .await
        .expect("set");
    store
        .set_sender_key_status(OTHER_GROUP, &[("a:1@lid", true), ("c:3@lid", true)])
        .await
        .expect("set other");
    assert_eq!(
        store.get_sender_key_devices(GROUP).await.expect("get"),
        vec![
            ("a:1@lid".to_string(), false),
            ("b:2@lid".to_string(), false)
        ]
    );
    store
        .set_sender_key_status(GROUP, &[("b:2@lid", true)])
        .await
        .expect("update");
    assert_eq!(
        store.get_sender_key_devices(GROUP).await.expect("get"),
        vec![
            ("a:1@lid".to_string(), false),
            ("b:2@lid".to_string(), true)
        ]
    );

    store
        .delete_sender_key_device_rows(&["a:1@lid"])
        .await
        .expect("delete rows");
    assert_eq!(
        store.get_sender_key_devices(GROUP).await.expect("get"),
        vec![("b:2@lid".to_string(), true)]
    );
    assert_eq!(
        store
            .get_sender_key_devices(OTHER_GROUP)
            .await
            .expect("get"),
        vec![("c:3@lid".to_string(), true)],
        "a device is forgotten in every group"
    );

    store.clear_sender_key_devices(GROUP).await.expect("clear");
    assert!(
        store
            .get_sender_key_devices(GROUP)
            .await
            .expect("get")
            .is_empty()
    );
    assert_eq!(
        store
            .get_sender_key_devices(OTHER_GROUP)
            .await
            .expect("get")
            .len(),
        1
    );
    store
        .clear_all_sender_key_devices()
        .await
        .expect("clear all");
    assert!(
        store
            .get_sender_key_devices(OTHER_GROUP)
            .await
            .expect("get")
            .is_empty()
    );
}

fn mapping(lid: &str, phone: &str, created: i64, updated: i64, source: &str) -> LidPnMappingEntry {
    LidPnMappingEntry {
        lid: lid.into(),
        phone_number: phone.into(),
        created_at: created,
        updated_at: updated,
        learning_source: source.into(),
    }
}

fn fields(e: &LidPnMappingEntry) -> (String, String, i64, i64, String) {
    (
        e.lid.clone(),
        e.phone_number.clone(),
        e.created_at,
        e.updated_at,
        e.learning_source.clone(),
    )
}

pub(super) async fn lid_mappings_round_trip(f: &Fixture) {
    let store = f.owner("proto", 1).await;
    assert!(store.get_lid_mapping("100").await.expect("get").is_none());
    assert!(
        store
            .get_pn_mapping("4915100000001")
            .await
            .expect("get")
            .is_none()
    );

    let first = mapping("100", "4915100000001", 10, 10, "usync");
    store.put_lid_mapping(&first).await.expect("put");
    let got = store
        .get_lid_mapping("100")
        .await
        .expect("get")
        .expect("mapping");
    assert_eq!(fields(&got), fields(&first));
    let by_phone = store
        .get_pn_mapping("4915100000001")
        .await
        .expect("get")
        .expect("mapping");
    assert_eq!(by_phone.lid, "100");

    // A newer LID for the same phone wins the phone lookup; an update keeps created_at.
    store
        .put_lid_mappings(&[
            mapping("200", "4915100000001", 20, 20, "peer_pn_message"),
            mapping("300", "4915100000003", 30, 30, "usync"),
            mapping("100", "4915100000001", 40, 15, "history_sync"),
        ])
        .await
        .expect("batch");
    let by_phone = store
        .get_pn_mapping("4915100000001")
        .await
        .expect("get")
        .expect("mapping");
    assert_eq!(by_phone.lid, "200");
    let updated = store
        .get_lid_mapping("100")
        .await
        .expect("get")
        .expect("mapping");
    assert_eq!(
        fields(&updated),
        (
            "100".into(),
            "4915100000001".into(),
            10,
            15,
            "history_sync".into()
        )
    );

    let all: Vec<_> = store
        .get_all_lid_mappings()
        .await
        .expect("all")
        .iter()
        .map(|e| e.lid.clone())
        .collect();
    assert_eq!(all, ["100", "200", "300"]);
}

pub(super) async fn base_keys_round_trip(f: &Fixture) {
    let store = f.owner("proto", 1).await;
    let addr = "4915100000001:2@s.whatsapp.net";
    assert!(
        !store
            .has_same_base_key(addr, "m1", b"k")
            .await
            .expect("same")
    );
    store
        .save_base_key(addr, "m1", b"key-1")
        .await
        .expect("save");
    assert!(
        store
            .has_same_base_key(addr, "m1", b"key-1")
            .await
            .expect("same")
    );
    assert!(
        !store
            .has_same_base_key(addr, "m1", b"key-2")
            .await
            .expect("same")
    );
    assert!(
        !store
            .has_same_base_key(addr, "m2", b"key-1")
            .await
            .expect("same")
    );
    store
        .save_base_key(addr, "m1", b"key-2")
        .await
        .expect("overwrite");
    assert!(
        store
            .has_same_base_key(addr, "m1", b"key-2")
            .await
            .expect("same")
    );
    store.delete_base_key(addr, "m1").await.expect("delete");
    assert!(
        !store
            .has_same_base_key(addr, "m1", b"key-2")
            .await
            .expect("same")
    );
}

/// user, (device id, key index, hosted) per device, timestamp, phash, raw id.
type DeviceListFields = (
    String,
    Vec<(u32, Option<u32>, bool)>,
    i64,
    Option<String>,
    Option<u32>,
);

fn device_fields(r: &DeviceListRecord) -> DeviceListFields {
    (
        r.user.clone(),
        r.devices
            .iter()
            .map(|d| (d.device_id, d.key_index, d.is_hosted))
            .collect(),
        r.timestamp,
        r.phash.clone(),
        r.raw_id,
    )
}

pub(super) async fn device_lists_round_trip(f: &Fixture) {
    let store = f.owner("proto", 1).await;
    assert!(
        store
            .get_devices("4915100000001")
            .await
            .expect("get")
            .is_none()
    );

    let record = DeviceListRecord {
        user: "4915100000001".into(),
        devices: vec![
            DeviceInfo::new(0, None),
            DeviceInfo::new(7, Some(3)).with_hosting(true),
            DeviceInfo::new(2, Some(1)),
        ],
        timestamp: 1_700_000_000,
        phash: Some("2:abc".into()),
        raw_id: Some(u32::MAX),
    };
    store
        .update_device_list(record.clone())
        .await
        .expect("update");
    let got = store
        .get_devices("4915100000001")
        .await
        .expect("get")
        .expect("record");
    assert_eq!(device_fields(&got), device_fields(&record));

    let shorter = DeviceListRecord {
        user: "4915100000001".into(),
        devices: vec![DeviceInfo::new(0, None)],
        timestamp: 1_700_000_100,
        phash: None,
        raw_id: None,
    };
    let other = DeviceListRecord {
        user: "100000000000009".into(),
        devices: vec![DeviceInfo::new(1, Some(1))],
        timestamp: 5,
        phash: None,
        raw_id: Some(1),
    };
    store
        .update_device_lists(vec![shorter.clone(), other.clone()])
        .await
        .expect("batch");
    let got = store
        .get_devices("4915100000001")
        .await
        .expect("get")
        .expect("record");
    assert_eq!(
        device_fields(&got),
        device_fields(&shorter),
        "replaced as a whole"
    );
    let got = store
        .get_devices("100000000000009")
        .await
        .expect("get")
        .expect("record");
    assert_eq!(device_fields(&got), device_fields(&other));

    store.delete_devices("4915100000001").await.expect("delete");
    assert!(
        store
            .get_devices("4915100000001")
            .await
            .expect("get")
            .is_none()
    );
    assert!(
        store
            .get_devices("100000000000009")
            .await
            .expect("get")
            .is_some()
    );
}

pub(super) async fn group_metadata_round_trips(f: &Fixture) {
    let store = f.owner("proto", 1).await;
    assert_eq!(store.get_group_metadata(GROUP).await.expect("get"), None);
    store
        .put_group_metadata(GROUP, b"blob-v1")
        .await
        .expect("put");
    store
        .put_group_metadata(GROUP, b"blob-v2")
        .await
        .expect("put");
    assert_eq!(
        store.get_group_metadata(GROUP).await.expect("get"),
        Some(b"blob-v2".to_vec())
    );
    store.delete_group_metadata(GROUP).await.expect("delete");
    assert_eq!(store.get_group_metadata(GROUP).await.expect("get"), None);
}

fn tc(token: &[u8], token_timestamp: i64, sender_timestamp: Option<i64>) -> TcTokenEntry {
    TcTokenEntry {
        token: token.to_vec(),
        token_timestamp,
        sender_timestamp,
    }
}

fn tc_fields(e: Option<TcTokenEntry>) -> Option<(Vec<u8>, i64, Option<i64>)> {
    e.map(|e| (e.token, e.token_timestamp, e.sender_timestamp))
}

pub(super) async fn tc_tokens_round_trip(f: &Fixture) {
    let store = f.owner("proto", 1).await;
    let a = "100000000000001@lid";
    let b = "100000000000002@lid";
    let c = "100000000000003@lid";
    assert!(store.get_tc_token(a).await.expect("get").is_none());

    store
        .put_tc_token(a, &tc(b"tok-a", 100, Some(90)))
        .await
        .expect("put");
    store
        .put_tc_token(b, &tc(b"tok-b", 10, None))
        .await
        .expect("put");
    store
        .put_tc_token(c, &tc(b"", 10, Some(200)))
        .await
        .expect("put");
    assert_eq!(
        tc_fields(store.get_tc_token(a).await.expect("get")),
        Some((b"tok-a".to_vec(), 100, Some(90)))
    );
    assert_eq!(store.get_all_tc_token_jids().await.expect("all"), [a, b, c]);

    // b: token expired, no sender bucket -> gone. c: placeholder, live sender
    // bucket -> kept. a: live token -> kept.
    let deleted = store
        .delete_expired_tc_tokens(50, 150)
        .await
        .expect("expire");
    assert_eq!(deleted, 1);
    assert_eq!(store.get_all_tc_token_jids().await.expect("all"), [a, c]);

    store.delete_tc_token(a).await.expect("delete");
    assert!(store.get_tc_token(a).await.expect("get").is_none());
}

pub(super) async fn tc_token_upserts_keep_each_writers_field(f: &Fixture) {
    let store = f.owner("proto", 1).await;
    let jid = "100000000000001@lid";

    // The sender path inserts a placeholder, then only moves forward.
    store
        .touch_tc_token_sender_timestamp(jid, 100)
        .await
        .expect("touch");
    assert_eq!(
        tc_fields(store.get_tc_token(jid).await.expect("get")),
        Some((Vec::new(), 100, Some(100)))
    );
    store
        .touch_tc_token_sender_timestamp(jid, 50)
        .await
        .expect("older touch");
    assert_eq!(
        tc_fields(store.get_tc_token(jid).await.expect("get")).map(|e| e.2),
        Some(Some(100))
    );

    // A received token replaces the placeholder even when older, keeps the bucket.
    store
        .store_received_tc_token(jid, b"real", 20)
        .await
        .expect("receive");
    assert_eq!(
        tc_fields(store.get_tc_token(jid).await.expect("get")),
        Some((b"real".to_vec(), 20, Some(100)))
    );
    // A stale token never clobbers a fresher real one; a newer one does.
    store
        .store_received_tc_token(jid, b"stale", 10)
        .await
        .expect("stale");
    store
        .touch_tc_token_sender_timestamp(jid, 300)
        .await
        .expect("touch");
    assert_eq!(
        tc_fields(store.get_tc_token(jid).await.expect("get")),
        Some((b"real".to_vec(), 20, Some(300)))
    );
    store
        .store_received_tc_token(jid, b"newer", 20)
        .await
        .expect("newer");
    assert_eq!(
        tc_fields(store.get_tc_token(jid).await.expect("get")),
        Some((b"newer".to_vec(), 20, Some(300)))
    );

    // Received first, without a sender bucket.
    let fresh = "100000000000002@lid";
    store
        .store_received_tc_token(fresh, b"t", 5)
        .await
        .expect("receive");
    assert_eq!(
        tc_fields(store.get_tc_token(fresh).await.expect("get")),
        Some((b"t".to_vec(), 5, None))
    );
}
