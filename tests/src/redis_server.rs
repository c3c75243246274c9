//! A Redis of a test's own (the packaged `redis-server`), without persistence,
//! for tests that kill it and start it again: it comes back on the same port
//! with no data, as a Redis restarted without persistence does.
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::process::{Child, Command};

use crate::process::free_port;

/// The `redis-server` binary: on PATH, or where Debian's package puts it.
fn binary() -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join("redis-server"))
        .find(|p| p.is_file());
    on_path
        .or_else(|| Some(PathBuf::from("/usr/bin/redis-server")).filter(|p| p.is_file()))
        .expect("redis-server is required (the test script installs it)")
}

pub struct RedisServer {
    child: Option<Child>,
    pub port: u16,
}

impl RedisServer {
    /// Starts a server; waits until it answers.
    pub async fn start() -> RedisServer {
        let mut server = RedisServer {
            child: None,
            port: free_port(),
        };
        server.restart().await;
        server
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Kills the server (SIGKILL): everything it held is gone.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
    }

    /// Starts it again, empty, on the same port.
    pub async fn restart(&mut self) {
        self.kill().await;
        let child = Command::new(binary())
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start redis-server");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while !self.answers().await {
            assert!(
                Instant::now() < deadline,
                "redis-server did not start on {}",
                self.port
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn answers(&self) -> bool {
        let Ok(client) = redis::Client::open(self.url()) else {
            return false;
        };
        let Ok(mut connection) = client.get_multiplexed_async_connection().await else {
            return false;
        };
        redis::cmd("PING")
            .query_async::<String>(&mut connection)
            .await
            .is_ok()
    }
}
