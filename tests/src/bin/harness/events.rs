//! The inbound-event phase: messages injected through `/sandbox/messages` at a
//! chosen rate (open model) into sessions whose webhooks point at a local
//! receiver; reports what arrived, what was lost or duplicated, and the latency
//! from each message's intended injection to its webhook.
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use parley_tests::receiver::Receiver;
use serde_json::json;

use super::TOKEN;

/// Messages seen (by number), duplicates, and the latency of each first arrival.
#[derive(Default)]
pub struct Seen {
    pub numbers: HashSet<usize>,
    pub duplicates: usize,
    pub latencies: Vec<Duration>,
}

/// Counts, until aborted, the events at `rx` whose body is `prefix` and a
/// number `n`; a first arrival's latency is measured from `due(n)`.
pub fn collect(
    mut rx: Receiver,
    prefix: &'static str,
    due: impl Fn(usize) -> Instant + Send + 'static,
) -> (Arc<Mutex<Seen>>, tokio::task::JoinHandle<()>) {
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let collector = {
        let seen = Arc::clone(&seen);
        tokio::spawn(async move {
            while let Some(req) = rx.maybe_next(Duration::from_secs(3600)).await {
                let event = req.json();
                let Some(n) = event["body"]
                    .as_str()
                    .and_then(|b| b.strip_prefix(prefix))
                    .and_then(|n| n.parse::<usize>().ok())
                else {
                    continue;
                };
                let mut s = seen.lock().unwrap_or_else(|e| e.into_inner());
                if s.numbers.insert(n) {
                    s.latencies.push(req.at.saturating_duration_since(due(n)));
                } else {
                    s.duplicates += 1;
                }
            }
        })
    };
    (seen, collector)
}

const WEBHOOK_TOKEN: &str = "harness-webhook-token-0123456789abcdef";
pub const SENDER: &str = "4917699990000";

/// Points every session's webhook at a fresh local receiver.
pub async fn hook_all(
    http: &reqwest::Client,
    base: &str,
    ids: &[String],
) -> anyhow::Result<Receiver> {
    let rx = Receiver::start().await;
    for id in ids {
        let res = http
            .post(format!("{base}/set-webhook"))
            .bearer_auth(TOKEN)
            .json(&json!({"clientId": id, "webhookUrl": rx.url, "webhookToken": WEBHOOK_TOKEN}))
            .send()
            .await?;
        anyhow::ensure!(
            res.status().is_success(),
            "set-webhook {id}: {}",
            res.status()
        );
    }
    Ok(rx)
}

/// Injects `rate` messages per second for `secs` and waits (up to 30 s) for them.
pub async fn run(
    http: &reqwest::Client,
    bases: &[String],
    ids: &[String],
    rx: Receiver,
    rate: f64,
    secs: u64,
) {
    let total = (rate * secs as f64) as usize;
    let t0 = Instant::now();
    let due = move |n: usize| t0 + Duration::from_secs_f64(n as f64 / rate);
    let (seen, collector) = collect(rx, "event ", due);
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..total {
        tokio::time::sleep_until(due(n).into()).await;
        let (http, id, base) = (
            http.clone(),
            ids[n % ids.len()].clone(),
            bases[n % bases.len()].clone(),
        );
        tasks.spawn(async move {
            let body = json!({"clientId": id, "from": SENDER, "type": "text", "body": format!("event {n}")});
            let res = http
                .post(format!("{base}/sandbox/messages"))
                .bearer_auth(TOKEN)
                .json(&body)
                .send()
                .await;
            matches!(res, Ok(r) if r.status().is_success())
        });
    }
    let mut injected = 0;
    while let Some(Ok(ok)) = tasks.join_next().await {
        injected += usize::from(ok);
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while seen.lock().unwrap().numbers.len() < injected && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let elapsed = t0.elapsed();
    collector.abort();
    let (received, duplicates, mut latencies) = {
        let s = seen.lock().unwrap();
        (s.numbers.len(), s.duplicates, s.latencies.clone())
    };
    latencies.sort();
    let q = |p: f64| parley_tests::stats::percentile(&latencies, p).as_secs_f64() * 1e3;
    println!(
        "events: {total} offered at {rate:.0}/s, {injected} accepted, {received} delivered ({:.0}/s), {} lost, {duplicates} duplicated; inject-to-webhook p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        received as f64 / elapsed.as_secs_f64(),
        injected.saturating_sub(received),
        q(0.5),
        q(0.99),
        latencies.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
    );
}
