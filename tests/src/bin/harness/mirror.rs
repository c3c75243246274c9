//! The mirroring phase: generated files (seeded bytes the sandbox makes as the
//! gateway downloads them, never stored) sent to sessions with the hosted
//! inbox, all at once, one per session in turn; reports the growth of the
//! resident memory of the processes that mirror them (the workers, or `serve`)
//! over their level before, sampled every 20 ms, and how long the files took.
use std::collections::HashSet;
use std::time::{Duration, Instant};

use parley_tests::receiver::Receiver;
use serde_json::json;

use super::memory::PeakRss;
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
    let memory = PeakRss::start(p);
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
    memory.report("mirrored", files, bytes, t0.elapsed()).await
}
