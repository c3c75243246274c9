//! The helpers of the tests that take the lease store away from a cluster
//! under load: what became of the messages contacts wrote meanwhile, and who
//! ran each session (from the workers' logs).
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use parley_tests::receiver::Receiver;
use serde_json::{Value, json};

pub use parley_tests::runs::{Runs, overlap, runs};

use super::support::*;
use crate::support::*;

pub async fn logged(api: &Parley, id: &str) -> Vec<Value> {
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

/// A writer per session until [`Writers::stop`].
pub struct Writers {
    stop: Arc<AtomicBool>,
    writers: Vec<tokio::task::JoinHandle<(Vec<String>, u32)>>,
}

impl Writers {
    /// Contacts write to every session of `sessions` from now on.
    pub fn start(api: &Arc<Parley>, sessions: &[&'static str]) -> Writers {
        let stop = Arc::new(AtomicBool::new(false));
        let writers = sessions
            .iter()
            .map(|id| tokio::spawn(write_until(Arc::clone(api), id, Arc::clone(&stop))))
            .collect();
        Writers { stop, writers }
    }

    /// Stops writing; the eventIds of the messages answered 200 (more than
    /// 30: messages flowed) and how many other answers came.
    pub async fn stop(self) -> (BTreeSet<String>, u32) {
        self.stop.store(true, Ordering::Relaxed);
        let mut wanted = BTreeSet::new();
        let mut refused = 0;
        for writer in self.writers {
            let (accepted, r) = writer.await.unwrap();
            wanted.extend(accepted);
            refused += r;
        }
        assert!(wanted.len() > 30, "messages flowed: {}", wanted.len());
        (wanted, refused)
    }
}

/// Every message in `wanted` (eventIds) reached the webhook and is in its
/// session's log, whose `seq` has no gap; `doubled` is said when one was
/// lost. Returns how many arrived more than once.
pub async fn delivered_and_logged(
    api: &Parley,
    rx: &mut Receiver,
    wanted: &BTreeSet<String>,
    sessions: &[&str],
    doubled: &BTreeMap<&str, Duration>,
) -> u32 {
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
    for id in sessions {
        let events = logged(api, id).await;
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
    seen.values().map(|n| n - 1).sum()
}
