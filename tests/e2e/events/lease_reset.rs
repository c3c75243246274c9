//! The lease store loses its data under load (the cluster): Redis, without
//! persistence, is killed and started again empty while contacts write to
//! three sessions spread over two workers. Every message answered 200 must
//! be in its session's log and reach the webhook: an owner that a newer one
//! has fenced out refuses what it cannot log (the caller hands it over
//! again), and the owners take their leases back before anyone else may
//! claim. The time two workers report one session connected is measured.
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use parley_tests::receiver::Receiver;
use parley_tests::redis_server::RedisServer;
use serde_json::json;

use super::ownership::{Runs, Writers, delivered_and_logged, overlap, runs};
use super::support::*;
use crate::support::*;

const SESSIONS: [&str; 3] = ["rr1", "rr2", "rr3"];

#[tokio::test]
async fn a_lease_store_that_loses_its_data_loses_no_accepted_message() {
    let dir = tempfile::tempdir().unwrap();
    let mut redis = RedisServer::start().await;
    let env = services::ClusterEnv::new().await;
    let mut all = env.vars();
    all.retain(|(k, _)| k != "PARLEY_REDIS_URL");
    all.extend(vars(&[
        ("PARLEY_REDIS_URL", &redis.url()),
        ("PARLEY_ACCOUNT_TOKEN", TOKEN),
        ("PARLEY_NETWORK", "sandbox"),
    ]));
    all.extend(vars(EVENT_VARS));
    let (ok, out) = parley_tests::process::run_once(bin(), &["migrate"], dir.path(), &all).await;
    assert!(ok, "migrate: {out}");
    let worker = |name: &str| {
        let mut vars = all.clone();
        vars.push(("PARLEY_POD_NAME".into(), name.into()));
        vars
    };
    let workers = [
        Parley::start(bin(), &["worker"], dir.path(), &worker("worker-a")).await,
        Parley::start(bin(), &["worker"], dir.path(), &worker("worker-b")).await,
    ];
    let api = Arc::new(Parley::start(bin(), &["api"], dir.path(), &all).await);
    let mut rx = Receiver::start().await;
    for id in SESSIONS {
        hooked(&api, id, &rx.url, json!({})).await;
    }
    contact(&api).await;

    let writers = Writers::start(&api, &SESSIONS);

    tokio::time::sleep(Duration::from_secs(2)).await;
    redis.kill().await;
    // Down for a while (well within the owners' trust in their leases), so
    // the workers' connections come back at different times.
    tokio::time::sleep(Duration::from_secs(2)).await;
    redis.restart().await;
    // Past the owners' renewals, the store's settling time and any claim.
    tokio::time::sleep(Duration::from_secs(14)).await;
    let (wanted, refused) = writers.stop().await;
    let runs: Vec<Runs> = workers.iter().map(|w| runs(&w.output())).collect();
    let doubled: BTreeMap<&str, Duration> = SESSIONS
        .iter()
        .map(|id| (*id, overlap(&runs[0], &runs[1], id)))
        .collect();

    let duplicates = delivered_and_logged(&api, &mut rx, &wanted, &SESSIONS, &doubled).await;
    println!(
        "lease store reset: {} accepted, {refused} refused (retryable), 0 lost, {duplicates} duplicates; \
         two workers ran one session for: {doubled:?}",
        wanted.len()
    );
    for id in SESSIONS {
        let running = runs
            .iter()
            .filter(|r| {
                r.get(id)
                    .is_some_and(|v| v.last().is_some_and(|(_, end)| end.is_none()))
            })
            .count();
        assert_eq!(
            running, 1,
            "{id} runs on exactly one worker at the end: {runs:?}"
        );
    }
}
