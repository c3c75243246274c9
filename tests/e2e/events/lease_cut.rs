//! A worker cut off from the lease store (its Redis connection goes through
//! a relay the test cuts) while contacts write to the three sessions it
//! runs: it closes them before its membership lapses, and the other worker
//! takes them over once it has, without waiting for the sessions' leases.
//! No session runs on two workers at once, and every message answered 200
//! is logged and reaches the webhook.
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parley_tests::receiver::Receiver;
use parley_tests::relay::{self, Relay};
use serde_json::json;

use super::ownership::{Runs, Writers, delivered_and_logged, overlap, runs};
use super::support::*;
use crate::support::*;

const SESSIONS: [&str; 3] = ["rc1", "rc2", "rc3"];

/// Whether every session of `SESSIONS` runs in `runs` now.
fn all_running(runs: &Runs) -> bool {
    SESSIONS.iter().all(|id| {
        runs.get(*id)
            .and_then(|spans| spans.last())
            .is_some_and(|(_, end)| end.is_none())
    })
}

#[tokio::test]
async fn a_worker_cut_off_from_the_lease_store_hands_its_sessions_over_without_a_double_owner() {
    let dir = tempfile::tempdir().unwrap();
    let env = services::ClusterEnv::new().await;
    let mut all = env.vars();
    all.extend(vars(&[
        ("PARLEY_ACCOUNT_TOKEN", TOKEN),
        ("PARLEY_NETWORK", "sandbox"),
    ]));
    all.extend(vars(EVENT_VARS));
    let (ok, out) = parley_tests::process::run_once(bin(), &["migrate"], dir.path(), &all).await;
    assert!(ok, "migrate: {out}");
    let redis = Relay::start(&relay::authority(&services::redis_url())).await;
    let worker = |name: &str, cut_off: bool| {
        let mut vars = all.clone();
        if cut_off {
            for (key, value) in &mut vars {
                if key == "PARLEY_REDIS_URL" {
                    *value = relay::through(value, &redis);
                }
            }
        }
        vars.push(("PARLEY_POD_NAME".into(), name.into()));
        vars
    };
    // Every session starts on worker-a, the only worker then.
    let a = Parley::start(bin(), &["worker"], dir.path(), &worker("worker-a", true)).await;
    let api = Arc::new(Parley::start(bin(), &["api"], dir.path(), &all).await);
    let mut rx = Receiver::start().await;
    for id in SESSIONS {
        hooked(&api, id, &rx.url, json!({})).await;
    }
    contact(&api).await;
    let b = Parley::start(bin(), &["worker"], dir.path(), &worker("worker-b", false)).await;

    let writers = Writers::start(&api, &SESSIONS);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let cut = Instant::now();
    redis.cut();
    eventually(20, "every session running on worker-b", || async {
        all_running(&runs(&b.output())).then_some(())
    })
    .await;
    let moved = cut.elapsed();
    // Its readiness names the lease store as down.
    let (status, ready) = json(client().get(a.url("/health/ready")).send().await.unwrap()).await;
    let flags = (status, &ready["leases"], &ready["status"]);
    assert_eq!(flags, (200, &json!(false), &json!("degraded")), "{ready}");
    // Messages keep flowing on worker-b for a while.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (wanted, refused) = writers.stop().await;
    let (on_a, on_b) = (runs(&a.output()), runs(&b.output()));
    let doubled: BTreeMap<&str, Duration> = SESSIONS
        .iter()
        .map(|id| (*id, overlap(&on_a, &on_b, id)))
        .collect();
    assert!(
        SESSIONS.iter().all(|id| on_a
            .get(*id)
            .is_some_and(|spans| spans.iter().all(|(_, end)| end.is_some()))),
        "worker-a stopped every session: {on_a:?}"
    );
    assert!(
        doubled.values().all(Duration::is_zero),
        "two workers ran one session: {doubled:?}"
    );
    let duplicates = delivered_and_logged(&api, &mut rx, &wanted, &SESSIONS, &doubled).await;
    println!(
        "lease store cut off from one worker: its sessions running elsewhere {moved:?} after the cut; \
         {} accepted, {refused} refused (retryable), 0 lost, {duplicates} duplicates, no double owner",
        wanted.len()
    );
}
