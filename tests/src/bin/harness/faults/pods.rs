//! The cluster's pods as an orchestrator sees them: each restarts in place
//! (SIGTERM, wait for its exit, start the same role with the same settings),
//! and the API pods are in a rotation the load balancer sends requests to,
//! which a pod leaves before its stop and joins again once ready.
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use parley_tests::Parley;

pub struct Pod {
    pub label: String,
    role: &'static str,
    vars: Vec<(String, String)>,
    pub process: Parley,
    /// The logs of the processes this pod ran before its restarts.
    earlier_logs: Vec<PathBuf>,
}

impl Pod {
    pub async fn start(
        bin: &Path,
        dir: &Path,
        role: &'static str,
        label: String,
        mut vars: Vec<(String, String)>,
    ) -> Pod {
        vars.push(("PARLEY_POD_NAME".into(), label.clone()));
        let process = Parley::start(bin, &[role], dir, &vars).await;
        Pod {
            label,
            role,
            vars,
            process,
            earlier_logs: Vec::new(),
        }
    }

    /// SIGTERM, then the same role started again once it exited (on new
    /// ports, so its old log is kept); fails when it did not exit cleanly.
    pub async fn restart(&mut self, bin: &Path) -> anyhow::Result<()> {
        let code = self.process.terminate().await;
        anyhow::ensure!(
            code == Some(0),
            "{} exited with {code:?} on SIGTERM",
            self.label
        );
        let dir = self.process.dir.clone();
        let fresh = Parley::start(bin, &[self.role], &dir, &self.vars).await;
        let old = std::mem::replace(&mut self.process, fresh);
        self.earlier_logs.push(old.log.clone());
        Ok(())
    }

    /// Everything every process of this pod logged, oldest first.
    pub fn logs(&self) -> String {
        let mut all = String::new();
        for path in self.earlier_logs.iter().chain([&self.process.log]) {
            all.push_str(&std::fs::read_to_string(path).unwrap_or_default());
        }
        all
    }

    /// Waits until the pod says it is ready with every dependency (`status:
    /// ok`); returns its last answer when the deadline passes.
    pub async fn ready(&self, http: &reqwest::Client, within: Duration) -> anyhow::Result<()> {
        let until = Instant::now() + within;
        loop {
            let answer = ready(http, &self.process.base).await;
            if answer["status"] == "ok" {
                return Ok(());
            }
            anyhow::ensure!(
                Instant::now() < until,
                "{} not ready within {within:?}: {answer}",
                self.label
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// `/health/ready` of the pod at `base` (null when it does not answer).
pub async fn ready(http: &reqwest::Client, base: &str) -> serde_json::Value {
    let res = http
        .get(format!("{base}/health/ready"))
        .timeout(Duration::from_secs(5))
        .send()
        .await;
    match res {
        Ok(r) => r.json().await.unwrap_or_default(),
        Err(_) => serde_json::Value::Null,
    }
}

/// The API pods requests go to, as a load balancer's endpoint list.
#[derive(Clone, Default)]
pub struct Rotation(Arc<RwLock<Vec<String>>>);

impl Rotation {
    /// The base URL of request `n`'s pod (round robin).
    pub fn pick(&self, n: usize) -> String {
        let bases = self.0.read().unwrap_or_else(|e| e.into_inner());
        bases[n % bases.len()].clone()
    }

    pub fn join(&self, base: &str) {
        self.0
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .push(base.to_string());
    }

    pub fn leave(&self, base: &str) {
        self.0
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|b| b != base);
    }
}
