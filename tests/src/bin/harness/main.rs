//! The load and failover harness: drives real `parley` processes against real
//! services (sessions paired through the sandbox at a chosen rate, sends at a
//! chosen rate with an open-model generator, inbound events injected at a chosen
//! rate and counted at a webhook receiver, workers killed on purpose) and
//! prints throughput, latency percentiles, failover times, double ownership and
//! memory per session.
mod events;
mod faults;
mod memory;
mod mirror;
mod sends;
mod takeover;
mod texts;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Parser;
use parley_tests::receiver::Receiver;
use parley_tests::services::{ClusterEnv, nats_url};
use parley_tests::{Parley, process::run_once};
use serde_json::{Value, json};

const TOKEN: &str = "harness-account-token-0123456789abcdef";

#[derive(Parser, Debug)]
#[command(about = "Load and failover harness for Parley (real processes, real services)")]
struct Args {
    /// The parley binary; default: the one beside this harness in the same
    /// target directory (`cargo build --release -p parley`).
    #[arg(long)]
    bin: Option<PathBuf>,
    /// `cluster` (api + worker processes on NATS/Redis/PostgreSQL/S3) or `serve` (one process).
    #[arg(long, default_value = "cluster")]
    mode: String,
    #[arg(long, default_value_t = 2)]
    apis: usize,
    #[arg(long, default_value_t = 3)]
    workers: usize,
    /// Sessions to create and pair.
    #[arg(long, default_value_t = 100)]
    sessions: usize,
    /// Sessions paired per second.
    #[arg(long, default_value_t = 200.0)]
    pair_rate: f64,
    /// `/send-message` requests per second (0: no send phase), open model.
    #[arg(long, default_value_t = 0.0)]
    send_rate: f64,
    /// Length of the send phase in seconds.
    #[arg(long, default_value_t = 10)]
    duration: u64,
    /// Inbound messages per second through `/sandbox/messages` to webhooks (0: no event phase).
    #[arg(long, default_value_t = 0.0)]
    event_rate: f64,
    /// Bytes of each generated file mirrored into the hosted inbox (0: no
    /// mirroring phase); the files go to the sessions in turn, all at once.
    #[arg(long, default_value_t = 0)]
    mirror_bytes: u64,
    /// Files of the mirroring phase.
    #[arg(long, default_value_t = 1)]
    mirror_files: usize,
    /// Bytes of each generated file sent by URL (0: no large-send phase;
    /// at most the spec's 60 MB attachment limit); the files go to the
    /// sessions in turn, all at once.
    #[arg(long, default_value_t = 0)]
    send_bytes: u64,
    /// Files of the large-send phase.
    #[arg(long, default_value_t = 1)]
    send_files: usize,
    /// Also measure bare NATS request-reply at the send rate (the baseline).
    #[arg(long)]
    nats_baseline: bool,
    /// SIGKILL one worker after the other phases and measure the failover.
    #[arg(long)]
    kill_worker: bool,
    /// In the event phase, fail each event's first attempt at the receiver
    /// (so events are in retry) and SIGKILL the worker owning the most
    /// sessions halfway through; check every accepted message's event
    /// arrives and the event logs have no gap.
    #[arg(long)]
    kill_during_events: bool,
    /// The fault run (docs/benchmarks.md): a cluster on servers of its own
    /// under steady sends (`--send-rate`) and contacts' messages
    /// (`--event-rate`), through every fault in turn; fails on a lost
    /// event, a gap, a double owner or an answer no document names.
    #[arg(long)]
    faults: bool,
    /// The fault run's faults, comma separated (default: all, in order:
    /// redis-empty, nats-restart, postgres-restart, s3-unreachable,
    /// rolling-workers, rolling-apis).
    #[arg(long)]
    only: Option<String>,
    /// Seconds of steady load before the first fault and after each.
    #[arg(long, default_value_t = 10)]
    settle: u64,
    /// Seconds the S3 server answers nothing in the fault run.
    #[arg(long, default_value_t = 30)]
    s3_pause: u64,
    /// The workers' membership in milliseconds
    /// (`PARLEY_WORKER_MEMBERSHIP_MS`; default: the workers' own).
    #[arg(long)]
    membership_ms: Option<u64>,
    /// Threads of each parley process's async runtime
    /// (`PARLEY_RUNTIME_THREADS`; default: each process's own, from the cores
    /// it sees): 1 gives each process what a pod limited to one CPU has.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    runtime_threads: Option<u16>,
    /// `RUST_LOG` of the parley processes.
    #[arg(long, default_value = "warn")]
    log: String,
    /// Copy each parley process's log into this directory at the end.
    #[arg(long)]
    keep_logs: Option<PathBuf>,
}

impl Args {
    fn bin(&self) -> &std::path::Path {
        self.bin.as_deref().expect("resolved in main")
    }
}

/// The parley binary as an absolute path (processes start in their own
/// directories): `--bin` resolved against the current directory, else the
/// `parley` beside this executable.
fn parley_binary(given: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    let path = match given {
        Some(p) => std::path::absolute(p)?,
        None => std::env::current_exe()?
            .parent()
            .map(|dir| dir.join("parley"))
            .ok_or_else(|| anyhow::anyhow!("the harness executable has no directory"))?,
    };
    anyhow::ensure!(
        path.is_file(),
        "no parley binary at {} (build it: cargo build --release -p parley)",
        path.display()
    );
    Ok(path)
}

struct Processes {
    apis: Vec<Parley>,
    workers: Vec<Parley>,
    database_url: String,
    _dir: tempfile::TempDir,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = Args::parse();
    args.bin = Some(parley_binary(args.bin.take())?);
    if args.faults {
        return faults::run(&args).await;
    }
    // The hosted receiver exists before the processes, which are told its URL.
    let mut hosted = if args.mirror_bytes > 0 {
        Some(Receiver::start().await)
    } else {
        None
    };
    let mut p = start(&args, hosted.as_ref().map(|rx| rx.url.as_str())).await?;
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(512)
        .build()?;
    let baseline_kib: u64 = p.workers.iter().filter_map(Parley::rss_kib).sum();

    let ids: Vec<String> = (0..args.sessions).map(|i| format!("h{i}")).collect();
    let t0 = Instant::now();
    let bases: Vec<String> = p.apis.iter().map(|a| a.base.clone()).collect();
    pair_all(&http, &bases, &ids, args.pair_rate).await?;
    let paired = t0.elapsed();
    println!(
        "paired {} sessions in {:.1}s ({:.0}/s)",
        ids.len(),
        paired.as_secs_f64(),
        ids.len() as f64 / paired.as_secs_f64()
    );
    wait_connected(&http, &bases[0], ids.len(), Duration::from_secs(300)).await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let loaded_kib: u64 = p.workers.iter().filter_map(Parley::rss_kib).sum();
    println!(
        "worker memory: {} KiB before, {} KiB with {} sessions: {:.1} KiB per session",
        baseline_kib,
        loaded_kib,
        ids.len(),
        loaded_kib.saturating_sub(baseline_kib) as f64 / ids.len().max(1) as f64
    );

    if args.send_rate > 0.0 {
        texts::run(&http, &p, &ids, args.send_rate, args.duration).await?;
        if args.nats_baseline {
            nats_baseline(args.send_rate, args.duration)
                .await?
                .print("bare NATS request-reply");
        }
    }

    if args.event_rate > 0.0 {
        let rx = events::hook_all(&http, &bases[0], &ids).await?;
        if args.kill_during_events {
            let victim = busiest_worker(&http, &mut p).await?;
            takeover::run(
                &http,
                &bases,
                &ids,
                rx,
                args.event_rate,
                args.duration,
                victim,
            )
            .await?;
        } else {
            events::run(&http, &bases, &ids, rx, args.event_rate, args.duration).await;
        }
    }

    if let Some(rx) = hosted.as_mut() {
        mirror::hosted(&http, &p.apis[0].base, &ids, rx).await?;
        mirror::run(&http, &p, &ids, rx, args.mirror_bytes, args.mirror_files).await?;
    }

    if args.send_bytes > 0 {
        sends::run(&http, &p, &ids, args.send_bytes, args.send_files).await?;
    }

    if args.kill_worker && p.workers.len() > 1 {
        let victim = p.workers.remove(0);
        let owned = owned_by(&http, &victim).await?;
        let mut victim = victim;
        let killed_at = Instant::now();
        victim.kill().await;
        let mut left = owned.clone();
        while !left.is_empty() {
            let mut still = Vec::new();
            for id in left {
                if !connected(&http, &p.apis[0], &id).await {
                    still.push(id);
                }
            }
            left = still;
            anyhow::ensure!(
                killed_at.elapsed() < Duration::from_secs(120),
                "{} sessions not back after 120 s",
                left.len()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        println!(
            "failover: {} sessions of the killed worker connected elsewhere {:.1}s after SIGKILL",
            owned.len(),
            killed_at.elapsed().as_secs_f64()
        );
        let overlaps = double_owners(&p.database_url, &owned).await?;
        println!("double ownership (overlapping connections in the sandbox's log): {overlaps}");
    }
    if let Some(dir) = &args.keep_logs {
        p.keep_logs(dir)?;
    }
    Ok(())
}

impl Processes {
    /// The gateway's processes by role: `api-<n>`, `worker-<n>`.
    fn labelled(&self) -> impl Iterator<Item = (String, &Parley)> {
        let apis = self
            .apis
            .iter()
            .enumerate()
            .map(|(i, a)| (format!("api-{i}"), a));
        let workers = self
            .workers
            .iter()
            .enumerate()
            .map(|(i, w)| (format!("worker-{i}"), w));
        apis.chain(workers)
    }

    /// Copies every process's log into `dir` as `<role>-<n>.log`.
    fn keep_logs(&self, dir: &std::path::Path) -> anyhow::Result<()> {
        std::fs::create_dir_all(dir)?;
        for (label, p) in self.labelled() {
            std::fs::copy(&p.log, dir.join(format!("{label}.log")))?;
        }
        println!("logs kept in {}", dir.display());
        Ok(())
    }

    /// The gateway's processes by role, for CPU accounting.
    fn labelled_pids(&self) -> Vec<(String, u32)> {
        self.labelled()
            .filter_map(|(label, p)| Some((label, p.pid()?)))
            .collect()
    }
}

/// The settings every parley process of the harness gets.
fn base_vars(args: &Args) -> Vec<(String, String)> {
    let base = [
        ("PARLEY_ACCOUNT_TOKEN", TOKEN),
        ("PARLEY_NETWORK", "sandbox"),
        ("PARLEY_ALLOW_HTTP_WEBHOOKS", "true"),
        ("PARLEY_ALLOW_PRIVATE_EGRESS", "true"),
    ];
    let mut vars: Vec<(String, String)> = base
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    vars.push(("RUST_LOG".into(), args.log.clone()));
    if let Some(ms) = args.membership_ms {
        vars.push(("PARLEY_WORKER_MEMBERSHIP_MS".into(), ms.to_string()));
    }
    if let Some(n) = args.runtime_threads {
        vars.push(("PARLEY_RUNTIME_THREADS".into(), n.to_string()));
    }
    vars
}

async fn start(args: &Args, hosted_receiver: Option<&str>) -> anyhow::Result<Processes> {
    let dir = tempfile::tempdir()?;
    let mut vars = base_vars(args);
    if let Some(url) = hosted_receiver {
        vars.push(("PARLEY_HOSTED_RECEIVER_URL".into(), url.to_string()));
    }
    if args.mode == "serve" {
        let serve = Parley::start(args.bin(), &["serve"], dir.path(), &vars).await;
        let db = format!(
            "sqlite://{}",
            dir.path().join("parley-data/parley.sqlite").display()
        );
        return Ok(Processes {
            apis: vec![serve],
            workers: Vec::new(),
            database_url: db,
            _dir: dir,
        });
    }
    let env = ClusterEnv::new().await;
    vars.extend(env.vars());
    let (ok, out) = run_once(args.bin(), &["migrate"], dir.path(), &vars).await;
    anyhow::ensure!(ok, "migrate failed: {out}");
    let mut p = Processes {
        apis: Vec::new(),
        workers: Vec::new(),
        database_url: env.database_url.clone(),
        _dir: dir,
    };
    for i in 0..args.apis {
        let mut v = vars.clone();
        v.push(("PARLEY_POD_NAME".into(), format!("api-{i}")));
        p.apis
            .push(Parley::start(args.bin(), &["api"], p._dir.path(), &v).await);
    }
    for i in 0..args.workers {
        let mut v = vars.clone();
        v.push(("PARLEY_POD_NAME".into(), format!("worker-{i}")));
        p.workers
            .push(Parley::start(args.bin(), &["worker"], p._dir.path(), &v).await);
    }
    Ok(p)
}

async fn post(
    http: &reqwest::Client,
    api: &Parley,
    path: &str,
    body: Value,
) -> anyhow::Result<(u16, Value)> {
    let res = http
        .post(api.url(path))
        .bearer_auth(TOKEN)
        .json(&body)
        .send()
        .await?;
    let status = res.status().as_u16();
    Ok((status, res.json().await.unwrap_or(Value::Null)))
}

/// Starts and links every session, at most `rate` per second.
async fn pair_all(
    http: &reqwest::Client,
    bases: &[String],
    ids: &[String],
    rate: f64,
) -> anyhow::Result<()> {
    let gap = Duration::from_secs_f64(1.0 / rate.max(0.1));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, id) in ids.iter().enumerate() {
        let api_base = bases[i % bases.len()].clone();
        let (http, id) = (http.clone(), id.clone());
        tasks.spawn(async move {
            let start = http
                .post(format!("{api_base}/start?clientId={id}"))
                .bearer_auth(TOKEN)
                .json(&json!({}))
                .send()
                .await;
            anyhow::ensure!(
                matches!(&start, Ok(r) if r.status().is_success()),
                "start {id}: {start:?}"
            );
            let phone = format!("4917{:09}", i);
            let until = Instant::now() + Duration::from_secs(60);
            loop {
                let res = http
                    .post(format!("{api_base}/sandbox/link"))
                    .bearer_auth(TOKEN)
                    .json(&json!({"clientId": id, "phone": phone}))
                    .send()
                    .await?;
                match res.status().as_u16() {
                    200 => return Ok(()),
                    409 if Instant::now() < until => {
                        tokio::time::sleep(Duration::from_millis(50)).await
                    }
                    s => anyhow::bail!("link {id}: {s} {}", res.text().await.unwrap_or_default()),
                }
            }
        });
        tokio::time::sleep(gap).await;
    }
    while let Some(done) = tasks.join_next().await {
        done??;
    }
    Ok(())
}

/// Waits until the API pod at `base` counts `n` sessions connected.
async fn wait_connected(
    http: &reqwest::Client,
    base: &str,
    n: usize,
    limit: Duration,
) -> anyhow::Result<()> {
    let t0 = Instant::now();
    loop {
        let ready: Value = http
            .get(format!("{base}/health/ready"))
            .send()
            .await?
            .json()
            .await?;
        if ready["sessions"]["connected"].as_u64() == Some(n as u64) {
            return Ok(());
        }
        anyhow::ensure!(t0.elapsed() < limit, "not all connected: {ready}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn connected(http: &reqwest::Client, api: &Parley, id: &str) -> bool {
    matches!(post(http, api, "/check-state", json!({"clientId": id})).await, Ok((200, v)) if v["status"] == true)
}

async fn owned_by(http: &reqwest::Client, worker: &Parley) -> anyhow::Result<Vec<String>> {
    let v: Value = http
        .get(worker.url("/health/clients"))
        .send()
        .await?
        .json()
        .await?;
    Ok(v["clients"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| c["clientId"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default())
}

/// Takes the worker that owns the most sessions out of `p`, with its sessions.
async fn busiest_worker(
    http: &reqwest::Client,
    p: &mut Processes,
) -> anyhow::Result<takeover::Victim> {
    anyhow::ensure!(p.workers.len() > 1, "a takeover needs two workers or more");
    let mut owned = Vec::new();
    for w in &p.workers {
        owned.push(owned_by(http, w).await?);
    }
    let busiest = (0..owned.len())
        .max_by_key(|&i| owned[i].len())
        .expect("workers");
    Ok(takeover::Victim {
        worker: p.workers.remove(busiest),
        sessions: owned.swap_remove(busiest).into_iter().collect(),
    })
}

async fn double_owners(database_url: &str, ids: &[String]) -> anyhow::Result<usize> {
    Ok(network_overlaps(database_url, ids).await?.len())
}

/// Connections of one session the sandbox network saw open at once (from
/// its connection log): the session, when the second began, how long both
/// were open.
async fn network_overlaps(
    database_url: &str,
    ids: &[String],
) -> anyhow::Result<Vec<(String, chrono::DateTime<chrono::Utc>, Duration)>> {
    let db = parley_network_sandbox::store::Store::new(
        parley_shared::db::Db::connect(database_url).await?,
    );
    let mut overlaps = Vec::new();
    for id in ids {
        let mut rows = db.sandbox_connections(id).await?;
        rows.sort_by_key(|r| r.connected_at);
        for pair in rows.windows(2) {
            if let Some(end) = pair[0].closed_at.filter(|end| *end > pair[1].connected_at) {
                let both = (end - pair[1].connected_at).to_std().unwrap_or_default();
                overlaps.push((id.clone(), pair[1].connected_at, both));
            }
        }
    }
    Ok(overlaps)
}

struct Report {
    sent: usize,
    ok: usize,
    /// What the failed requests got, with how many got it.
    failures: std::collections::BTreeMap<String, usize>,
    elapsed: Duration,
    latencies: Vec<Duration>,
}

impl Report {
    fn print(&self, what: &str) {
        let mut l = self.latencies.clone();
        l.sort();
        let q = |p: f64| parley_tests::stats::percentile(&l, p);
        println!(
            "{what}: {} requests, {} ok, {:.0}/s achieved; latency p50 {:.2} ms, p99 {:.2} ms, p99.9 {:.2} ms, max {:.2} ms",
            self.sent,
            self.ok,
            self.ok as f64 / self.elapsed.as_secs_f64(),
            q(0.50).as_secs_f64() * 1e3,
            q(0.99).as_secs_f64() * 1e3,
            q(0.999).as_secs_f64() * 1e3,
            l.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        );
        for (failure, count) in &self.failures {
            println!("  failed {count}x: {failure}");
        }
    }
}

/// Open model: request n starts at n/rate whatever happened before; its latency is
/// measured from that intended start (no coordinated omission).
async fn open_model<F, Fut>(rate: f64, secs: u64, call: F) -> Report
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = Result<(), String>> + Send + 'static,
{
    let total = (rate * secs as f64) as usize;
    let t0 = tokio::time::Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..total {
        let due = t0 + Duration::from_secs_f64(n as f64 / rate);
        tokio::time::sleep_until(due).await;
        let fut = call(n);
        tasks.spawn(async move {
            let ok = fut.await;
            (ok, due.elapsed())
        });
    }
    let mut report = Report {
        sent: total,
        ok: 0,
        failures: Default::default(),
        elapsed: Duration::ZERO,
        latencies: Vec::with_capacity(total),
    };
    while let Some(Ok((ok, latency))) = tasks.join_next().await {
        match ok {
            Ok(()) => report.ok += 1,
            Err(failure) => *report.failures.entry(failure).or_default() += 1,
        }
        report.latencies.push(latency);
    }
    report.elapsed = t0.elapsed();
    report
}

/// Bare NATS request-reply to a responder in this process: the floor under any bus hop.
async fn nats_baseline(rate: f64, secs: u64) -> anyhow::Result<Report> {
    use futures::StreamExt;
    let client = async_nats::connect(nats_url()).await?;
    let subject = format!("harness.{}", uuid::Uuid::new_v4().simple());
    let mut sub = client.subscribe(subject.clone()).await?;
    let responder = client.clone();
    tokio::spawn(async move {
        while let Some(msg) = sub.next().await {
            if let Some(reply) = msg.reply {
                let _ = responder
                    .publish(reply, bytes::Bytes::from_static(b"{\"Ok\":{}}"))
                    .await;
            }
        }
    });
    Ok(open_model(rate, secs, move |_| {
        let (client, subject) = (client.clone(), subject.clone());
        async move {
            client
                .request(subject, bytes::Bytes::from_static(b"{}"))
                .await
                .map(drop)
                .map_err(|e| format!("request failed: {e}"))
        }
    })
    .await)
}
