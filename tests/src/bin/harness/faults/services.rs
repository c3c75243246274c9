//! The fault run's own PostgreSQL, Redis, NATS and S3 servers (never the
//! machine's shared ones, which other tests use), and the faults done to them.
use std::path::Path;
use std::time::Duration;

use parley_tests::nats_server::NatsServer;
use parley_tests::postgres_server::PostgresServer;
use parley_tests::redis_server::RedisServer;
use parley_tests::s3_server::S3Server;
use parley_tests::services::Endpoints;

pub struct Private {
    postgres: PostgresServer,
    redis: RedisServer,
    nats: NatsServer,
    s3: S3Server,
}

impl Private {
    /// Starts the four under `dir`; each answers when this returns.
    pub async fn start(dir: &Path) -> Private {
        let (postgres_dir, nats_dir) = (dir.join("postgres"), dir.join("nats"));
        let (postgres, redis, nats, s3) = tokio::join!(
            PostgresServer::start(&postgres_dir),
            RedisServer::start(),
            NatsServer::start(&nats_dir),
            S3Server::start(),
        );
        Private {
            postgres,
            redis,
            nats,
            s3,
        }
    }

    pub fn endpoints(&self) -> Endpoints {
        Endpoints {
            postgres_admin: self.postgres.admin_url(),
            nats: self.nats.url(),
            redis: self.redis.url(),
            s3: self.s3.url(),
        }
    }

    /// Redis killed, and started again empty (no persistence): every lease,
    /// fencing counter and membership is gone.
    pub async fn empty_redis(&mut self, down: Duration) {
        self.redis.kill().await;
        tokio::time::sleep(down).await;
        self.redis.restart().await;
    }

    /// NATS killed and started again on the same store (JetStream keeps
    /// what it wrote to disk).
    pub async fn restart_nats(&mut self, down: Duration) {
        self.nats.kill().await;
        tokio::time::sleep(down).await;
        self.nats.restart().await;
    }

    /// PostgreSQL stopped as a crash stops it, and started again (recovery
    /// from its WAL).
    pub async fn restart_postgres(&mut self, down: Duration) {
        self.postgres.crash();
        tokio::time::sleep(down).await;
        self.postgres.up().await;
    }

    /// The S3 server answers nothing for `down` (SIGSTOP, then SIGCONT).
    pub async fn pause_s3(&mut self, down: Duration) {
        self.s3.pause();
        tokio::time::sleep(down).await;
        self.s3.resume();
    }
}
