//! The live feed (`GET /events/feed`): a session's event log as Server-Sent
//! Events, live, resumed from a `seq` through another API pod with nothing
//! missed and nothing repeated; its refusals; its end.
use std::collections::BTreeSet;
use std::time::Duration;

use futures::StreamExt;
use parley_tests::receiver::Receiver;
use serde_json::{Value, json};
use tokio::time::{Instant, timeout_at};

use super::support::*;
use crate::support::*;

/// One Server-Sent Events message.
#[derive(Debug, Default)]
struct Frame {
    id: Option<u64>,
    event: Option<String>,
    data: String,
}

/// A feed being read.
struct Feed {
    body: futures::stream::BoxStream<'static, reqwest::Result<Vec<u8>>>,
    buf: String,
}

impl Feed {
    /// Opens `id`'s feed on `p` after `after` (or resuming with `Last-Event-ID`).
    async fn open(p: &Parley, id: &str, after: Option<u64>, resume: Option<u64>) -> Feed {
        let mut req = client()
            .get(p.url(&format!("/events/feed?clientId={id}")))
            .bearer_auth(TOKEN);
        if let Some(after) = after {
            req = req.query(&[("after", after)]);
        }
        if let Some(seq) = resume {
            req = req.header("Last-Event-ID", seq.to_string());
        }
        let res = req.send().await.expect("feed request");
        assert_eq!(res.status(), 200, "{:?}", res.text().await);
        assert_eq!(
            res.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        Feed {
            body: res.bytes_stream().map(|c| c.map(|b| b.to_vec())).boxed(),
            buf: String::new(),
        }
    }

    /// The next message (comments and `retry:` skipped); `None` when the
    /// stream ended. Fails past `deadline`.
    async fn next(&mut self, deadline: Instant) -> Option<Frame> {
        loop {
            while let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut frame = Frame::default();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id: ") {
                        frame.id = Some(v.parse().expect("numeric id"));
                    } else if let Some(v) = line.strip_prefix("event: ") {
                        frame.event = Some(v.to_string());
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        frame.data.push_str(v);
                    }
                }
                if frame.id.is_some() || frame.event.is_some() {
                    return Some(frame);
                }
            }
            let chunk = timeout_at(deadline, self.body.next())
                .await
                .expect("the feed said nothing before the deadline")?;
            self.buf
                .push_str(std::str::from_utf8(&chunk.expect("feed body")).expect("UTF-8"));
        }
    }
}

/// Reads events until every id of `wanted` arrived or the feed ends with a
/// named message (returned); checks each `seq` follows the last one.
async fn read_until(
    feed: &mut Feed,
    last: &mut u64,
    seen: &mut Vec<String>,
    wanted: &BTreeSet<String>,
) -> Option<Frame> {
    let deadline = Instant::now() + WAIT;
    while !wanted.iter().all(|w| seen.contains(w)) {
        let frame = feed.next(deadline).await.expect("the feed ended early");
        let Some(seq) = frame.id else {
            return Some(frame);
        };
        assert_eq!(seq, *last + 1, "seq after {last}: {}", frame.data);
        *last = seq;
        let event: Value = serde_json::from_str(&frame.data).expect("JSON data");
        assert_eq!(event["seq"], seq, "{event}");
        if let Some(message_id) = event["messageId"].as_str() {
            seen.push(message_id.to_string());
        }
    }
    None
}

async fn texts(p: &Parley, id: &str, range: std::ops::Range<usize>) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    for n in range {
        ids.insert(text(p, id, &format!("feed {n}")).await);
    }
    ids
}

#[tokio::test]
async fn a_feed_resumes_through_another_api_pod_with_every_event_once() {
    let dir = tempfile::tempdir().unwrap();
    let env = services::ClusterEnv::new().await;
    let rx = Receiver::start().await;
    let (mut api, _worker) = api_and_worker(&env, dir.path(), EVENT_VARS).await;
    let mut all = env.vars();
    all.extend(vars(&[("PARLEY_ACCOUNT_TOKEN", TOKEN)]));
    all.extend(network_vars(dir.path()));
    all.extend(vars(EVENT_VARS));
    let other = Parley::start(gateway_bin(), &["api"], dir.path(), &all).await;
    hooked(&api, "lf", &rx.url, json!({})).await;
    contact(&api).await;

    // Logged before the feed opens, then while it is open.
    let mut wanted = texts(&other, "lf", 0..15).await;
    let mut feed = Feed::open(&api, "lf", None, None).await;
    let (mut last, mut seen) = (0, Vec::new());
    assert!(
        read_until(&mut feed, &mut last, &mut seen, &wanted)
            .await
            .is_none()
    );
    let live = texts(&other, "lf", 15..30).await;
    wanted.extend(live);
    assert!(
        read_until(&mut feed, &mut last, &mut seen, &wanted)
            .await
            .is_none()
    );

    // The pod stops: the feed says so and ends; events logged meanwhile
    // come through the other pod, after the last seq received.
    let code = api.terminate().await;
    assert_eq!(code, Some(0), "{}", api.output());
    let end = feed
        .next(Instant::now() + WAIT)
        .await
        .expect("an end message");
    assert_eq!(end.event.as_deref(), Some("end"), "{end:?}");
    assert!(feed.next(Instant::now() + WAIT).await.is_none());
    wanted.extend(texts(&other, "lf", 30..45).await);
    let mut resumed = Feed::open(&other, "lf", Some(0), Some(last)).await;
    assert!(
        read_until(&mut resumed, &mut last, &mut seen, &wanted)
            .await
            .is_none()
    );
    let distinct: BTreeSet<&String> = seen.iter().collect();
    assert_eq!(distinct.len(), seen.len(), "an event came twice: {seen:?}");
    assert_eq!(seen.len(), wanted.len(), "{seen:?}");
}

#[tokio::test]
async fn a_feed_follows_its_session_refuses_what_it_cannot_serve_and_ends_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let database = services::fresh_postgres().await;
    let mut more = EVENT_VARS.to_vec();
    more.extend([
        ("PARLEY_LIVE_FEED_LIMIT", "1"),
        ("PARLEY_DATABASE_URL", database.as_str()),
    ]);
    let p = serve_with(dir.path(), &more).await;
    let rx = Receiver::start().await;
    hooked(&p, "lv", &rx.url, json!({})).await;
    contact(&p).await;

    for (query, header, status) in [
        ("clientId=lv&after=x", None, 400),
        ("clientId=lv&after=-1", None, 400),
        ("clientId=lv", Some("1.5"), 400),
        ("after=0", None, 400),
        ("clientId=nobody", None, 404),
    ] {
        let mut req = client()
            .get(p.url(&format!("/events/feed?{query}")))
            .bearer_auth(TOKEN);
        if let Some(h) = header {
            req = req.header("Last-Event-ID", h);
        }
        let res = req.send().await.unwrap();
        assert_eq!(res.status(), status, "{query} {header:?}");
        let body: Value = res.json().await.unwrap();
        assert!(body["error"].is_string(), "{body}");
    }
    let res = client()
        .get(p.url("/events/feed?clientId=lv"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);

    // Two events the log no longer keeps (as retention would delete them):
    // the feed names the hole, then goes on.
    let mut wanted = texts(&p, "lv", 0..4).await;
    let (_, page) = get(&p, "/events?clientId=lv&limit=500").await;
    let event_of = |n: usize| {
        let body = format!("feed {n}");
        page["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["event"]["body"] == body.as_str())
            .cloned()
            .expect("logged")
    };
    let seq_of = |n: usize| event_of(n)["seq"].as_u64().unwrap();
    let (kept, next) = (seq_of(0), seq_of(3));
    assert_eq!((seq_of(1), seq_of(2), next), (kept + 1, kept + 2, kept + 3));
    let db = parley_shared::db::Db::connect(&database).await.unwrap();
    use parley_shared::db::ConnectionTrait;
    db.conn()
        .execute_unprepared(&format!(
            "DELETE FROM events WHERE client_id = 'lv' AND seq IN ({}, {})",
            kept + 1,
            kept + 2
        ))
        .await
        .unwrap();
    for n in [1, 2] {
        let id = event_of(n)["event"]["messageId"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(wanted.remove(&id));
    }
    let mut feed = Feed::open(&p, "lv", Some(0), None).await;
    let (mut last, mut seen) = (0, Vec::new());
    let gap = read_until(&mut feed, &mut last, &mut seen, &wanted)
        .await
        .expect("a gap message");
    assert_eq!(gap.event.as_deref(), Some("gap"), "{gap:?}");
    let hole: Value = serde_json::from_str(&gap.data).unwrap();
    assert_eq!(hole, json!({"after": kept, "next": next}));
    last = next - 1;
    assert!(
        read_until(&mut feed, &mut last, &mut seen, &wanted)
            .await
            .is_none()
    );

    // Live: what comes next arrives on the open feed.
    wanted.extend(texts(&p, "lv", 4..7).await);
    assert!(
        read_until(&mut feed, &mut last, &mut seen, &wanted)
            .await
            .is_none()
    );

    // Its one slot is taken.
    let res = client()
        .get(p.url("/events/feed?clientId=lv"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 503);
    assert_eq!(res.headers()["retry-after"], "2");

    let (status, body) = post(&p, "/disconnect", json!({"clientId": "lv"})).await;
    assert_eq!(status, 200, "{body}");
    let end = feed
        .next(Instant::now() + Duration::from_secs(10))
        .await
        .expect("an end message");
    assert_eq!(end.event.as_deref(), Some("end"), "{end:?}");
    assert!(end.data.contains("deleted"), "{end:?}");
}
