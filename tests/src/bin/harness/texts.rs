//! The send phase: `/send-message` at a rate (open model) through the API
//! pods, every session hooked to a receiver first, so each send's `fromMe`
//! event is counted there (delivered, lost, twice): a send is done once its
//! event reached the customer, and the CPU figures include that delivery.
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use parley_tests::cpu;

use super::{Processes, TOKEN, events, open_model};

/// How long the phase waits, after the last send's answer, for the events
/// still on their way.
const EVENTS_WAIT: Duration = Duration::from_secs(30);

pub async fn run(
    http: &reqwest::Client,
    p: &Processes,
    ids: &[String],
    rate: f64,
    secs: u64,
) -> anyhow::Result<()> {
    let bases: Vec<String> = p.apis.iter().map(|a| a.base.clone()).collect();
    let rx = events::hook_all(http, &bases[0], ids).await?;
    // Latencies are the send phase's own (the answers'); these count only.
    let t0 = Instant::now();
    let (seen, collector) = events::collect(rx, "load ", move |_| t0);
    let pids = p.labelled_pids();
    let cpu_before = cpu::Snapshot::take(&pids, "harness");
    let report = open_model(rate, secs, {
        let (http, ids, bases) = (http.clone(), Arc::new(ids.to_vec()), Arc::new(bases));
        move |n| {
            let (http, ids, bases) = (http.clone(), ids.clone(), bases.clone());
            async move { send(&http, &bases[n % bases.len()], &ids[n % ids.len()], n).await }
        }
    })
    .await;
    let answered = report.ok;
    let deadline = Instant::now() + EVENTS_WAIT;
    while delivered(&seen) < answered && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let cpu_after = cpu::Snapshot::take(&pids, "harness");
    collector.abort();
    report.print("send-message");
    let (got, twice) = {
        let s = seen.lock().unwrap_or_else(|e| e.into_inner());
        (s.numbers.len(), s.duplicates)
    };
    println!(
        "  fromMe events: {got} of {answered} answered sends delivered, {} lost, {twice} twice",
        answered.saturating_sub(got)
    );
    cpu_before.print_per_request(&cpu_after, answered as u64, report.elapsed.as_secs_f64());
    Ok(())
}

fn delivered(seen: &Mutex<events::Seen>) -> usize {
    seen.lock().unwrap_or_else(|e| e.into_inner()).numbers.len()
}

async fn send(http: &reqwest::Client, base: &str, id: &str, n: usize) -> Result<(), String> {
    let body = json!({"clientId": id, "to": "4915199990000", "body": format!("load {n}")});
    let res = http
        .post(format!("{base}/send-message"))
        .bearer_auth(TOKEN)
        .json(&body)
        .send()
        .await;
    match res {
        Ok(r) if r.status().is_success() => Ok(()),
        Ok(r) => {
            let status = r.status().as_u16();
            Err(format!("{status} {}", r.text().await.unwrap_or_default()))
        }
        Err(e) => Err(format!("request failed: {e}")),
    }
}
