//! Figures only the real adapter can give, on the wire-level test network
//! (a benchmark, not a test): one `parley serve` (device keys in SQLite)
//! with N sessions paired and connected, then
//! - resident memory per connected session (RSS growth over the idle
//!   process, divided by N),
//! - the time a restarted process takes to bring all N back to connected,
//! - CPU time of the process per text sent through the API and per text
//!   received (delivered as a webhook), at a paced rate.
//!
//! With `--cluster`, an API and two workers (`--workers N`; device keys in
//! PostgreSQL, NATS, Redis, S3: run it under `scripts/with-services.sh`)
//! instead: memory per session is the workers' RSS growth, the restart is
//! every worker stopped (SIGTERM) and started again, and the CPU figures are
//! over every process. `--kill-worker` then SIGKILLs the worker holding the
//! most sessions and times until all of them are connected on the others,
//! with the most sockets one device had open at once on the network
//! (`--membership-ms` sets the workers' membership).
//!
//! ```text
//! cargo build --release -p parley --features test-network --bin parley-test-network
//! cargo run --release -p parley-wire-network --example wire-bench -- \
//!     --sessions 100 --bin target/release/parley-test-network
//! ```
//! The phones that link the sessions are accounts the server signs for
//! (no client of their own), so the bench process stays small. Without a
//! phone's client no companion gets its account's privacy-token salt (app
//! state), so the network does not require privacy tokens here, unless
//! `--privacy-tokens`: then the contact writes to every session first (its
//! client issues each session its token), and the sends carry it.
//! `--warm-up` has the contact write first without tokens, to compare.
use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures::StreamExt;
use parley_tests::Parley;
use parley_tests::cpu;
use parley_tests::receiver::Receiver;
use parley_wire_network::{TestDevice, WireNetwork};
use serde_json::{Value, json};
use whatsapp_rust::wacore::libsignal::protocol::KeyPair;

const TOKEN: &str = "bench-account-token-0123456789abcdef";
const CONTACT: &str = "4915200000000";
/// Contacts writing at once in the receive figure (one client's sends are
/// sequential).
const WRITERS: usize = 10;
/// This process in the CPU figures: the test network's server, its
/// devices (phones and contacts) and the webhook receiver.
const OWN: &str = "wire-bench";

/// Figures only the real adapter can give, on the wire-level test network.
#[derive(clap::Parser)]
#[command(name = "wire-bench")]
struct Args {
    /// Sessions paired and connected.
    #[arg(long, default_value_t = 100)]
    sessions: usize,
    /// The `parley-test-network` build to run.
    #[arg(long, default_value = "target/release/parley-test-network")]
    bin: PathBuf,
    /// Texts sent, and texts received.
    #[arg(long, default_value_t = 400)]
    messages: usize,
    /// Texts per second.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..))]
    rate: u32,
    /// An API and workers (run under scripts/with-services.sh) instead of serve.
    #[arg(long)]
    cluster: bool,
    /// The cluster's workers.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    workers: u16,
    /// The contact writes to every session once before the sends.
    #[arg(long)]
    warm_up: bool,
    /// The network requires privacy tokens (implies --warm-up: the
    /// contact's message gives each session the contact's token).
    #[arg(long = "privacy-tokens")]
    tokens: bool,
    /// At the end, SIGKILL the busiest worker and time the takeover (cluster).
    #[arg(long)]
    kill_worker: bool,
    /// The workers' membership in milliseconds
    /// (`PARLEY_WORKER_MEMBERSHIP_MS`; unset: the default).
    #[arg(long)]
    membership_ms: Option<u64>,
    /// Threads of each gateway process's async runtime
    /// (`PARLEY_RUNTIME_THREADS`; unset: each process's own, from the cores
    /// it sees): 1 gives each process what a pod limited to one CPU has.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    runtime_threads: Option<u16>,
}

fn args() -> Args {
    let mut a = <Args as clap::Parser>::parse();
    a.warm_up |= a.tokens;
    a.bin = std::fs::canonicalize(&a.bin).unwrap_or_else(|e| {
        eprintln!("--bin {}: {e}", a.bin.display());
        std::process::exit(2)
    });
    a
}

fn phone(i: usize) -> String {
    format!("49151{i:08}")
}

/// The settings every process gets.
fn settings(net: &WireNetwork) -> Vec<(String, String)> {
    [
        ("PARLEY_ACCOUNT_TOKEN", TOKEN.to_string()),
        ("PARLEY_NETWORK", "whatsapp".into()),
        ("PARLEY_NETWORK_URL", net.url()),
        ("PARLEY_ALLOW_HTTP_WEBHOOKS", "true".into()),
        ("PARLEY_ALLOW_PRIVATE_EGRESS", "true".into()),
        ("RUST_LOG", "warn".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// What is measured: one `serve`, or an API and its workers.
struct Gateway {
    /// Takes the API calls (`serve`, or the API pod).
    front: Parley,
    /// Hold the sessions (empty for `serve`: the front holds them).
    workers: Vec<Parley>,
}

/// How the measured processes start: their settings and binary, and for a
/// cluster how many workers.
struct Starter {
    vars: Vec<(String, String)>,
    bin: PathBuf,
    dir: PathBuf,
    /// `None`: one `serve`.
    workers: Option<usize>,
}

impl Starter {
    /// One `serve` (`cluster` false) or an API and `workers` workers.
    async fn new(a: &Args, dir: &std::path::Path, net: &WireNetwork) -> Starter {
        let mut vars = settings(net);
        vars.extend(
            a.membership_ms
                .map(|ms| ("PARLEY_WORKER_MEMBERSHIP_MS".to_string(), ms.to_string())),
        );
        vars.extend(
            a.runtime_threads
                .map(|n| ("PARLEY_RUNTIME_THREADS".to_string(), n.to_string())),
        );
        if a.cluster {
            let env = parley_tests::services::ClusterEnv::new().await;
            vars.extend(env.vars());
            let (ok, out) = parley_tests::process::run_once(&a.bin, &["migrate"], dir, &vars).await;
            assert!(ok, "migrate: {out}");
        }
        Starter {
            vars,
            bin: a.bin.clone(),
            dir: dir.to_path_buf(),
            workers: a.cluster.then_some(usize::from(a.workers)),
        }
    }

    async fn role(&self, role: &str, pod: Option<String>) -> Parley {
        let mut vars = self.vars.clone();
        vars.extend(pod.map(|pod| ("PARLEY_POD_NAME".to_string(), pod)));
        Parley::start(&self.bin, &[role], &self.dir, &vars).await
    }

    /// The processes that hold sessions: `serve`, or the workers.
    async fn holders(&self) -> Vec<Parley> {
        let Some(n) = self.workers else {
            return vec![self.role("serve", None).await];
        };
        let mut workers = Vec::with_capacity(n);
        for i in 0..n {
            workers.push(self.role("worker", Some(format!("worker-{i}"))).await);
        }
        workers
    }

    async fn gateway(&self) -> Gateway {
        let mut holders = self.holders().await;
        if self.workers.is_none() {
            let front = holders.remove(0);
            return Gateway {
                front,
                workers: vec![],
            };
        }
        Gateway {
            front: self.role("api", Some("api-0".into())).await,
            workers: holders,
        }
    }

    /// Stops the processes that hold sessions (SIGTERM).
    async fn stop_holders(&self, g: &mut Gateway) {
        for p in g.holders_mut() {
            p.terminate().await;
        }
    }

    /// Starts the processes that hold sessions again.
    async fn start_holders(&self, g: &mut Gateway) {
        let mut holders = self.holders().await;
        if self.workers.is_none() {
            g.front = holders.remove(0);
        } else {
            g.workers = holders;
        }
    }
}

impl Gateway {
    /// The resident memory of the processes that hold sessions, in KiB.
    fn holders_rss_kib(&self) -> u64 {
        self.holders().into_iter().filter_map(Parley::rss_kib).sum()
    }

    /// The processes that hold sessions, to stop them.
    fn holders_mut(&mut self) -> Vec<&mut Parley> {
        if self.workers.is_empty() {
            vec![&mut self.front]
        } else {
            self.workers.iter_mut().collect()
        }
    }

    /// The processes that hold sessions.
    fn holders(&self) -> Vec<&Parley> {
        if self.workers.is_empty() {
            vec![&self.front]
        } else {
            self.workers.iter().collect()
        }
    }

    /// Every process's id with its name in the CPU figures.
    fn labelled_pids(&self) -> Vec<(String, u32)> {
        let front = if self.workers.is_empty() {
            "serve"
        } else {
            "api"
        };
        let workers = (1..).map(|n| format!("worker {n}"));
        std::iter::once((front.to_string(), &self.front))
            .chain(workers.zip(&self.workers))
            .filter_map(|(label, p)| Some((label, p.pid()?)))
            .collect()
    }

    /// Every process's id.
    fn pids(&self) -> Vec<u32> {
        self.labelled_pids()
            .into_iter()
            .map(|(_, pid)| pid)
            .collect()
    }

    /// CPU seconds all processes used so far.
    fn cpu(&self) -> f64 {
        self.pids().into_iter().map(cpu::seconds).sum()
    }

    async fn terminate(&mut self) {
        for w in &mut self.workers {
            w.terminate().await;
        }
        self.front.terminate().await;
    }
}

async fn post(http: &reqwest::Client, p: &Parley, path: &str, body: Value) -> Value {
    let res = http
        .post(p.url(path))
        .bearer_auth(TOKEN)
        .json(&body)
        .send()
        .await
        .expect("request");
    res.json().await.unwrap_or(Value::Null)
}

/// How many sessions the processes that hold them report connected.
async fn connected(http: &reqwest::Client, g: &Gateway) -> usize {
    let mut n = 0;
    for p in g.holders() {
        n += connected_on(http, p).await;
    }
    n
}

/// How many sessions one process reports it holds connected.
async fn connected_on(http: &reqwest::Client, p: &Parley) -> usize {
    let Ok(res) = http.get(p.url("/health/clients")).send().await else {
        return 0;
    };
    let body: Value = res.json().await.unwrap_or(Value::Null);
    body["clients"]
        .as_array()
        .map(|cs| cs.iter().filter(|c| c["connected"] == true).count())
        .unwrap_or(0)
}

async fn wait_connected(
    http: &reqwest::Client,
    g: &Gateway,
    n: usize,
    limit: Duration,
) -> Duration {
    let start = Instant::now();
    while connected(http, g).await < n {
        assert!(
            start.elapsed() < limit,
            "not all {n} sessions connected within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    start.elapsed()
}

/// Pairs session `i` with its phone, which the server signs for.
async fn pair(http: &reqwest::Client, p: &Parley, net: &WireNetwork, hook: &str, i: usize) {
    let id = format!("b{i}");
    post(
        http,
        p,
        &format!("/start?clientId={id}"),
        json!({"webhookUrl": hook}),
    )
    .await;
    let number = phone(i);
    net.provision(&number, rand10::random(), "Bench phone");
    let identity = KeyPair::generate(&mut rand10::rng());
    net.give_phone_keys(&number, &identity).expect("phone keys");
    // A code read just before the session showed the next one (or started
    // pairing again on a new socket) is scanned too late: read it again.
    let until = Instant::now() + Duration::from_secs(120);
    loop {
        let res = http
            .get(p.url(&format!("/qr?clientId={id}")))
            .bearer_auth(TOKEN)
            .send()
            .await
            .expect("qr");
        let body: Value = res.json().await.unwrap_or(Value::Null);
        if let Some(qr) = body["qr"].as_str().filter(|q| !q.is_empty()) {
            let qr = match parley_tests::qr::try_decode_data_url(qr) {
                Ok(qr) => qr,
                Err(e) if Instant::now() < until => {
                    eprintln!("{id}: code not read ({e}): waiting for the next");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
                Err(e) => panic!("{id}: no code could be read: {e}"),
            };
            match net.scan(&qr, &number, &identity) {
                Ok(_) => return,
                Err(e) if Instant::now() < until => eprintln!("{id}: scan again ({e})"),
                Err(e) => panic!("{id}: no code could be scanned: {e}"),
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::main]
async fn main() {
    let a = args();
    let http = reqwest::Client::new();
    let net = WireNetwork::start().await.expect("test network");
    net.require_privacy_tokens(a.tokens);
    let mut hooks = Receiver::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut g = memory_and_restart(&a, &http, &net, &hooks, dir.path()).await;
    cpu_figures(&a, &http, &net, &mut hooks, &g).await;
    if a.kill_worker && g.workers.len() > 1 {
        kill_busiest_worker(&a, &http, &net, &mut g).await;
    }
    g.terminate().await;
}

/// SIGKILLs the worker holding the most sessions; prints the time until
/// every session is connected on the others, and the most sockets one
/// device had open at once on the network over the whole run.
async fn kill_busiest_worker(a: &Args, http: &reqwest::Client, net: &WireNetwork, g: &mut Gateway) {
    let mut held = Vec::new();
    for w in &g.workers {
        held.push(connected_on(http, w).await);
    }
    let busiest = (0..held.len()).max_by_key(|&i| held[i]).expect("workers");
    let mut victim = g.workers.remove(busiest);
    let killed = Instant::now();
    victim.kill().await;
    wait_connected(http, g, a.sessions, Duration::from_secs(120)).await;
    let moved = killed.elapsed();
    // Each session's phone links one companion: device 1.
    let most = (0..a.sessions)
        .map(|i| net.most_live_sockets(&phone(i), 1))
        .max()
        .unwrap_or(0);
    println!(
        "kill: SIGKILL of the worker holding {} of {} sessions: all connected on the other {} workers {:.1} s after it; most live sockets of one device at once: {most}",
        held[busiest],
        a.sessions,
        g.workers.len(),
        moved.as_secs_f64()
    );
}

/// The contact writes to every session once, and waits until each message
/// arrived as a webhook (and, with tokens, each session holds the token the
/// contact issued it).
async fn warm_up(a: &Args, net: &WireNetwork, hooks: &mut Receiver, contact: &TestDevice) {
    for i in 0..a.sessions {
        let to = format!("{}@s.whatsapp.net", phone(i));
        contact
            .send_text(&to, "hello")
            .await
            .expect("contact sends");
    }
    let mut arrived = 0;
    while arrived < a.sessions && hooks.maybe_next(Duration::from_secs(30)).await.is_some() {
        arrived += 1;
    }
    if a.tokens {
        let watcher = net.watcher();
        for i in 0..a.sessions {
            let held = watcher
                .holds_token(&phone(i), 1, CONTACT, Duration::from_secs(30))
                .await;
            assert!(held, "session {i} got no token from the contact");
        }
    }
    println!(
        "warm-up: the contact wrote to {arrived} of {} sessions first",
        a.sessions
    );
}

/// Pairs every session and waits until all are connected.
async fn pair_all(
    a: &Args,
    http: &reqwest::Client,
    net: &WireNetwork,
    hooks: &Receiver,
    g: &Gateway,
) {
    let started = Instant::now();
    futures::stream::iter(0..a.sessions)
        .map(|i| pair(http, &g.front, net, &hooks.url, i))
        .buffer_unordered(16)
        .collect::<Vec<()>>()
        .await;
    wait_connected(http, g, a.sessions, Duration::from_secs(600)).await;
    println!(
        "paired and connected {} sessions in {:.1} s",
        a.sessions,
        started.elapsed().as_secs_f64()
    );
}

/// The sessions' processes' (`serve`'s, or the workers') RSS per connected
/// session, then the time they take to bring every session back when
/// stopped and started again. Returns the restarted gateway.
async fn memory_and_restart(
    a: &Args,
    http: &reqwest::Client,
    net: &WireNetwork,
    hooks: &Receiver,
    dir: &std::path::Path,
) -> Gateway {
    let start = Starter::new(a, dir, net).await;
    let mut g = start.gateway().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let idle_kib = g.holders_rss_kib();
    pair_all(a, http, net, hooks, &g).await;
    // Let start-up work (key uploads, syncs) settle before measuring.
    tokio::time::sleep(Duration::from_secs(10)).await;
    let busy_kib = g.holders_rss_kib();
    let per = (busy_kib.saturating_sub(idle_kib)) as f64 / a.sessions as f64;
    let whose = match start.workers {
        Some(n) => format!("workers' RSS ({n} workers)"),
        None => "RSS".to_string(),
    };
    println!(
        "{whose}: idle {:.1} MiB, with {} connected sessions {:.1} MiB: {:.0} KiB per session",
        idle_kib as f64 / 1024.0,
        a.sessions,
        busy_kib as f64 / 1024.0,
        per
    );

    // Restart: every session comes back from its stored keys.
    start.stop_holders(&mut g).await;
    let restarted = Instant::now();
    start.start_holders(&mut g).await;
    wait_connected(http, &g, a.sessions, Duration::from_secs(600)).await;
    println!(
        "restart: {} sessions connected again {:.1} s after their processes were started again",
        a.sessions,
        restarted.elapsed().as_secs_f64()
    );
    settle(&g).await;
    g
}

/// Waits until the gateway is idle (under 5% of a core over 2 s, at most
/// 120 s), so the figures that follow are the messages' own: the phones
/// here share no app-state key (they have no client), and each session's
/// library retries its first app-state sync about once a second for
/// its first 40 s or so after a login.
async fn settle(g: &Gateway) {
    const WINDOW: Duration = Duration::from_secs(2);
    let start = Instant::now();
    loop {
        let before = g.cpu();
        tokio::time::sleep(WINDOW).await;
        let busy = (g.cpu() - before) / WINDOW.as_secs_f64();
        if busy < 0.05 || start.elapsed() > Duration::from_secs(120) {
            println!(
                "settled: {:.0}% of a core busy after {:.0} s idle",
                busy * 100.0,
                start.elapsed().as_secs_f64()
            );
            return;
        }
    }
}

/// CPU of every gateway process per text sent and per text received, paced
/// at `rate` per second.
async fn cpu_figures(
    a: &Args,
    http: &reqwest::Client,
    net: &WireNetwork,
    hooks: &mut Receiver,
    g: &Gateway,
) {
    let p = &g.front;
    // CPU per text sent through the API, paced at `rate` per second over the sessions.
    let contact = TestDevice::start(net, CONTACT, "Bench contact")
        .await
        .expect("contact");
    if a.warm_up {
        warm_up(a, net, hooks, &contact).await;
    }
    let pace = Duration::from_secs_f64(1.0 / f64::from(a.rate));
    let before = g.cpu();
    let each_before = cpu::Snapshot::take(&g.labelled_pids(), OWN);
    let t0 = Instant::now();
    let mut sends = Vec::new();
    for k in 0..a.messages {
        let id = format!("b{}", k % a.sessions);
        let http = http.clone();
        let url = p.url("/send-message");
        sends.push(tokio::spawn(async move {
            http.post(url)
                .bearer_auth(TOKEN)
                .json(&json!({"clientId": id, "to": format!("+{CONTACT}"), "body": format!("bench {k}")}))
                .send()
                .await
                .map(|r| r.status().as_u16())
                .unwrap_or(0)
        }));
        tokio::time::sleep_until((t0 + pace * (k as u32 + 1)).into()).await;
    }
    let ok = futures::future::join_all(sends)
        .await
        .into_iter()
        .filter(|s| matches!(s, Ok(200)))
        .count();
    let spent = g.cpu() - before;
    let achieved = a.messages as f64 / t0.elapsed().as_secs_f64();
    println!(
        "sends: {ok} of {} answered 200, asked {} /s, achieved {achieved:.0} /s; CPU {:.2} ms per send ({} processes)",
        a.messages,
        a.rate,
        spent * 1000.0 / a.messages as f64,
        g.pids().len()
    );
    each_before.print_per_request(
        &cpu::Snapshot::take(&g.labelled_pids(), OWN),
        a.messages as u64,
        t0.elapsed().as_secs_f64(),
    );
    while hooks.maybe_next(Duration::from_millis(500)).await.is_some() {}

    // CPU per text received: contacts write to the sessions' phones, each
    // on its share of the paced schedule; every text arrives as a webhook.
    let mut writers = vec![std::sync::Arc::new(contact)];
    for c in 1..WRITERS {
        let number = format!("{}{c}", &CONTACT[..CONTACT.len() - 1]);
        let device = TestDevice::start(net, &number, "Bench contact")
            .await
            .expect("contact");
        writers.push(std::sync::Arc::new(device));
    }
    let before = g.cpu();
    let each_before = cpu::Snapshot::take(&g.labelled_pids(), OWN);
    let t0 = Instant::now();
    let tasks: Vec<_> = writers
        .iter()
        .enumerate()
        .map(|(c, writer)| {
            let writer = std::sync::Arc::clone(writer);
            let (messages, sessions) = (a.messages, a.sessions);
            tokio::spawn(async move {
                for k in (c..messages).step_by(WRITERS) {
                    let at = t0 + pace * (k as u32 + 1);
                    tokio::time::sleep_until(at.into()).await;
                    let to = format!("{}@s.whatsapp.net", phone(k % sessions));
                    writer
                        .send_text(&to, &format!("in {k}"))
                        .await
                        .expect("contact sends");
                }
            })
        })
        .collect();
    futures::future::join_all(tasks).await;
    let mut delivered = 0;
    while delivered < a.messages {
        if hooks.maybe_next(Duration::from_secs(30)).await.is_none() {
            break;
        }
        delivered += 1;
    }
    let spent = g.cpu() - before;
    let achieved = delivered as f64 / t0.elapsed().as_secs_f64();
    println!(
        "received: {delivered} of {} delivered as webhooks, asked {} /s, achieved {achieved:.0} /s; CPU {:.2} ms per message ({} processes)",
        a.messages,
        a.rate,
        spent * 1000.0 / a.messages as f64,
        g.pids().len()
    );
    each_before.print_per_request(
        &cpu::Snapshot::take(&g.labelled_pids(), OWN),
        a.messages as u64,
        t0.elapsed().as_secs_f64(),
    );
}
