//! A Redis of a test's own (the packaged `redis-server`), without persistence,
//! for tests that kill it and start it again: it comes back on the same port
//! with no data, as a Redis restarted without persistence does.
use std::process::Stdio;

use tokio::process::{Child, Command};

use crate::packaged::{binary, kill, wait_until_answering};
use crate::process::free_port;

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
        kill(&mut self.child).await;
    }

    /// Starts it again, empty, on the same port.
    pub async fn restart(&mut self) {
        self.kill().await;
        let child = Command::new(binary("redis-server", "/usr/bin/redis-server"))
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start redis-server");
        self.child = Some(child);
        wait_until_answering("redis-server", self.port, || self.answers()).await;
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
