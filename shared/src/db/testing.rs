//! Fresh, migrated databases for tests of any crate (feature `testing`): a
//! SQLite file in a temporary directory, or a PostgreSQL database of its own
//! on the server the test script started, dropped again by [`TestDb::finish`].
//! A missing PostgreSQL fails the test: it never passes silently.
use sea_orm::ConnectionTrait;

use super::Db;

/// A migrated database private to one test.
pub struct TestDb {
    pub db: Db,
    /// Where it is: another pool to it is another process's view.
    pub url: String,
    /// SQLite: the directory of the file, removed on drop.
    _dir: Option<tempfile::TempDir>,
    /// PostgreSQL: the admin connection and the database to drop.
    pg_admin: Option<(Db, String)>,
}

/// The NATS server with JetStream the test script started
/// (`PARLEY_TEST_NATS_URL`).
pub fn nats_url() -> String {
    std::env::var("PARLEY_TEST_NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".into())
}

/// A PostgreSQL URL of a server where the test may create databases
/// (`PARLEY_TEST_POSTGRES_URL`, exported by the test script).
pub fn postgres_admin_url() -> String {
    std::env::var("PARLEY_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

impl TestDb {
    pub async fn sqlite() -> TestDb {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}", dir.path().join("parley.db").display());
        let db = Db::connect(&url).await.expect("open SQLite");
        db.migrate().await.expect("migrate SQLite");
        TestDb {
            db,
            url,
            _dir: Some(dir),
            pg_admin: None,
        }
    }

    pub async fn postgres() -> TestDb {
        let admin_url = postgres_admin_url();
        let admin = Db::connect(&admin_url)
            .await
            .unwrap_or_else(|e| panic!("PostgreSQL is required at {admin_url}: {e}"));
        let name = format!("parley_test_{}", uuid::Uuid::new_v4().simple());
        admin
            .conn()
            .execute_unprepared(&format!("CREATE DATABASE {name}"))
            .await
            .expect("create test database");
        let mut url = url::Url::parse(&admin_url).expect("PostgreSQL URL");
        url.set_path(&name);
        let url = url.to_string();
        let db = Db::connect(&url).await.expect("open test database");
        db.migrate().await.expect("migrate PostgreSQL");
        TestDb {
            db,
            url,
            _dir: None,
            pg_admin: Some((admin, name)),
        }
    }

    /// PostgreSQL with event bodies in a JetStream stream of its own (the
    /// cluster's layout), deleted by [`TestDb::finish`].
    pub async fn postgres_stream() -> TestDb {
        use crate::event_stream::{EventStream, StreamSettings};
        let url = nats_url();
        let client = async_nats::connect(&url)
            .await
            .unwrap_or_else(|e| panic!("NATS with JetStream is required at {url}: {e}"));
        let cluster = format!("t{}", uuid::Uuid::new_v4().simple());
        let settings = StreamSettings {
            max_age: std::time::Duration::from_secs(3600),
            max_bytes: 64 << 20,
            replicas: 1,
        };
        let stream = EventStream::open(client, &cluster, &settings)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let mut fixture = TestDb::postgres().await;
        fixture.db = fixture.db.with_event_stream(stream);
        fixture
    }

    /// Seals secrets with `keys` from now on.
    pub fn with_keys(mut self, keys: crate::store_keys::StoreKeys) -> TestDb {
        self.db = self.db.with_keys(keys);
        self
    }

    /// Closes the database and drops a PostgreSQL one (and its event stream).
    pub async fn finish(self) {
        if let Some(stream) = self.db.event_stream() {
            stream
                .delete()
                .await
                .expect("delete the test's event stream");
        }
        drop(self.db);
        if let Some((admin, name)) = self.pg_admin {
            admin
                .conn()
                .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .await
                .expect("drop test database");
        }
    }
}

/// Expands every case (an `async fn(&Db)` in scope) into one
/// `#[tokio::test]` per adapter, on a fresh database:
/// `<module>::<adapter>::<case>`.
#[macro_export]
macro_rules! db_contract {
    (adapters: [$($adapter:ident),+], cases: $cases:tt) => {
        $( $crate::db_contract!(@adapter $adapter $cases); )+
    };
    (@adapter $adapter:ident [$($case:ident),+ $(,)?]) => {
        mod $adapter {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let fixture = $crate::db::testing::TestDb::$adapter().await;
                    super::$case(&fixture.db).await;
                    fixture.finish().await;
                }
            )+
        }
    };
}
