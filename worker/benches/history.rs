//! Hosted-history load on PostgreSQL: messages written per second through the
//! batching writer by many concurrent sessions, then the p50/p99 of the query
//! behind `GET /chatrooms/{id}/messages` (last 200 of a room) with the table
//! holding that many messages.
//!
//! `cargo bench -p parley-worker --bench history -- [--messages N] [--writers K]`
//! (PostgreSQL from `PARLEY_TEST_POSTGRES_URL`, default the local server).
use std::sync::Arc;
use std::time::Instant;

use parley_contract::event::Envelope;
use parley_shared::media::fs::FsMediaStore;
use parley_tests::stats::percentile;
use parley_worker::history::History;

fn arg(name: &str, default: u64) -> u64 {
    let raw: Vec<String> = std::env::args().collect();
    raw.iter()
        .position(|a| a == name)
        .and_then(|i| raw.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn envelope(session: u64, room: u64, n: u64) -> Envelope {
    Envelope {
        event: "message.received".into(),
        kind: "text".into(),
        client_id: format!("bench{session}"),
        org_id: "org".into(),
        timestamp: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        chat_room_id: format!("bench{session}-111111111111111-{room:015}"),
        my_lid: "111111111111111".into(),
        client_lid: format!("{room:015}"),
        remote_jid: format!("{room:015}@lid"),
        remote_name: "Ana".into(),
        push_name: "Ana".into(),
        message_id: format!("3EB0{session:04X}{n:012X}"),
        body: "Hello, is the order on its way? I ordered it last Tuesday.".into(),
        ..Default::default()
    }
}

#[tokio::main]
async fn main() {
    let messages = arg("--messages", 100_000);
    let writers = arg("--writers", 200).max(1);
    let database = parley_tests::services::fresh_postgres().await;
    let db = parley_shared::db::Db::connect(&database)
        .await
        .expect("PostgreSQL");
    db.migrate().await.expect("migrate");
    let dir = tempfile::tempdir().unwrap();
    let media = Arc::new(FsMediaStore::new(
        dir.path().join("media"),
        "http://127.0.0.1",
    ));
    let history = History::new(db.clone(), media, Some("https://hosted.example".into()));

    // Writers: one per session, each writing its messages one after another
    // (as a session's event task does), spread over 2 rooms.
    let per_writer = messages / writers;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..writers {
        let history = Arc::clone(&history);
        tasks.push(tokio::spawn(async move {
            let mut took = Vec::with_capacity(per_writer as usize);
            for n in 0..per_writer {
                let at = Instant::now();
                history
                    .record(&envelope(w, n % 2, n), None)
                    .await
                    .expect("history write");
                took.push(at.elapsed());
            }
            took
        }));
    }
    let mut each = Vec::new();
    for task in tasks {
        each.extend(task.await.unwrap());
    }
    let took = started.elapsed();
    let written = per_writer * writers;
    each.sort();
    println!(
        "writes: {written} messages by {writers} concurrent sessions in {:.2} s = {:.0} messages/s",
        took.as_secs_f64(),
        written as f64 / took.as_secs_f64(),
    );
    // The pipeline writes history before it queues the webhook event: this is
    // what history adds to each event's delivery latency.
    println!(
        "write latency (added to event delivery): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        percentile(&each, 0.5).as_secs_f64() * 1000.0,
        percentile(&each, 0.99).as_secs_f64() * 1000.0,
        each.last().copied().unwrap_or_default().as_secs_f64() * 1000.0
    );

    // Reads: the last 200 of a room, with `written` messages in the table.
    let mut times = Vec::new();
    for i in 0..1000u64 {
        let (session, room) = (i % writers, i % 2);
        let room = format!("bench{session}-111111111111111-{room:015}");
        let at = Instant::now();
        let rows = db
            .last_messages(&format!("bench{session}"), &room, 200)
            .await
            .expect("read");
        times.push(at.elapsed());
        assert!(!rows.is_empty());
    }
    times.sort();
    println!(
        "reads: last 200 of a room with {written} messages stored: p50 {:.2} ms, p99 {:.2} ms over 1000 queries",
        percentile(&times, 0.5).as_secs_f64() * 1000.0,
        percentile(&times, 0.99).as_secs_f64() * 1000.0
    );
}
