//! A NATS server with JetStream of a test's own (the packaged `nats-server`),
//! for tests that stop and restart it: its store directory and port survive
//! a restart, so what JetStream stored before is there again after.
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::process::{Child, Command};

use crate::process::free_port;

/// The `nats-server` binary: on PATH, or where Debian's package puts it.
fn binary() -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join("nats-server"))
        .find(|p| p.is_file());
    on_path
        .or_else(|| Some(PathBuf::from("/usr/sbin/nats-server")).filter(|p| p.is_file()))
        .expect("nats-server is required (the test script installs it)")
}

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
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
    }

    /// Starts it again on the same port and store.
    pub async fn restart(&mut self) {
        self.kill().await;
        let child = Command::new(binary())
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
        let deadline = Instant::now() + Duration::from_secs(20);
        while async_nats::connect(self.url()).await.is_err() {
            assert!(
                Instant::now() < deadline,
                "nats-server did not start on {}",
                self.port
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
