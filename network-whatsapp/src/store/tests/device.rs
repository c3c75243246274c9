//! `DeviceStore` cases: the device row round-trips every persisted field.
use std::sync::Arc;

use whatsapp_rust::store::commands::DeviceCommand;
use whatsapp_rust::store::persistence_manager::PersistenceManager;
use whatsapp_rust::wacore::store::traits::DeviceStore;
use whatsapp_rust::wacore::store::{CachedNoiseCert, CachedServerCertChain, Device};
use whatsapp_rust::waproto::whatsapp as wa;

use super::Fixture;
use crate::store::device::DEVICE_ID;

/// A device with every optional field set and every counter off its default.
pub(super) fn full_device() -> Device {
    let mut d = Device::new();
    d.pn = Some("4915112345678:7@s.whatsapp.net".parse().expect("pn"));
    d.lid = Some("100000012345678:7@lid".parse().expect("lid"));
    d.account = Some(Arc::new(wa::ADVSignedDeviceIdentity {
        details: Some(vec![1, 2, 3]),
        account_signature_key: Some(vec![4; 32]),
        account_signature: Some(vec![5; 64]),
        device_signature: Some(vec![6; 64]),
    }));
    d.push_name = "Parley Test".into();
    d.app_version_primary = 2;
    d.app_version_secondary = 3001;
    d.app_version_tertiary = 4_000_000_000;
    d.app_version_last_fetched_ms = 1_700_000_000_123;
    d.edge_routing_info = Some(vec![9, 8, 7]);
    d.props_hash = Some("props-hash".into());
    d.next_pre_key_id = 812;
    d.first_unupload_pre_key_id = 800;
    d.server_has_prekeys = true;
    d.nct_salt = Some(vec![0xaa; 16]);
    d.server_cert_chain = Some(CachedServerCertChain {
        intermediate: CachedNoiseCert {
            key: [1; 32],
            not_before: 10,
            not_after: 20,
        },
        leaf: CachedNoiseCert {
            key: [2; 32],
            not_before: 11,
            not_after: 21,
        },
    });
    d.login_counter = 42;
    d.lid_migrated = true;
    d.last_signed_pre_key_rotation_ms = 1_700_000_000_999;
    d.read_receipts_disabled = true;
    d
}

/// Every persisted field, as the library itself serializes a device.
pub(super) fn persisted(d: &Device) -> serde_json::Value {
    serde_json::to_value(d).expect("serialize device")
}

pub(super) async fn device_round_trips_every_field(f: &Fixture) {
    let store = f.owner("dev", 1).await;
    assert!(!store.exists().await.expect("exists"));
    assert!(store.load().await.expect("load").is_none());

    let device = full_device();
    store.save(&device).await.expect("save");
    assert!(store.exists().await.expect("exists"));
    let loaded = store.load().await.expect("load").expect("device");
    assert_eq!(persisted(&loaded), persisted(&device));

    // A second save replaces the row.
    let mut changed = loaded;
    changed.push_name = "Renamed".into();
    changed.server_cert_chain = None;
    changed.account = None;
    changed.next_pre_key_id += 1;
    store.save(&changed).await.expect("save again");
    let reloaded = store.load().await.expect("load").expect("device");
    assert_eq!(persisted(&reloaded), persisted(&changed));
}

pub(super) async fn create_keeps_an_existing_device(f: &Fixture) {
    let store = f.owner("dev", 1).await;
    assert_eq!(store.create().await.expect("create"), DEVICE_ID);
    let created = store.load().await.expect("load").expect("created device");
    assert!(store.exists().await.expect("exists"));

    assert_eq!(store.create().await.expect("create again"), DEVICE_ID);
    let again = store.load().await.expect("load").expect("device");
    assert_eq!(
        persisted(&again),
        persisted(&created),
        "create never replaces the identity"
    );

    // The defaulted members: no debug snapshot to take, no process memory held.
    store
        .snapshot_db("crash", Some(b"ctx"))
        .await
        .expect("snapshot");
    assert_eq!(store.resource_report().await.memory_bytes, Some(0));
}

/// The stored private-key columns of `client_id`, as the database holds them.
async fn stored_keys(f: &Fixture, client_id: &str) -> Vec<Vec<u8>> {
    use crate::store::tables::device::Entity;
    use sea_orm::EntityTrait;
    let row = Entity::find_by_id(client_id)
        .one(f.db.conn())
        .await
        .expect("query")
        .expect("row");
    vec![
        row.noise_key,
        row.identity_key,
        row.signed_pre_key,
        row.adv_secret_key,
    ]
}

fn private_keys(d: &Device) -> Vec<Vec<u8>> {
    vec![
        d.noise_key.private_key.serialize().to_vec(),
        d.identity_key.private_key.serialize().to_vec(),
        d.signed_pre_key.private_key.serialize().to_vec(),
        d.adv_secret_key.to_vec(),
    ]
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

pub(super) async fn private_keys_are_sealed_and_rekeyed(f: &Fixture) {
    use base64::Engine;
    use parley_shared::store_keys::StoreKeys;
    let entry = |id: &str, byte: u8| {
        format!(
            "{id}:{}",
            base64::engine::general_purpose::STANDARD.encode([byte; 32])
        )
    };
    let (a, b) = (entry("a", 1), entry("b", 2));
    f.owner("dev", 1).await;
    let sealed_a = f.db.clone().with_keys(StoreKeys::parse(&a, None).unwrap());
    let store = super::store(&sealed_a, "dev", 1);
    let device = full_device();
    store.save(&device).await.expect("save");
    for (stored, private) in stored_keys(f, "dev")
        .await
        .iter()
        .zip(private_keys(&device))
    {
        assert!(
            !contains(stored, &private),
            "a private key is stored in the clear"
        );
    }
    let loaded = store.load().await.expect("load").expect("device");
    assert_eq!(persisted(&loaded), persisted(&device));

    // Rotation to b: after rekey, b alone opens the row.
    let both =
        f.db.clone()
            .with_keys(StoreKeys::parse(&format!("{a},{b}"), Some("b")).unwrap());
    assert_eq!(crate::store::rekey(&both).await.expect("rekey").devices, 1);
    assert_eq!(
        crate::store::rekey(&both)
            .await
            .expect("rekey again")
            .devices,
        0
    );
    let only_b = f.db.clone().with_keys(StoreKeys::parse(&b, None).unwrap());
    let reloaded = super::store(&only_b, "dev", 1)
        .load()
        .await
        .expect("load")
        .expect("device");
    assert_eq!(persisted(&reloaded), persisted(&device));
    let only_a = f.db.clone().with_keys(StoreKeys::parse(&a, None).unwrap());
    assert!(
        super::store(&only_a, "dev", 1).load().await.is_err(),
        "the old key no longer opens it"
    );
}

/// The client's device state, as the library keeps it, on `store`.
async fn client_of(store: &crate::store::SeaOrmDeviceStore) -> Arc<PersistenceManager> {
    let client = PersistenceManager::new(Arc::new(store.clone()))
        .await
        .expect("the client's state");
    Arc::new(client)
}

/// What the store holds of the device's salt.
async fn stored_salt(store: &crate::store::SeaOrmDeviceStore) -> Option<Vec<u8>> {
    store
        .load()
        .await
        .expect("load")
        .expect("a device")
        .nct_salt
}

pub(super) async fn a_save_writes_the_clients_latest_state(f: &Fixture) {
    let store = f.owner("dev", 1).await;
    let client = client_of(&store).await;
    store.saves_of(&client);
    let before = client.get_device_snapshot().to_serializable();
    client
        .process_command(DeviceCommand::SetNctSalt(Some(vec![7; 32])))
        .await;
    // A save that read its state before the change commits after it: it
    // writes the change all the same, never undoes it.
    store.save(&before).await.expect("save");
    assert_eq!(stored_salt(&store).await, Some(vec![7; 32]));
}

pub(super) async fn a_change_the_librarys_saver_missed_is_saved_by_the_connection(f: &Fixture) {
    let store = f.owner("dev", 1).await;
    // No background saver of the library runs here: it missed every change.
    let client = client_of(&store).await;
    let (ended_tx, ended) = tokio::sync::watch::channel(false);
    crate::live::device_saves::keep_saved(&store, &client, ended);
    client
        .process_command(DeviceCommand::SetNctSalt(Some(vec![8; 32])))
        .await;
    let deadline = tokio::time::Instant::now() + 10 * crate::live::device_saves::EVERY;
    while stored_salt(&store).await.is_none() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the change was not saved"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(stored_salt(&store).await, Some(vec![8; 32]));
    let _ = ended_tx.send(true);
}
