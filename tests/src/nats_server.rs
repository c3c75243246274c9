//! A NATS server with JetStream of a test's own (the packaged `nats-server`),
//! for tests that stop and restart it: its store directory and port survive
//! a restart, so what JetStream stored before is there again after.
use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::process::{Child, Command};

use crate::packaged::{binary, kill, wait_until_answering};
use crate::process::free_port;

pub struct NatsServer {
    child: Option<Child>,
    pub port: u16,
    store: PathBuf,
}

impl NatsServer {
    /// Starts a server keeping JetStream's files under `store`; waits until it
    /// accepts connections.
    pub async fn start(store: &Path) -> NatsServer {
        let mut server = NatsServer {
            child: None,
            port: free_port(),
            store: store.to_path_buf(),
        };
        server.restart().await;
        server
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Kills the server (SIGKILL: no orderly shutdown).
    pub async fn kill(&mut self) {
        kill(&mut self.child).await;
    }

    /// Starts it again on the same port and store.
    pub async fn restart(&mut self) {
        self.kill().await;
        let child = Command::new(binary("nats-server", "/usr/sbin/nats-server"))
            .args([
                "-a",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-js",
                "-sd",
            ])
            .arg(&self.store)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start nats-server");
        self.child = Some(child);
        let url = &self.url();
        wait_until_answering("nats-server", self.port, || async move {
            async_nats::connect(url.as_str()).await.is_ok()
        })
        .await;
    }
}
