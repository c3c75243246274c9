//! A worker cut off from the lease store (its Redis connection goes through
//! a relay the test cuts) while contacts write to the three sessions it
//! runs: it closes them before its membership lapses, and the other worker
//! takes them over once it has, without waiting for the sessions' leases.
//! Cut off from the bus as well (its NATS connection through a relay cut at
//! the same time), it closes them sooner, and the other worker takes them
//! over sooner: the bus no longer reaches it. No session runs on two
//! workers at once, and every message answered 200 is logged and reaches
//! the webhook.
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
    cut_off_from(&["PARLEY_REDIS_URL"]).await;
}

#[tokio::test]
async fn a_worker_cut_off_from_the_lease_store_and_the_bus_hands_its_sessions_over_sooner() {
    cut_off_from(&["PARLEY_REDIS_URL", "PARLEY_NATS_URL"]).await;
}

/// The test, with worker-a's connections to the services named by
/// `settings` going through relays cut at once.
async fn cut_off_from(settings: &[&str]) {
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
    let mut relays = Vec::new();
    for setting in settings {
        let (_, url) = all.iter().find(|(key, _)| key == setting).expect(setting);
        relays.push((*setting, Relay::start(&relay::authority(url)).await));
    }
    let worker = |name: &str, cut_off: bool| {
        let mut vars = all.clone();
        for (key, value) in vars.iter_mut().filter(|_| cut_off) {
            if let Some((_, relay)) = relays.iter().find(|(setting, _)| setting == key) {
                *value = relay::through(value, relay);
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
    for (_, relay) in &relays {
        relay.cut();
    }
    eventually(20, "every session running on worker-b", || async {
        all_running(&runs(&b.output())).then_some(())
    })
    .await;
    let moved = cut.elapsed();
    if settings.contains(&"PARLEY_NATS_URL") {
        // Each on the bus's word, not on the membership's lapse.
        let closed = "worker cut off from the lease store and the bus: closing every session";
        assert!(a.output().contains(closed), "{}", a.output());
        let gone = "a silent worker no longer answers on the bus";
        assert!(b.output().contains(gone), "{}", b.output());
    }
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
        "{settings:?} cut off from one worker: its sessions running elsewhere {moved:?} after the cut; \
         {} accepted, {refused} refused (retryable), 0 lost, {duplicates} duplicates, no double owner",
        wanted.len()
    );
}
