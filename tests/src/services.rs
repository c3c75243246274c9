//! The real services the tests talk to (started by the project's test script),
//! and fresh isolated state in them per test: a database, a bucket, a prefix.

pub fn nats_url() -> String {
    std::env::var("PARLEY_TEST_NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".into())
}

pub fn redis_url() -> String {
    std::env::var("PARLEY_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

pub fn postgres_admin_url() -> String {
    std::env::var("PARLEY_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

pub fn s3_endpoint() -> String {
    std::env::var("PARLEY_TEST_S3_ENDPOINT").unwrap_or_else(|_| "http://127.0.0.1:9000".into())
}

/// A name nothing else uses (cluster names, databases, buckets).
pub fn unique(prefix: &str) -> String {
    format!("{prefix}{}", uuid::Uuid::new_v4().simple())
}

/// Creates an empty PostgreSQL database and returns its URL.
/// Panics (fails the test) when PostgreSQL is unreachable.
pub async fn fresh_postgres() -> String {
    fresh_database(&postgres_admin_url()).await
}

/// Creates an empty database on the server `admin` names and returns its URL.
pub async fn fresh_database(admin: &str) -> String {
    use parley_shared::db::Db;
    use sea_orm_helpers::execute;
    let name = unique("parley_e2e_");
    let db = Db::connect(admin)
        .await
        .unwrap_or_else(|e| panic!("PostgreSQL at {admin} is required: {e}"));
    execute(&db, &format!("CREATE DATABASE {name}")).await;
    database_url(admin, &name)
}

/// `admin` with its database replaced by `name`, keeping its query (`sslmode`...).
fn database_url(admin: &str, name: &str) -> String {
    let (path, query) = match admin.split_once('?') {
        Some((path, query)) => (path, format!("?{query}")),
        None => (admin, String::new()),
    };
    let base = path.rsplit_once('/').map_or(path, |(b, _)| b);
    format!("{base}/{name}{query}")
}

mod sea_orm_helpers {
    use parley_shared::db::Db;

    pub async fn execute(db: &Db, sql: &str) {
        use parley_shared::db::ConnectionTrait;
        db.conn()
            .execute_unprepared(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

/// Where a cluster's services listen.
#[derive(Clone, Debug)]
pub struct Endpoints {
    pub postgres_admin: String,
    pub nats: String,
    pub redis: String,
    pub s3: String,
}

impl Endpoints {
    /// The machine's services the test script brought up (`PARLEY_TEST_*`).
    pub fn shared() -> Endpoints {
        Endpoints {
            postgres_admin: postgres_admin_url(),
            nats: nats_url(),
            redis: redis_url(),
            s3: s3_endpoint(),
        }
    }
}

/// Environment for a cluster role against the real services, isolated by a fresh
/// database, bucket and cluster name.
pub struct ClusterEnv {
    pub endpoints: Endpoints,
    pub database_url: String,
    pub cluster_name: String,
    pub bucket: String,
    /// `PARLEY_STORE_KEYS` of this cluster: one fresh key.
    pub store_keys: String,
}

impl ClusterEnv {
    pub async fn new() -> ClusterEnv {
        sweep_old_streams().await;
        ClusterEnv::on(Endpoints::shared()).await
    }

    /// A cluster on the services `endpoints` names (a run's own).
    pub async fn on(endpoints: Endpoints) -> ClusterEnv {
        ClusterEnv {
            database_url: fresh_database(&endpoints.postgres_admin).await,
            endpoints,
            cluster_name: unique("t"),
            bucket: unique("parley-e2e-"),
            store_keys: parley_shared::store_keys::StoreKeys::generate_entry("k1"),
        }
    }

    /// `PARLEY_*` variables of a process of this cluster.
    pub fn vars(&self) -> Vec<(String, String)> {
        [
            ("PARLEY_DATABASE_URL", self.database_url.clone()),
            ("PARLEY_NATS_URL", self.endpoints.nats.clone()),
            ("PARLEY_REDIS_URL", self.endpoints.redis.clone()),
            ("PARLEY_S3_ENDPOINT", self.endpoints.s3.clone()),
            ("PARLEY_S3_BUCKET", self.bucket.clone()),
            ("PARLEY_S3_REGION", "eu-west-1".into()),
            ("PARLEY_S3_ACCESS_KEY", "test".into()),
            ("PARLEY_S3_SECRET_KEY", "test".into()),
            ("PARLEY_CLUSTER_NAME", self.cluster_name.clone()),
            ("PARLEY_STORE_KEYS", self.store_keys.clone()),
            // JetStream reserves a stream's limit on the shared server.
            ("PARLEY_EVENT_STREAM_MAX_BYTES", (64u64 << 20).to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// Whether `name` is the event stream of a test cluster (`t<uuid>-events`)
/// or of a cluster the docs checker started (`docs<10 hex>-events`).
fn test_stream(name: &str) -> bool {
    let hex = |id: &str, len: usize| id.len() == len && id.bytes().all(|b| b.is_ascii_hexdigit());
    let Some(name) = name.strip_suffix("-events") else {
        return false;
    };
    name.strip_prefix('t').is_some_and(|id| hex(id, 32))
        || name.strip_prefix("docs").is_some_and(|id| hex(id, 10))
}

/// Deletes test clusters' event streams older than two hours from the shared
/// NATS server: the processes that wrote them are gone, and a whole test run
/// takes far less. (A cluster's processes create its stream, so no test
/// deletes it while they may still run.)
async fn sweep_old_streams() {
    use futures::TryStreamExt;
    let Ok(client) = async_nats::connect(nats_url()).await else {
        return; // the cluster's own start reports NATS missing
    };
    let js = async_nats::jetstream::new(client);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let cutoff = now - 2 * 3600;
    let infos: Vec<_> = js.streams().try_collect().await.unwrap_or_default();
    for info in infos {
        if test_stream(&info.config.name) && info.created.unix_timestamp() < cutoff {
            let _ = js.delete_stream(&info.config.name).await;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_fresh_database_keeps_the_admin_urls_options() {
        assert_eq!(
            super::database_url("postgres://postgres@127.0.0.1:5432/postgres", "db1"),
            "postgres://postgres@127.0.0.1:5432/db1"
        );
        assert_eq!(
            super::database_url("postgres://u@h:5432/postgres?sslmode=disable", "db1"),
            "postgres://u@h:5432/db1?sslmode=disable"
        );
    }

    #[test]
    fn only_test_clusters_streams_are_swept() {
        assert!(super::test_stream(&format!(
            "t{}-events",
            uuid::Uuid::new_v4().simple()
        )));
        assert!(super::test_stream("docsabde863c04-events"));
        assert!(!super::test_stream("parley-events"));
        assert!(!super::test_stream("docs-events"));
        assert!(!super::test_stream("tshop-events"));
    }
}
