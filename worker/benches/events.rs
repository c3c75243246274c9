//! Event delivery load: how many events one worker's pipeline normalizes, signs
//! and delivers per second to a fast local receiver, with loss counted; and how
//! much memory it holds while a receiver is down under a steady event rate;
//! with `--history-rate N`, also the delivery latency of sessions that keep a
//! hosted inbox on PostgreSQL (each event written to history before it is
//! queued, one feeding task per session as in the worker).
//!
//! `cargo bench -p parley-worker --bench events -- [--rate N] [--seconds S]
//!  [--sessions K] [--outage-seconds S] [--outage-rate N] [--history-rate N]
//!  [--history-sessions K]`
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parley_shared::egress::Egress;
use parley_tests::receiver::Receiver;
use parley_tests::stats::percentile;
use parley_worker::events::{Activity, EventPipeline, SessionEvents};
use parley_worker::webhook::RetryPolicy;
use tokio::time::MissedTickBehavior;

struct Args {
    rate: u64,
    seconds: u64,
    sessions: usize,
    outage_seconds: u64,
    outage_rate: u64,
    history_rate: u64,
    history_sessions: usize,
}

fn args() -> Args {
    let mut a = Args {
        rate: 5_000,
        seconds: 10,
        sessions: 20,
        outage_seconds: 60,
        outage_rate: 1_000,
        history_rate: 0,
        history_sessions: 200,
    };
    let raw: Vec<String> = std::env::args().collect();
    let mut i = 1;
    while i < raw.len() {
        let value = raw.get(i + 1).and_then(|v| v.parse::<u64>().ok());
        match (raw[i].as_str(), value) {
            ("--rate", Some(v)) => a.rate = v,
            ("--seconds", Some(v)) => a.seconds = v,
            ("--sessions", Some(v)) => a.sessions = v as usize,
            ("--outage-seconds", Some(v)) => a.outage_seconds = v,
            ("--outage-rate", Some(v)) => a.outage_rate = v,
            ("--history-rate", Some(v)) => a.history_rate = v,
            ("--history-sessions", Some(v)) => a.history_sessions = v as usize,
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    a
}

fn open(pipeline: &EventPipeline, n: usize, url: &str) -> Vec<SessionEvents> {
    (0..n)
        .map(|i| support::open_session(pipeline, &format!("bench{i}"), url))
        .collect()
}

/// Feeds `rate` events per second for `seconds` (open model) round-robin over `sessions`.
async fn feed(pipeline: &EventPipeline, sessions: &[SessionEvents], rate: u64, seconds: u64) {
    let mut tick = tokio::time::interval(Duration::from_nanos(1_000_000_000 / rate.max(1)));
    tick.set_missed_tick_behavior(MissedTickBehavior::Burst);
    for n in 0..rate * seconds {
        tick.tick().await;
        let session = &sessions[n as usize % sessions.len()];
        let activity = Activity {
            msg: support::message(n),
            meta: None,
            file: None,
            connection: None,
            stored_type: None,
            sent: false,
        };
        pipeline.process(session, activity).await;
    }
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
        })
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Events to sessions with a hosted inbox: every event is written to history
/// on PostgreSQL, then delivered; latency from each event's intended start (open
/// model) to its arrival at the receiver.
async fn with_history(a: &Args, egress: Egress) {
    use parley_shared::media::fs::FsMediaStore;
    use parley_worker::events::HistorySink;
    use parley_worker::history::History;

    let database = parley_tests::services::fresh_postgres().await;
    let db = parley_shared::db::Db::connect(&database)
        .await
        .expect("PostgreSQL");
    db.migrate().await.expect("migrate");
    let dir = tempfile::tempdir().expect("temp dir");
    let media = Arc::new(FsMediaStore::new(
        dir.path().join("media"),
        "http://127.0.0.1",
    ));
    let mut rx = Receiver::start().await;
    // The receiver is the hosted receiver: every session keeps a hosted inbox.
    let history: Arc<dyn HistorySink> = History::new(db.clone(), media, Some(rx.url.clone()));
    let pipeline = EventPipeline::new(
        egress,
        RetryPolicy::default(),
        None,
        Some(history),
        None,
        None,
        None,
    )
    .unwrap();
    let sessions = Arc::new(open(&pipeline, a.history_sessions, &rx.url));
    let total = a.history_rate * a.seconds;
    let step = Duration::from_nanos(1_000_000_000 / a.history_rate.max(1));
    let start = tokio::time::Instant::now() + Duration::from_millis(200);
    // Event n is meant to start at start + n * step, on session n % K.
    let k = sessions.len() as u64;
    let feeders: Vec<_> = (0..k)
        .map(|s| {
            let (pipeline, sessions) = (Arc::clone(&pipeline), Arc::clone(&sessions));
            tokio::spawn(async move {
                let mut n = s;
                while n < total {
                    tokio::time::sleep_until(start + step * n as u32).await;
                    let activity = Activity {
                        msg: support::message(n),
                        meta: None,
                        file: None,
                        connection: None,
                        stored_type: None,
                        sent: false,
                    };
                    pipeline.process(&sessions[s as usize], activity).await;
                    n += k;
                }
            })
        })
        .collect();
    let start = start.into_std();
    let mut latencies = Vec::with_capacity(total as usize);
    let deadline = Instant::now() + Duration::from_secs(a.seconds + 60);
    while (latencies.len() as u64) < total && Instant::now() < deadline {
        let Some(got) = rx.maybe_next(Duration::from_secs(5)).await else {
            continue;
        };
        let id = got.json()["messageId"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let Some(n) = id
            .strip_prefix("3EB0")
            .and_then(|h| u64::from_str_radix(h, 16).ok())
        else {
            continue;
        };
        let intended = start + step * n as u32;
        latencies.push(got.at.saturating_duration_since(intended));
    }
    for feeder in feeders {
        feeder.abort();
    }
    latencies.sort();
    let stored: u64 = {
        use parley_shared::db::ConnectionTrait;
        let row = db
            .conn()
            .query_one_raw(sea_orm::Statement::from_string(
                db.conn().get_database_backend(),
                "SELECT COUNT(*) AS n FROM history_messages",
            ))
            .await
            .expect("count")
            .expect("row");
        row.try_get::<i64>("", "n").expect("n") as u64
    };
    println!(
        "hosted inbox: offered {} events/s for {} s over {} sessions (PostgreSQL history write before each delivery): received {}/{}, {} rows stored; intended start -> webhook p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        a.history_rate,
        a.seconds,
        a.history_sessions,
        latencies.len(),
        total,
        stored,
        percentile(&latencies, 0.5).as_secs_f64() * 1000.0,
        percentile(&latencies, 0.99).as_secs_f64() * 1000.0,
        latencies.last().copied().unwrap_or_default().as_secs_f64() * 1000.0,
    );
}

#[tokio::main]
async fn main() {
    let a = args();
    let egress = Egress::direct(true);
    if a.history_rate > 0 {
        with_history(&a, egress).await;
        return;
    }

    // 1. Throughput to a fast receiver.
    let mut rx = Receiver::start().await;
    let received = Arc::new(AtomicU64::new(0));
    let url = rx.url.clone();
    let counter = Arc::clone(&received);
    let drain = tokio::spawn(async move {
        loop {
            rx.next(Duration::from_secs(3600)).await;
            counter.fetch_add(1, Ordering::Relaxed);
        }
    });
    let pipeline = EventPipeline::new(
        egress.clone(),
        RetryPolicy::default(),
        None,
        None,
        None,
        None,
        None,
    )
    .unwrap();
    let sessions = open(&pipeline, a.sessions, &url);
    let total = a.rate * a.seconds;
    let started = Instant::now();
    feed(&pipeline, &sessions, a.rate, a.seconds).await;
    let fed = started.elapsed();
    let deadline = Instant::now() + Duration::from_secs(60);
    while received.load(Ordering::Relaxed) < total && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let elapsed = started.elapsed();
    let stats = pipeline.dispatcher.stats();
    let delivered = stats.delivered.load(Ordering::Relaxed);
    let mean_latency_ms = stats.delivered_latency_us.load(Ordering::Relaxed) as f64
        / delivered.max(1) as f64
        / 1000.0;
    println!(
        "throughput: offered {} events/s for {} s over {} sessions: fed in {:.2} s, received {}/{} in {:.2} s = {:.0} events/s; dropped {}; mean enqueue->2xx latency {:.2} ms",
        a.rate,
        a.seconds,
        a.sessions,
        fed.as_secs_f64(),
        received.load(Ordering::Relaxed),
        total,
        elapsed.as_secs_f64(),
        received.load(Ordering::Relaxed) as f64 / elapsed.as_secs_f64(),
        stats.dropped_total(),
        mean_latency_ms,
    );
    drain.abort();
    drop(sessions);

    // 2. Memory while the receiver is down (connections refused).
    let dead = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/hook", listener.local_addr().unwrap())
    };
    let pipeline =
        EventPipeline::new(egress, RetryPolicy::default(), None, None, None, None, None).unwrap();
    let sessions = open(&pipeline, 1, &dead);
    let before = rss_kib();
    let peak = Arc::new(AtomicU64::new(before));
    let sampler = {
        let peak = Arc::clone(&peak);
        tokio::spawn(async move {
            loop {
                peak.fetch_max(rss_kib(), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };
    feed(&pipeline, &sessions, a.outage_rate, a.outage_seconds).await;
    sampler.abort();
    let stats = pipeline.dispatcher.stats();
    println!(
        "outage: {} events/s for {} s to a receiver that refuses connections: RSS {} KiB before, peak {} KiB (+{} KiB); queue-full drops {}, exhausted {}",
        a.outage_rate,
        a.outage_seconds,
        before,
        peak.load(Ordering::Relaxed),
        peak.load(Ordering::Relaxed).saturating_sub(before),
        stats.dropped_queue_full.load(Ordering::Relaxed),
        stats.dropped_exhausted.load(Ordering::Relaxed),
    );
}
