//! Contract of the device store: one suite of cases, each run against SQLite (a
//! temp file) and PostgreSQL (a fresh database per test, dropped after), expanded
//! by `contract!` into `store::tests::<adapter>::<case>`.
mod app_sync;
mod device;
mod fencing;
mod group_commit;
mod messages;
mod protocol;
mod signal;
mod tc_cache;

use parley_shared::db::testing::TestDb;
use parley_shared::db::{Db, NewSession, StatePatch};

use whatsapp_rust::wacore::store::traits::Backend;

use super::SeaOrmDeviceStore;

/// The store key every case writes under: every round trip goes through
/// sealing and opening.
pub(super) fn keys() -> parley_shared::store_keys::StoreKeys {
    use base64::Engine;
    let entry = format!(
        "t:{}",
        base64::engine::general_purpose::STANDARD.encode([9u8; 32])
    );
    parley_shared::store_keys::StoreKeys::parse(&entry, None).expect("test key")
}

/// A migrated database of one adapter, private to one test, sealing with [`keys`].
pub(super) struct Fixture {
    pub db: Db,
    test: TestDb,
}

impl Fixture {
    async fn sqlite() -> Fixture {
        Fixture::over(TestDb::sqlite().await)
    }

    async fn postgres() -> Fixture {
        Fixture::over(TestDb::postgres().await)
    }

    fn over(test: TestDb) -> Fixture {
        let test = test.with_keys(keys());
        Fixture {
            db: test.db.clone(),
            test,
        }
    }

    /// A new connection pool to the same database: what another worker process has.
    pub async fn other_process(&self) -> Db {
        Db::connect(&self.test.url)
            .await
            .expect("second connection")
            .with_keys(keys())
    }

    /// A session row owned under `fence`, and its device store.
    pub async fn owner(&self, client_id: &str, fence: u64) -> SeaOrmDeviceStore {
        let new = NewSession {
            client_id: client_id.into(),
            ..NewSession::default()
        };
        self.db.create_session(new).await.expect("create session");
        claim(&self.db, client_id, fence).await;
        store(&self.db, client_id, fence)
    }

    async fn finish(self) {
        drop(self.db);
        self.test.finish().await;
    }
}

/// Records `fence` as the session's owner token (what a new owner does on claim).
pub(super) async fn claim(db: &Db, client_id: &str, fence: u64) {
    let recorded = db
        .fenced_update(client_id, fence, StatePatch::default())
        .await
        .expect("fenced update");
    assert!(recorded, "fence {fence} should be current for {client_id}");
}

/// The store of `client_id` as a process of its own opens it: on SQLite its
/// hot writes go through a writer of its own (`group_commit`).
pub(super) fn store(db: &Db, client_id: &str, fence: u64) -> SeaOrmDeviceStore {
    super::OpenStores::default()
        .open(db, client_id, fence)
        .expect("store")
}

/// The store is a whatsapp-rust `Backend` (all five traits), usable as `Arc<dyn Backend>`.
#[test]
fn the_store_is_a_backend() {
    fn backend(store: SeaOrmDeviceStore) -> std::sync::Arc<dyn Backend> {
        std::sync::Arc::new(store)
    }
    let _ = backend;
}

/// Expands every case into one `#[tokio::test]` per adapter.
macro_rules! contract {
    (adapters: [$($adapter:ident),+], cases: $cases:tt) => {
        $( contract!(@adapter $adapter $cases); )+
    };
    (@adapter $adapter:ident [$($group:ident :: $case:ident),+ $(,)?]) => {
        mod $adapter {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let fixture = super::Fixture::$adapter().await;
                    super::$group::$case(&fixture).await;
                    fixture.finish().await;
                }
            )+
        }
    };
}

contract! {
    adapters: [sqlite, postgres],
    cases: [
        device::device_round_trips_every_field,
        device::create_keeps_an_existing_device,
        device::private_keys_are_sealed_and_rekeyed,
        device::a_save_writes_the_clients_latest_state,
        device::a_change_the_librarys_saver_missed_is_saved_by_the_connection,
        signal::identities_round_trip,
        signal::sessions_round_trip,
        signal::prekeys_round_trip,
        signal::signed_prekeys_round_trip,
        signal::sender_keys_round_trip,
        signal::records_are_sealed_and_rekeyed,
        app_sync::sync_keys_round_trip,
        app_sync::versions_round_trip,
        app_sync::mutation_macs_round_trip,
        protocol::sender_key_devices_round_trip,
        protocol::lid_mappings_round_trip,
        protocol::base_keys_round_trip,
        protocol::device_lists_round_trip,
        protocol::group_metadata_round_trips,
        protocol::tc_tokens_round_trip,
        protocol::tc_token_upserts_keep_each_writers_field,
        messages::sent_messages_round_trip,
        messages::pending_inbound_round_trip,
        messages::pending_rows_are_written_with_the_state_after_them,
        messages::msg_secrets_round_trip,
        messages::group_authors_round_trip,
        fencing::stale_owner_writes_are_rejected_and_change_nothing,
        fencing::writes_without_a_session_are_rejected,
        fencing::another_process_reads_what_one_wrote,
        fencing::clients_do_not_see_each_other,
        fencing::concurrent_take_sent_message_yields_once,
        fencing::forget_removes_every_row,
        fencing::retiring_a_logged_out_device_removes_it_for_good,
        fencing::a_stale_owner_cannot_retire_the_device,
        fencing::forgetting_stops_every_open_store_after_its_write_under_way,
        group_commit::many_sessions_write_at_once_and_a_stale_one_is_refused_alone,
        group_commit::a_received_messages_signal_writes_are_all_batched,
        tc_cache::tokens_read_from_memory_follow_every_write,
    ]
}
