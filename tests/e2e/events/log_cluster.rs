//! The event log in the cluster: SIGKILL of the worker that owns a session
//! while its events are in retry; the other worker takes the session over
//! and delivers every accepted message's event, with no gap in `seq`.
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use parley_tests::receiver::{Behaviour, Receiver};
use serde_json::{Value, json};

use super::support::*;
use crate::support::*;

/// Events the test streams in (the benchmark streams more): fewer over the
/// test network, where each message takes longer to inject, so that all are
/// in before the first runs out of its attempts (4, `Retry-After: 4`: 12 s).
fn streamed() -> usize {
    match network() {
        Net::Sandbox => 200,
        Net::Wire => 50,
    }
}

/// Which of `workers` reports `id` connected.
async fn owner(workers: &[Parley], id: &str) -> Option<usize> {
    for (i, w) in workers.iter().enumerate() {
        let (_, body) = json(client().get(w.url("/health/clients")).send().await.unwrap()).await;
        let owns = body["clients"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["clientId"] == id && c["connected"] == true);
        if owns {
            return Some(i);
        }
    }
    None
}

async fn all_events(p: &Parley, id: &str) -> Vec<Value> {
    let mut events = Vec::new();
    let mut after = 0;
    loop {
        let (status, page) =
            get(p, &format!("/events?clientId={id}&after={after}&limit=500")).await;
        assert_eq!(status, 200, "{page}");
        events.extend(page["events"].as_array().expect("events").iter().cloned());
        match page["next"].as_u64() {
            Some(next) => after = next,
            None => return events,
        }
    }
}

#[tokio::test]
async fn a_killed_owners_events_in_retry_are_delivered_by_the_next_owner() {
    let dir = tempfile::tempdir().unwrap();
    let env = services::ClusterEnv::new().await;
    let mut rx = Receiver::start().await;
    // Retried 4 s apart: no event runs out of attempts before the kill.
    rx.set_default(Behaviour::RetryAfter(503, 4));
    let (api, first) = api_and_worker(&env, dir.path(), EVENT_VARS).await;
    // The second worker on the first one's network (the selector's), so
    // that the session can move to it whichever of the two owns it.
    let mut all = env.vars();
    all.extend(vars(&[("PARLEY_ACCOUNT_TOKEN", TOKEN)]));
    all.extend(network_vars(dir.path()));
    all.extend(vars(EVENT_VARS));
    let second = Parley::start(gateway_bin(), &["worker"], dir.path(), &all).await;
    let mut workers = vec![first, second];
    hooked(&api, "ck", &rx.url, json!({})).await;
    contact(&api).await;

    // Every accepted message is in the log: the answer waited for it.
    let mut wanted = BTreeSet::new();
    for n in 0..streamed() {
        let id = text(&api, "ck", &format!("streaming {n}")).await;
        wanted.insert(format!("msg_ck_{id}"));
    }
    rx.next(WAIT).await;
    let victim = owner(&workers, "ck").await.expect("an owner");
    let killed_at = Instant::now();
    workers[victim].kill().await;
    rx.set_default(Behaviour::Status(200));

    // Whatever arrived before the kill was answered 503; count from here.
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    let mut first_after = None;
    while !wanted.iter().all(|id| seen.contains_key(id)) {
        let req = rx.next(Duration::from_secs(40)).await;
        if req.at < killed_at {
            continue;
        }
        first_after.get_or_insert(killed_at.elapsed());
        let id = req.header("webhook-id").expect("webhook-id").to_string();
        assert_eq!(req.json()["eventId"], id.as_str());
        *seen.entry(id).or_default() += 1;
    }
    let all_in = killed_at.elapsed();
    let duplicates: u32 = seen.values().map(|n| n - 1).sum();
    println!(
        "SIGKILL of the owner: first event {:?} after the kill, all {} in {all_in:?}, {duplicates} duplicates",
        first_after.unwrap_or_default(),
        wanted.len()
    );
    assert!(
        all_in < Duration::from_secs(30),
        "delivered within the lease time plus 5 s (with room): {all_in:?}"
    );
    assert!(
        seen.keys().all(|id| wanted.contains(id)),
        "only the session's events"
    );

    let events = eventually(30, "every event delivered", || async {
        let events = all_events(&api, "ck").await;
        let done = events.len() == streamed()
            && events.iter().all(|e| e["delivery"]["state"] == "delivered");
        done.then_some(events)
    })
    .await;
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["seq"], i as u64 + 1, "no gap in seq: {e}");
    }
}
