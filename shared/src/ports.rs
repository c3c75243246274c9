//! Builds the adapters of every port from the configuration.
use std::sync::Arc;

use crate::bus::Bus;
use crate::bus::memory::MemoryBus;
use crate::bus::nats::NatsBus;
use crate::config::Config;
use crate::db::Db;
use crate::event_stream::EventStream;
use crate::lease::Leases;
use crate::lease::memory::MemoryLeases;
use crate::lease::redis::RedisLeases;
use crate::media::MediaStore;
use crate::media::fs::FsMediaStore;
use crate::media::s3::S3MediaStore;
use crate::store_keys::StoreKeys;

/// The connected adapters one process uses. Cheap to clone: `serve` hands the
/// same in-process bus and leases to its API and its worker.
#[derive(Clone)]
pub struct Ports {
    pub db: Db,
    pub bus: Arc<dyn Bus>,
    pub leases: Arc<dyn Leases>,
    pub media: Arc<dyn MediaStore>,
}

impl Ports {
    /// Connects every configured service; unset ones get the embedded adapter.
    /// Does not migrate the database.
    pub async fn connect(config: &Config) -> anyhow::Result<Ports> {
        let keys = config.store_keys()?.unwrap_or_else(StoreKeys::none);
        let db = Db::connect(&config.database_url())
            .await
            .map_err(|e| anyhow::anyhow!("PARLEY_DATABASE_URL: {e}"))?
            .with_keys(keys);
        let (bus, db): (Arc<dyn Bus>, Db) = match &config.nats_url {
            Some(url) => {
                let bus = NatsBus::connect(url, &config.cluster_name)
                    .await
                    .map_err(|e| anyhow::anyhow!("PARLEY_NATS_URL: {e}"))?;
                // Event bodies go to the cluster's JetStream stream.
                let stream =
                    EventStream::open(bus.client(), &config.cluster_name, &config.event_stream())
                        .await
                        .map_err(|e| anyhow::anyhow!("PARLEY_NATS_URL: {e}"))?;
                (Arc::new(bus), db.with_event_stream(stream))
            }
            None => (Arc::new(MemoryBus::new(&config.cluster_name)), db),
        };
        let leases: Arc<dyn Leases> = match &config.redis_url {
            Some(url) => Arc::new(
                RedisLeases::connect(url, &config.cluster_name)
                    .await
                    .map_err(|e| anyhow::anyhow!("PARLEY_REDIS_URL: {e}"))?,
            ),
            None => Arc::new(MemoryLeases::new()),
        };
        let media: Arc<dyn MediaStore> = match config.s3()? {
            Some(s3) => Arc::new(
                S3MediaStore::new(s3)
                    .await
                    .map_err(|e| anyhow::anyhow!("PARLEY_S3_ENDPOINT: {e}"))?,
            ),
            None => Arc::new(FsMediaStore::new(
                config.data_dir.join("media"),
                &config.public_url(),
            )),
        };
        Ok(Ports {
            db,
            bus,
            leases,
            media,
        })
    }
}
