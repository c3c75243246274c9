//! The cluster for real: two `parley api` and three `parley worker` processes on
//! real NATS, Redis and PostgreSQL. Sessions spread, commands reach owners through
//! any API process, and sessions move on SIGKILL, SIGTERM and when a worker joins,
//! never driven by two workers at once.
use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::*;

struct Cluster {
    dir: tempfile::TempDir,
    vars: Vec<(String, String)>,
    apis: Vec<Parley>,
    workers: Vec<(String, Parley)>,
    database_url: String,
}

impl Cluster {
    async fn start(workers: usize) -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let env = services::ClusterEnv::new().await;
        let mut vars = env.vars();
        vars.extend(super::support::vars(&[
            ("PARLEY_ACCOUNT_TOKEN", TOKEN),
            ("PARLEY_NETWORK", "sandbox"),
            ("PARLEY_SANDBOX_QR_FIRST_SECS", "60"),
        ]));
        let (ok, out) =
            parley_tests::process::run_once(bin(), &["migrate"], dir.path(), &vars).await;
        assert!(ok, "migrate: {out}");
        let mut c = Cluster {
            dir,
            vars,
            apis: Vec::new(),
            workers: Vec::new(),
            database_url: env.database_url,
        };
        for i in 0..2 {
            let api = c.spawn("api", &format!("api-{i}")).await;
            c.apis.push(api);
        }
        for i in 0..workers {
            c.add_worker(&format!("worker-{i}")).await;
        }
        c
    }

    async fn spawn(&self, role: &str, pod: &str) -> Parley {
        let mut vars = self.vars.clone();
        vars.push(("PARLEY_POD_NAME".into(), pod.into()));
        Parley::start(bin(), &[role], self.dir.path(), &vars).await
    }

    async fn add_worker(&mut self, pod: &str) {
        let w = self.spawn("worker", pod).await;
        self.workers.push((pod.to_string(), w));
    }

    fn api(&self, i: usize) -> &Parley {
        &self.apis[i % self.apis.len()]
    }

    /// Who owns what, from each live worker's own `/health/clients`.
    async fn owners(&self) -> HashMap<String, Vec<String>> {
        let mut owners = HashMap::new();
        for (pod, w) in &self.workers {
            let (_, body) =
                json(client().get(w.url("/health/clients")).send().await.unwrap()).await;
            let ids = body["clients"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["connected"] == true)
                .map(|c| c["clientId"].as_str().unwrap().to_string())
                .collect();
            owners.insert(pod.clone(), ids);
        }
        owners
    }
}

async fn connected_count(c: &Cluster, ids: &[String]) -> usize {
    let mut n = 0;
    for (i, id) in ids.iter().enumerate() {
        let (_, s) = post(c.api(i), "/check-state", json!({"clientId": id})).await;
        if s["status"] == true {
            n += 1;
        }
    }
    n
}

/// Waits until every session is connected; returns how long it took.
async fn all_connected(c: &Cluster, ids: &[String], secs: u64) -> Duration {
    let t0 = Instant::now();
    loop {
        if connected_count(c, ids).await == ids.len() {
            return t0.elapsed();
        }
        assert!(
            t0.elapsed() < Duration::from_secs(secs),
            "sessions not all connected within {secs}s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The sandbox network's record of connections: never two open at once per session.
async fn assert_single_driver(
    c: &Cluster,
    ids: &[String],
    killed: &[(String, Instant, chrono::DateTime<chrono::Utc>)],
) {
    let db = parley_network_sandbox::store::Store::new(
        parley_shared::db::Db::connect(&c.database_url)
            .await
            .unwrap(),
    );
    for client in ids {
        let mut rows = db.sandbox_connections(client).await.unwrap();
        rows.sort_by_key(|r| r.connected_at);
        for pair in rows.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            // A killed process cannot record its close: it ended at the kill.
            let a_end = a.closed_at.or_else(|| {
                killed
                    .iter()
                    .find(|(pod, _, _)| *pod == a.pod_name)
                    .map(|(_, _, at)| *at)
            });
            let a_end = a_end.unwrap_or_else(|| {
                panic!(
                    "{client}: {} still open when {} connected",
                    a.pod_name, b.pod_name
                )
            });
            assert!(
                a_end <= b.connected_at,
                "{client}: {} and {} overlapped",
                a.pod_name,
                b.pod_name
            );
        }
    }
}

#[tokio::test]
async fn sessions_spread_route_and_fail_over() {
    let mut c = Cluster::start(3).await;
    // Concurrent starts of one session through both API processes: one session, one owner.
    let starts = (0..16).map(|i| post(c.api(i), "/start?clientId=cl0", json!({})));
    for (status, body) in futures::future::join_all(starts).await {
        assert_eq!(status, 200, "{body}");
    }
    let (_, list) = json(
        client()
            .get(c.api(0).url("/clients"))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(list["clients"].as_array().unwrap().len(), 1, "{list}");

    let ids: Vec<String> = (0..30).map(|i| format!("cl{i}")).collect();
    for (i, id) in ids.iter().enumerate() {
        let (status, body) = post(c.api(i), &format!("/start?clientId={id}"), json!({})).await;
        assert_eq!(status, 200, "{body}");
    }
    for (i, id) in ids.iter().enumerate() {
        let phone = format!("49160{:08}", i);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let (status, body) = post(
                c.api(i + 1),
                "/sandbox/link",
                json!({"clientId": id, "phone": phone}),
            )
            .await;
            if status == 200 {
                break;
            }
            assert!(
                status == 409 && Instant::now() < deadline,
                "link {id}: {status} {body}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    all_connected(&c, &ids, 30).await;

    // Spread: nobody owns more than 1.5x its share (10). Claims race while all 30
    // start at once; rebalancing evens out what the race left.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let owners = c.owners().await;
        let total: usize = owners.values().map(Vec::len).sum();
        let spread = owners.values().all(|owned| owned.len() <= 15);
        if total == 30 && spread {
            break;
        }
        assert!(Instant::now() < deadline, "not spread in 60 s: {owners:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // Commands through either API reach the owner.
    for (i, id) in ids.iter().enumerate() {
        let (status, body) = json(
            client()
                .get(c.api(i).url(&format!("/qr?clientId={id}")))
                .bearer_auth(TOKEN)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(
            (status, body["status"].as_str()),
            (200, Some("connected")),
            "{id}"
        );
    }

    // SIGKILL a worker: its sessions come back on the others.
    let (pod, mut victim) = c.workers.remove(0);
    let kill_at = (Instant::now(), chrono::Utc::now());
    victim.kill().await;
    let failover = all_connected(&c, &ids, 25).await;
    // All owned by the two survivors now.
    let mut t = Instant::now();
    loop {
        let owners = c.owners().await;
        if owners.values().map(Vec::len).sum::<usize>() == 30 {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(20), "{owners:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eprintln!("failover after SIGKILL: all sessions connected again in {failover:?}");
    assert!(failover < Duration::from_secs(20), "{failover:?}");
    let killed = vec![(pod, kill_at.0, kill_at.1)];

    // SIGTERM a worker: its sessions move at once (handover, not expiry).
    let (_, mut leaving) = c.workers.remove(0);
    let t0 = Instant::now();
    assert_eq!(leaving.terminate().await, Some(0), "{}", leaving.output());
    let handover = all_connected(&c, &ids, 10).await;
    eprintln!(
        "handover after SIGTERM: worker exited and sessions connected elsewhere in {:?} ({:?} after exit)",
        t0.elapsed(),
        handover
    );
    assert!(handover < Duration::from_secs(3), "{handover:?}");

    // A new worker joins: sessions rebalance to it while commands keep working.
    c.add_worker("worker-9").await;
    t = Instant::now();
    let mut commands = 0;
    loop {
        for (i, id) in ids.iter().enumerate().step_by(3) {
            let (status, body) = json(
                client()
                    .get(c.api(i).url(&format!("/qr?clientId={id}")))
                    .bearer_auth(TOKEN)
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            assert_eq!(status, 200, "command dropped during rebalance: {id} {body}");
            commands += 1;
        }
        let owners = c.owners().await;
        if owners.get("worker-9").map_or(0, Vec::len) >= 10 && connected_count(&c, &ids).await == 30
        {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "no rebalance: {owners:?}"
        );
    }
    eprintln!(
        "rebalance to a new worker: {:?}, {commands} commands answered meanwhile",
        t.elapsed()
    );
    assert_single_driver(&c, &ids, &killed).await;
}
