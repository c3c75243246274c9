//! The takeover phase: inbound messages injected at a chosen rate (open model)
//! into sessions whose receiver fails each event's first attempt, so events are
//! always in retry; halfway through, the worker that owns the most sessions is
//! SIGKILLed. Reports what the receiver got of every accepted message (lost,
//! duplicated), how long the killed worker's sessions took to deliver again,
//! and reads every session's event log back to check `seq` for gaps.
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use parley_tests::Parley;
use parley_tests::receiver::{Behaviour, Receiver};
use parley_tests::stats::percentile;
use serde_json::{Value, json};

use super::TOKEN;
use super::events::SENDER;

/// The worker to kill and the sessions it owned.
pub struct Victim {
    pub worker: Parley,
    pub sessions: HashSet<String>,
}

/// What the receiver got for one message.
#[derive(Default)]
struct Arrival {
    requests: u32,
    delivered: u32,
    first_delivered: Option<Instant>,
}

/// The lease time plus 5 s: when the backlog of a killed worker should be in.
const LEASE_PLUS_5: Duration = Duration::from_secs(15);

/// How long to wait for the last accepted message's event.
const DRAIN: Duration = Duration::from_secs(120);

pub async fn run(
    http: &reqwest::Client,
    bases: &[String],
    ids: &[String],
    mut rx: Receiver,
    rate: f64,
    secs: u64,
    mut victim: Victim,
) -> anyhow::Result<()> {
    rx.set_default(Behaviour::FailFirst(503));
    let total = (rate * secs as f64) as usize;
    let arrivals: Arc<Mutex<HashMap<usize, Arrival>>> = Arc::default();
    let collector = {
        let arrivals = Arc::clone(&arrivals);
        tokio::spawn(async move {
            while let Some(req) = rx.maybe_next(Duration::from_secs(3600)).await {
                let Some(n) = req.json()["body"]
                    .as_str()
                    .and_then(|b| b.strip_prefix("event "))
                    .and_then(|n| n.parse::<usize>().ok())
                else {
                    continue;
                };
                let mut all = arrivals.lock().unwrap();
                let a = all.entry(n).or_default();
                a.requests += 1;
                if req.status == Some(200) {
                    a.delivered += 1;
                    a.first_delivered.get_or_insert(req.at);
                }
            }
        })
    };

    let t0 = Instant::now();
    let due = |n: usize| t0 + Duration::from_secs_f64(n as f64 / rate);
    let mut killed_at = None;
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..total {
        tokio::time::sleep_until(due(n).into()).await;
        if n == total / 2 {
            killed_at = Some(Instant::now());
            victim.worker.kill().await;
        }
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
            let answer = match res {
                Ok(r) if r.status().is_success() => Ok(()),
                Ok(r) => Err(format!("{}", r.status().as_u16())),
                Err(e) => Err(format!("request failed: {e}")),
            };
            (n, answer, Instant::now())
        });
    }
    let killed_at = killed_at.expect("the kill happens halfway");
    let mut accepted: HashMap<usize, Instant> = HashMap::new();
    let mut refused: BTreeMap<String, usize> = BTreeMap::new();
    while let Some(joined) = tasks.join_next().await {
        let (n, answer, at) = joined?;
        match answer {
            Ok(()) => {
                accepted.insert(n, at);
            }
            Err(why) => *refused.entry(why).or_default() += 1,
        }
    }
    let injected = t0.elapsed();

    let drain_until = Instant::now() + DRAIN;
    let all_in = loop {
        let missing = {
            let all = arrivals.lock().unwrap();
            accepted
                .keys()
                .filter(|n| all.get(n).is_none_or(|a| a.delivered == 0))
                .count()
        };
        if missing == 0 || Instant::now() > drain_until {
            break killed_at.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    collector.abort();

    // What the receiver got, reported with the lock held and let go before
    // the event logs are read.
    let lost = {
        let all = arrivals.lock().unwrap();
        let of_victim = |n: &usize| victim.sessions.contains(&ids[n % ids.len()]);
        let lost = accepted
            .keys()
            .filter(|n| all.get(n).is_none_or(|a| a.delivered == 0))
            .count();
        let duplicates: u32 = all.values().map(|a| a.delivered.saturating_sub(1)).sum();
        let requests: u32 = all.values().map(|a| a.requests).sum();
        // The killed worker's backlog: its sessions' messages accepted before the
        // kill and not delivered by then.
        let mut backlog: Vec<Duration> = accepted
            .iter()
            .filter(|(n, at)| of_victim(n) && **at < killed_at)
            .filter_map(|(n, _)| all.get(n).and_then(|a| a.first_delivered))
            .filter(|first| *first >= killed_at)
            .map(|first| first - killed_at)
            .collect();
        backlog.sort();
        // Only a new owner delivers what the killed worker's sessions accepted
        // after the kill: the first of those tells when the takeover was done.
        let taken_over = accepted
            .iter()
            .filter(|(n, at)| of_victim(n) && **at >= killed_at)
            .filter_map(|(n, _)| all.get(n)?.first_delivered)
            .min()
            .map(|first| first.saturating_duration_since(killed_at));
        // Messages of those sessions accepted after the kill: from acceptance to delivery.
        let mut after: Vec<Duration> = accepted
            .iter()
            .filter(|(n, at)| of_victim(n) && **at >= killed_at)
            .filter_map(|(n, at)| Some(all.get(n)?.first_delivered?.saturating_duration_since(*at)))
            .collect();
        after.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "takeover: {total} messages offered at {rate:.0}/s over {:.1}s to {} sessions; SIGKILL of the worker owning {} of them at message {}",
            injected.as_secs_f64(),
            ids.len(),
            victim.sessions.len(),
            total / 2
        );
        println!(
            "  {} accepted, {} refused; {} webhook requests (each event's first attempt answered 503); {lost} lost, {duplicates} duplicates; all delivered {:.1}s after the kill",
            accepted.len(),
            refused.values().sum::<usize>(),
            requests,
            all_in.as_secs_f64()
        );
        for (why, count) in &refused {
            println!("  refused {count}x: {why}");
        }
        println!(
            "  first delivery by a new owner {:.1}s after the kill",
            taken_over.unwrap_or_default().as_secs_f64()
        );
        let secs = |p: f64| percentile(&backlog, p).as_secs_f64();
        println!(
            "  the killed worker's backlog: {} events in delivery or retry at the kill, delivered after it: p50 {:.1}s, p99 {:.1}s, last {:.1}s; {} later than the lease time plus 5 s (15 s)",
            backlog.len(),
            secs(0.5),
            secs(0.99),
            backlog.last().map_or(0.0, |d| d.as_secs_f64()),
            backlog.iter().filter(|d| **d > LEASE_PLUS_5).count(),
        );
        println!(
            "  its sessions' messages accepted after the kill: {}, accepted-to-delivered p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
            after.len(),
            ms(percentile(&after, 0.5)),
            ms(percentile(&after, 0.99)),
            ms(after.last().copied().unwrap_or_default()),
        );
        lost
    };

    let (gaps, states) = logs(http, &bases[0], ids).await?;
    let states: Vec<String> = states.iter().map(|(s, n)| format!("{n} {s}")).collect();
    println!(
        "  event logs: {gaps} gaps in seq; delivery states: {}",
        states.join(", ")
    );
    anyhow::ensure!(
        lost == 0 && gaps == 0,
        "{lost} accepted messages lost, {gaps} gaps in seq"
    );
    Ok(())
}

/// Reads every session's event log: gaps in `seq`, and events by delivery state.
pub async fn logs(
    http: &reqwest::Client,
    base: &str,
    ids: &[String],
) -> anyhow::Result<(usize, BTreeMap<String, usize>)> {
    let mut gaps = 0;
    let mut states = BTreeMap::new();
    for id in ids {
        let mut expected = 1;
        let mut after = 0;
        loop {
            let page: Value = http
                .get(format!(
                    "{base}/events?clientId={id}&after={after}&limit=500"
                ))
                .bearer_auth(TOKEN)
                .send()
                .await?
                .error_for_status()?
                .json()
                .await?;
            for e in page["events"].as_array().into_iter().flatten() {
                if e["seq"].as_u64() != Some(expected) {
                    gaps += 1;
                }
                expected = e["seq"].as_u64().unwrap_or(expected) + 1;
                let state = e["delivery"]["state"].as_str().unwrap_or("?").to_string();
                *states.entry(state).or_default() += 1;
            }
            match page["next"].as_u64() {
                Some(next) => after = next,
                None => break,
            }
        }
    }
    Ok((gaps, states))
}
