//! The durable event path's load: events one worker's pipeline logs (SQLite as
//! in `serve`, or PostgreSQL with bodies in a JetStream stream as in the
//! cluster, or PostgreSQL alone), signs and delivers per second
//! to a fast local receiver, with loss and gaps counted; CPU time per event
//! against the same pipeline without a log; and the log's bytes per event.
//!
//! `cargo bench -p parley-worker --bench durable_events -- [--rate N]
//!  [--seconds S] [--sessions K] [--postgres] [--stream]`
mod support;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parley_shared::db::{Db, NewSession, StatePatch};
use parley_shared::egress::Egress;
use parley_tests::receiver::Receiver;
use parley_worker::events::{APPENDS_IN_FLIGHT, Activity, EventLog, EventPipeline, SessionEvents};
use parley_worker::webhook::RetryPolicy;
use sea_orm::ConnectionTrait;
use tokio::sync::Mutex;
use tokio::time::MissedTickBehavior;

struct Args {
    rate: u64,
    seconds: u64,
    sessions: usize,
    postgres: bool,
    /// Bodies in a JetStream stream (the cluster's layout; implies PostgreSQL).
    stream: bool,
}

fn args() -> Args {
    let mut a = Args {
        rate: 5_000,
        seconds: 10,
        sessions: 20,
        postgres: false,
        stream: false,
    };
    let raw: Vec<String> = std::env::args().collect();
    let mut i = 1;
    while i < raw.len() {
        let value = raw.get(i + 1).and_then(|v| v.parse::<u64>().ok());
        match (raw[i].as_str(), value) {
            ("--rate", Some(v)) => a.rate = v,
            ("--seconds", Some(v)) => a.seconds = v,
            ("--sessions", Some(v)) => a.sessions = v as usize,
            ("--postgres", _) => {
                a.postgres = true;
                i += 1;
                continue;
            }
            ("--stream", _) => {
                (a.postgres, a.stream) = (true, true);
                i += 1;
                continue;
            }
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    a
}

/// CPU seconds this process has used (user + system).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // Fields 14 and 15 of stat (utime, stime) are 11 and 12 after the name.
    (ticks(11) + ticks(12)) / 100.0
}

/// Sessions of the benchmark, stored (and owned under fence 1) when `db` is given.
async fn open(
    pipeline: &EventPipeline,
    db: Option<&Db>,
    n: usize,
    url: &str,
) -> Vec<SessionEvents> {
    let mut sessions = Vec::new();
    for i in 0..n {
        let id = format!("bench{i}");
        if let Some(db) = db {
            db.create_session(NewSession {
                client_id: id.clone(),
                ..NewSession::default()
            })
            .await
            .expect("session");
            db.fenced_update(&id, 1, StatePatch::default())
                .await
                .expect("owned");
        }
        sessions.push(support::open_session(pipeline, &id, url));
    }
    sessions
}

struct Run {
    received: usize,
    distinct: usize,
    elapsed: Duration,
    cpu: f64,
}

/// Feeds `rate` events per second for `seconds` round-robin over the sessions,
/// one feeding task per session as in the worker; waits for every delivery.
async fn run(a: &Args, db: Option<Db>) -> Run {
    let mut rx = Receiver::start().await;
    let url = rx.url.clone();
    let ids = Arc::new(Mutex::new(Vec::<String>::new()));
    let drain = {
        let ids = Arc::clone(&ids);
        tokio::spawn(async move {
            loop {
                let req = rx.next(Duration::from_secs(3600)).await;
                let id = req.header("webhook-id").unwrap_or_default().to_string();
                ids.lock().await.push(id);
            }
        })
    };
    let pipeline = EventPipeline::new(
        Egress::direct(true),
        RetryPolicy::default(),
        db.clone().map(|db| EventLog {
            db,
            session_cap: u64::MAX >> 2,
            feed: None,
        }),
        None,
        None,
        None,
        None,
    )
    .expect("pipeline");
    let sessions = open(&pipeline, db.as_ref(), a.sessions, &url).await;
    let total = a.rate * a.seconds;
    let (cpu0, started) = (cpu_seconds(), Instant::now());
    let mut feeders = Vec::new();
    let mut inboxes = Vec::new();
    for session in sessions {
        let (tx, mut inbox) = tokio::sync::mpsc::channel::<u64>(1024);
        inboxes.push(tx);
        let pipeline = Arc::clone(&pipeline);
        // As the worker's inbound task: each message begun while the ones
        // before it commit, finished in order.
        feeders.push(tokio::spawn(async move {
            let session = Arc::new(session);
            let (begun, mut in_flight) = tokio::sync::mpsc::channel(APPENDS_IN_FLIGHT);
            let finishing = {
                let (pipeline, session) = (Arc::clone(&pipeline), Arc::clone(&session));
                tokio::spawn(async move {
                    while let Some(one) = in_flight.recv().await {
                        pipeline.finish(&session, one).await;
                    }
                })
            };
            while let Some(n) = inbox.recv().await {
                let activity = Activity {
                    msg: support::message(n),
                    meta: None,
                    file: None,
                    connection: None,
                    stored_type: None,
                    sent: false,
                };
                let one = pipeline.begin(&session, activity).await;
                if begun.send(one).await.is_err() {
                    break;
                }
            }
            drop(begun);
            finishing.await.expect("finishing");
            session
        }));
    }
    let mut tick = tokio::time::interval(Duration::from_nanos(1_000_000_000 / a.rate.max(1)));
    tick.set_missed_tick_behavior(MissedTickBehavior::Burst);
    for n in 0..total {
        tick.tick().await;
        let _ = inboxes[n as usize % inboxes.len()].send(n).await;
    }
    drop(inboxes);
    let mut open_sessions = Vec::new();
    for feeder in feeders {
        open_sessions.push(feeder.await.expect("feeder"));
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    while (ids.lock().await.len() as u64) < total && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (elapsed, cpu) = (started.elapsed(), cpu_seconds() - cpu0);
    drain.abort();
    drop(open_sessions);
    let ids = ids.lock().await;
    Run {
        received: ids.len(),
        distinct: ids.iter().collect::<BTreeSet<_>>().len(),
        elapsed,
        cpu,
    }
}

/// Bytes the log holds, and how many events.
/// Bytes of the bodies in the JetStream stream (none without one).
async fn stream_bytes(db: &Db) -> u64 {
    let Some(stream) = db.event_stream() else {
        return 0;
    };
    let client = async_nats::connect(parley_tests::services::nats_url())
        .await
        .expect("NATS");
    let mut raw = async_nats::jetstream::new(client)
        .get_stream(stream.name())
        .await
        .expect("stream");
    raw.info().await.expect("stream info").state.bytes
}

async fn log_size(db: &Db, sqlite: Option<&std::path::Path>) -> (u64, u64) {
    let count = |sql: &str| {
        let sql = sql.to_string();
        async move {
            let row = db
                .conn()
                .query_one_raw(sea_orm::Statement::from_string(
                    db.conn().get_database_backend(),
                    sql,
                ))
                .await
                .expect("query")
                .expect("row");
            row.try_get_by_index::<i64>(0).expect("number") as u64
        }
    };
    let events = count("SELECT COUNT(*) FROM events").await;
    let bytes = match sqlite {
        // The database file and its write-ahead log: what the disk holds.
        Some(dir) => std::fs::read_dir(dir)
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter_map(|e| e.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0),
        None => count("SELECT pg_total_relation_size('events')").await,
    };
    (bytes + stream_bytes(db).await, events)
}

fn report(what: &str, a: &Args, r: &Run) {
    let total = a.rate * a.seconds;
    println!(
        "{what}: offered {} events/s for {} s over {} sessions: received {}/{} ({} distinct, {} duplicates) in {:.2} s = {:.0} events/s; CPU {:.1} us/event",
        a.rate,
        a.seconds,
        a.sessions,
        r.received,
        total,
        r.distinct,
        r.received - r.distinct,
        r.elapsed.as_secs_f64(),
        r.received as f64 / r.elapsed.as_secs_f64(),
        r.cpu * 1e6 / total.max(1) as f64,
    );
}

#[tokio::main]
async fn main() {
    let a = args();
    let memory = run(&a, None).await;
    report("in-memory path (no log)", &a, &memory);

    let dir = tempfile::tempdir().expect("temp dir");
    let (db, sqlite) = if a.postgres {
        let url = parley_tests::services::fresh_postgres().await;
        (Db::connect(&url).await.expect("PostgreSQL"), None)
    } else {
        let url = format!("sqlite://{}", dir.path().join("parley.db").display());
        (Db::connect(&url).await.expect("SQLite"), Some(dir.path()))
    };
    db.migrate().await.expect("migrate");
    let db = if a.stream {
        let client = async_nats::connect(parley_tests::services::nats_url())
            .await
            .expect("NATS with JetStream");
        let settings = parley_shared::event_stream::StreamSettings {
            max_age: Duration::from_secs(3600),
            max_bytes: 8 << 30,
            replicas: 1,
        };
        let cluster = parley_tests::services::unique("bench");
        let stream = parley_shared::event_stream::EventStream::open(client, &cluster, &settings)
            .await
            .expect("event stream");
        db.with_event_stream(stream)
    } else {
        db
    };
    let (empty, _) = log_size(&db, sqlite).await;
    let durable = run(&a, Some(db.clone())).await;
    let backend = match (a.postgres, a.stream) {
        (_, true) => "PostgreSQL + JetStream",
        (true, false) => "PostgreSQL",
        _ => "SQLite",
    };
    report(&format!("durable path ({backend} log)"), &a, &durable);
    let (bytes, events) = log_size(&db, sqlite).await;
    let (gaps, _) = gaps(&db).await;
    let (transactions, requests) = db.event_log_transactions();
    println!(
        "group commit: {transactions} transactions for {requests} appends and delivery records = {:.1} per transaction",
        requests as f64 / transactions.max(1) as f64
    );
    println!(
        "log: {events} events, {} bytes more on disk = {:.0} bytes/event; {gaps} gaps in seq; CPU {:.2}x the in-memory path",
        bytes.saturating_sub(empty),
        bytes.saturating_sub(empty) as f64 / events.max(1) as f64,
        durable.cpu / memory.cpu.max(1e-9),
    );
    if let Some(stream) = db.event_stream() {
        stream.delete().await.expect("delete the bench's stream");
    }
}

/// Sessions whose seqs are not 1..=n, and the sessions counted.
async fn gaps(db: &Db) -> (u64, u64) {
    let mut gaps = 0;
    let sessions = db.sessions().await.expect("sessions");
    for s in &sessions {
        let events = db
            .events_after(&s.client_id, 0, u64::MAX >> 1)
            .await
            .expect("events");
        let ok = events
            .iter()
            .enumerate()
            .all(|(i, e)| e.seq == i as u64 + 1);
        if !ok {
            gaps += 1;
        }
    }
    (gaps, sessions.len() as u64)
}
