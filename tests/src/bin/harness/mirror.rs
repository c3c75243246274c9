//! The mirroring phase: generated files (seeded bytes the sandbox makes as the
//! gateway downloads them, never stored) sent to sessions with the hosted
//! inbox, all at once, one per session in turn; reports the growth of the
//! resident memory of the processes that mirror them (the workers, or `serve`)
//! over their level before, sampled every 20 ms, and how long the files took.
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parley_tests::process;
use parley_tests::receiver::Receiver;
use serde_json::json;

use super::{Processes, TOKEN};

const SENDER: &str = "4917699990001";

/// Sets the hosted receiver `rx` as the webhook of `ids` and gives them an `orgId`.
pub async fn hosted(
    http: &reqwest::Client,
    base: &str,
    ids: &[String],
    rx: &Receiver,
) -> anyhow::Result<()> {
    for id in ids {
        for (path, body) in [
            (
                "/set-webhook",
                json!({"clientId": id, "webhookUrl": rx.url}),
            ),
            ("/set-org-id", json!({"clientId": id, "orgId": "harness"})),
        ] {
            let res = http
                .post(format!("{base}{path}"))
                .bearer_auth(TOKEN)
                .json(&body)
                .send()
                .await?;
            anyhow::ensure!(res.status().is_success(), "{path} {id}: {}", res.status());
        }
    }
    Ok(())
}

/// The summed resident memory of `pids`, in KiB.
pub fn rss_kib(pids: &[u32]) -> u64 {
    pids.iter().filter_map(|pid| process::rss_kib(*pid)).sum()
}

/// Sends `files` generated files of `bytes` each and waits for every event
/// to arrive with its permanent link.
pub async fn run(
    http: &reqwest::Client,
    p: &Processes,
    ids: &[String],
    rx: &mut Receiver,
    bytes: u64,
    files: usize,
) -> anyhow::Result<()> {
    let base = p.apis[0].base.clone();
    let mirroring: Vec<u32> = if p.workers.is_empty() {
        p.apis.iter().filter_map(|a| a.pid()).collect()
    } else {
        p.workers.iter().filter_map(|w| w.pid()).collect()
    };
    let before = rss_kib(&mirroring);
    let peak = Arc::new(AtomicU64::new(before));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = tokio::spawn({
        let (peak, done, pids) = (Arc::clone(&peak), Arc::clone(&done), mirroring.clone());
        async move {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(rss_kib(&pids), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    });
    let t0 = Instant::now();
    let mut waiting = HashSet::new();
    for n in 0..files {
        let id = &ids[n % ids.len()];
        let res = http
            .post(format!("{base}/sandbox/messages"))
            .bearer_auth(TOKEN)
            .json(&json!({"clientId": id, "from": SENDER, "type": "document",
                "mimeType": "application/octet-stream", "fileName": format!("file-{n}.bin"),
                "generate": {"size": bytes, "seed": n}}))
            .send()
            .await?;
        anyhow::ensure!(res.status().is_success(), "inject {n}: {}", res.status());
        let sent: serde_json::Value = res.json().await?;
        waiting.insert(sent["messageId"].as_str().unwrap_or_default().to_string());
    }
    let deadline = Duration::from_secs(600);
    while !waiting.is_empty() {
        let left = deadline.saturating_sub(t0.elapsed());
        anyhow::ensure!(
            !left.is_zero(),
            "{} files not mirrored within {deadline:?}",
            waiting.len()
        );
        let event = rx.next(left).await.json();
        let id = event["messageId"].as_str().unwrap_or_default();
        if waiting.remove(id) {
            let link = event["media"]["downloadUrl"].as_str().unwrap_or_default();
            anyhow::ensure!(!link.is_empty(), "{id} was not mirrored: {event}");
        }
    }
    let took = t0.elapsed();
    done.store(true, Ordering::Relaxed);
    sampler.await?;
    let peak = peak.load(Ordering::Relaxed);
    let total = bytes as f64 * files as f64;
    println!(
        "mirrored {files} file(s) of {:.0} MiB in {:.1}s ({:.0} MiB/s); resident memory of the mirroring processes: {} KiB before, {} KiB at peak: +{:.1} MiB",
        bytes as f64 / 1048576.0,
        took.as_secs_f64(),
        total / 1048576.0 / took.as_secs_f64(),
        before,
        peak,
        peak.saturating_sub(before) as f64 / 1024.0
    );
    Ok(())
}
