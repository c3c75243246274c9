//! What the tests' own server processes share (the packaged `nats-server`
//! and `redis-server` a test stops and starts again): finding the binary,
//! killing the child, and waiting until it answers.
use std::future::Future;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use tokio::process::Child;

/// `name` on PATH, or at `debian`, where Debian's package puts it.
pub fn binary(name: &str, debian: &str) -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join(name))
        .find(|p| p.is_file());
    on_path
        .or_else(|| Some(PathBuf::from(debian)).filter(|p| p.is_file()))
        .unwrap_or_else(|| panic!("{name} is required (the test script installs it)"))
}

/// Kills the child, if one runs (SIGKILL: no orderly shutdown).
pub async fn kill(child: &mut Option<Child>) {
    if let Some(mut child) = child.take() {
        let _ = child.kill().await;
    }
}

/// Polls `answers` until it is true; fails the test after 20 s.
pub async fn wait_until_answering<F, Fut>(what: &str, port: u16, mut answers: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(20);
    while !answers().await {
        assert!(Instant::now() < deadline, "{what} did not start on {port}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
