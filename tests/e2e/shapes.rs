//! The two shapes a contract test runs on: one `parley serve`, and a cluster of
//! one `parley api` and two `parley worker` processes on the real PostgreSQL,
//! NATS, Redis and S3. Both on the suite's network (the sandbox, or the test
//! network with `PARLEY_E2E_NETWORK=wire`) with the same settings.
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Serve,
    Cluster,
}

/// A running deployment of one shape; `api` takes every request.
pub struct Deployment {
    pub api: Parley,
    /// The cluster's workers with their pod names (empty for `serve`).
    pub workers: Vec<(String, Parley)>,
    pub shape: Shape,
}

impl Deployment {
    /// Starts `shape` in `dir` with `more` `PARLEY_*` variables.
    pub async fn start(shape: Shape, dir: &Path, more: &[(&str, &str)]) -> Deployment {
        match shape {
            Shape::Serve => Deployment {
                api: serve_with(dir, more).await,
                workers: Vec::new(),
                shape,
            },
            Shape::Cluster => {
                let env = services::ClusterEnv::new().await;
                let mut all = env.vars();
                all.extend(vars(&[("PARLEY_ACCOUNT_TOKEN", TOKEN)]));
                all.extend(network_vars(dir));
                all.extend(vars(more));
                let (ok, out) =
                    parley_tests::process::run_once(gateway_bin(), &["migrate"], dir, &all).await;
                assert!(ok, "migrate: {out}");
                let mut workers = Vec::new();
                for pod in ["worker-0", "worker-1"] {
                    let mut v = all.clone();
                    v.push(("PARLEY_POD_NAME".into(), pod.into()));
                    workers.push((
                        pod.to_string(),
                        Parley::start(gateway_bin(), &["worker"], dir, &v).await,
                    ));
                }
                let mut v = all;
                v.push(("PARLEY_POD_NAME".into(), "api-0".into()));
                let api = Parley::start(gateway_bin(), &["api"], dir, &v).await;
                Deployment {
                    api,
                    workers,
                    shape,
                }
            }
        }
    }

    /// The worker pod that owns `id` now, as `/clients` tells.
    pub async fn owner(&self, id: &str) -> String {
        let (status, body) = get(&self.api, &format!("/clients?clientId={id}")).await;
        assert_eq!(status, 200, "{body}");
        body["clients"][0]["podName"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Cluster only: stops (SIGTERM) the worker that owns `id` and waits until
    /// `id` is connected on the other one; returns the new owner.
    pub async fn move_session(&mut self, id: &str) -> String {
        assert_eq!(self.shape, Shape::Cluster, "only a cluster moves sessions");
        let from = self.owner(id).await;
        let at = self
            .workers
            .iter()
            .position(|(pod, _)| *pod == from)
            .unwrap_or_else(|| panic!("{id} is owned by {from:?}, not a worker of this cluster"));
        let (_, mut worker) = self.workers.remove(at);
        worker.terminate().await;
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            let (_, state) = post(&self.api, "/check-state", json!({"clientId": id})).await;
            let owner = self.owner(id).await;
            if state["status"] == true && !owner.is_empty() && owner != from {
                return owner;
            }
            assert!(
                Instant::now() < until,
                "{id} not connected on another worker within 30 s (state {state}, owner {owner})"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
