//! The lease store loses its data under load (the cluster): Redis, without
//! persistence, is killed and started again empty while contacts write to
//! three sessions spread over two workers. Every message answered 200 must
//! be in its session's log and reach the webhook: an owner that a newer one
//! has fenced out refuses what it cannot log (the caller hands it over
//! again), and the owners take their leases back before anyone else may
//! claim. The time two workers report one session connected is measured.
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use parley_tests::receiver::Receiver;
use parley_tests::redis_server::RedisServer;
use serde_json::{Value, json};

use super::support::*;
use crate::support::*;

const SESSIONS: [&str; 3] = ["rr1", "rr2", "rr3"];

async fn logged(api: &Parley, id: &str) -> Vec<Value> {
    let mut events = Vec::new();
    let mut after = 0;
    loop {
        let (status, page) = get(
            api,
            &format!("/events?clientId={id}&after={after}&limit=500"),
        )
        .await;
        assert_eq!(status, 200, "{page}");
        events.extend(page["events"].as_array().expect("events").iter().cloned());
        match page["next"].as_u64() {
            Some(next) => after = next,
            None => return events,
        }
    }
}

/// Writes to `id` until `stop`; returns the eventIds of the messages answered
/// 200 and how many other answers came (each names its cause).
async fn write_until(
    api: Arc<Parley>,
    id: &'static str,
    stop: Arc<AtomicBool>,
) -> (Vec<String>, u32) {
    let (mut accepted, mut refused) = (Vec::new(), 0);
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let body =
            json!({"clientId": id, "from": CONTACT, "type": "text", "body": format!("m{n}")});
        let (status, answer) = post(&api, "/sandbox/messages", body).await;
        if status == 200 {
            let message = answer["messageId"].as_str().expect("messageId");
            accepted.push(format!("msg_{id}_{message}"));
        } else {
            assert!(
                [502, 503, 504].contains(&status),
                "a clear retryable answer: {status} {answer}"
            );
            assert!(
                answer["error"].as_str().is_some_and(|e| !e.is_empty()),
                "{answer}"
            );
            refused += 1;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    (accepted, refused)
}

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

    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = SESSIONS
        .iter()
        .map(|id| tokio::spawn(write_until(Arc::clone(&api), id, Arc::clone(&stop))))
        .collect();

    tokio::time::sleep(Duration::from_secs(2)).await;
    redis.kill().await;
    // Down for a while (well within the owners' trust in their leases), so
    // the workers' connections come back at different times.
    tokio::time::sleep(Duration::from_secs(2)).await;
    redis.restart().await;
    // Past the owners' renewals, the store's settling time and any claim.
    tokio::time::sleep(Duration::from_secs(14)).await;
    stop.store(true, Ordering::Relaxed);
    let mut wanted = BTreeSet::new();
    let mut refused = 0;
    for writer in writers {
        let (accepted, r) = writer.await.unwrap();
        wanted.extend(accepted);
        refused += r;
    }
    assert!(wanted.len() > 30, "messages flowed: {}", wanted.len());
    let runs: Vec<Runs> = workers.iter().map(|w| runs(&w.output())).collect();
    let doubled: BTreeMap<&str, Duration> = SESSIONS
        .iter()
        .map(|id| (*id, overlap(&runs[0], &runs[1], id)))
        .collect();

    // Every accepted message reaches the webhook (duplicates counted) ...
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(40);
    while !wanted.iter().all(|id| seen.contains_key(id)) {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(req) = rx.maybe_next(left).await else {
            let lost: Vec<&String> = wanted.iter().filter(|id| !seen.contains_key(*id)).collect();
            panic!(
                "{} of {} accepted messages never reached the webhook (two workers ran \
                 one session for {doubled:?}): {lost:?}",
                lost.len(),
                wanted.len()
            );
        };
        let id = req.header("webhook-id").expect("webhook-id").to_string();
        *seen.entry(id).or_default() += 1;
    }
    // ... and is in its session's log, whose seq has no gap.
    for id in SESSIONS {
        let events = logged(&api, id).await;
        for (i, e) in events.iter().enumerate() {
            assert_eq!(e["seq"], i as u64 + 1, "no gap in seq: {e}");
        }
        let ids: BTreeSet<&str> = events
            .iter()
            .filter_map(|e| e["eventId"].as_str())
            .collect();
        let missing: Vec<&String> = wanted
            .iter()
            .filter(|w| w.starts_with(&format!("msg_{id}_")) && !ids.contains(w.as_str()))
            .collect();
        assert!(
            missing.is_empty(),
            "{id}: accepted but not logged: {missing:?}"
        );
    }
    let duplicates: u32 = seen.values().map(|n| n - 1).sum();
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

/// Per session, the times a worker ran it: from `session running` to
/// `session stopped` (open while it still runs), read from its log.
type Runs = BTreeMap<String, Vec<(DateTime<Utc>, Option<DateTime<Utc>>)>>;

fn runs(log: &str) -> Runs {
    let mut runs = Runs::new();
    // Cluster roles log JSON lines.
    for line in log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        let message = line["message"].as_str().unwrap_or_default();
        let started = message == "session running";
        if !started && message != "session stopped" {
            continue;
        }
        let at = line["timestamp"]
            .as_str()
            .and_then(|t| t.parse::<DateTime<Utc>>().ok());
        let (Some(at), Some(id)) = (at, line["client_id"].as_str()) else {
            continue;
        };
        let spans = runs.entry(id.to_owned()).or_default();
        if started {
            spans.push((at, None));
        } else if let Some(open) = spans.iter_mut().rev().find(|(_, end)| end.is_none()) {
            open.1 = Some(at);
        }
    }
    runs
}

/// How long `a` and `b` both ran `id`.
fn overlap(a: &Runs, b: &Runs, id: &str) -> Duration {
    let now = Utc::now();
    let mut total = chrono::Duration::zero();
    for (a_from, a_to) in a.get(id).into_iter().flatten() {
        for (b_from, b_to) in b.get(id).into_iter().flatten() {
            let from = (*a_from).max(*b_from);
            let to = a_to.unwrap_or(now).min(b_to.unwrap_or(now));
            if to > from {
                total += to - from;
            }
        }
    }
    total.to_std().unwrap_or_default()
}
