//! The cluster's event stream under the event log: what a stream consumer
//! sees, what `/disconnect` removes, and that a publish the stream refuses
//! (unreachable, deleted, full) writes nothing and takes no `seq`.
use async_nats::jetstream::stream::LastRawMessageErrorKind;
use parley_shared::db::events::{Appended, DeliveryState, NewEvent};
use parley_shared::db::testing::{TestDb, nats_url};
use parley_shared::db::{Db, DbError};
use parley_shared::event_stream::{
    EVENT_ID_HEADER, EventStream, KIND_HEADER, SEQ_HEADER, StreamSettings,
};

async fn owned(db: &Db, client_id: &str) {
    super::events::owned(db, client_id, 1).await;
}

async fn append(db: &Db, client_id: &str, id: &str, pad: usize) -> Result<Appended, DbError> {
    let new = NewEvent {
        event_id: id,
        kind: "text",
        state: DeliveryState::Pending,
        cap: 1_000,
    };
    let id = id.to_string();
    db.append_event(client_id, 1, new, move |seq| {
        format!(
            r#"{{"eventId":"{id}","seq":{seq},"pad":"{}"}}"#,
            "x".repeat(pad)
        )
        .into_bytes()
    })
    .await
}

async fn seq_of(db: &Db, client_id: &str, id: &str) -> u64 {
    match append(db, client_id, id, 0).await.expect("append") {
        Appended::Logged(e) => e.seq,
        other => panic!("{id}: {other:?}"),
    }
}

async fn client() -> async_nats::Client {
    async_nats::connect(nats_url()).await.expect("NATS")
}

/// An hour's retention and `max_bytes`, one copy.
fn settings(max_bytes: u64) -> StreamSettings {
    StreamSettings {
        max_age: std::time::Duration::from_secs(3600),
        max_bytes,
        replicas: 1,
    }
}

fn cluster_of(stream: &EventStream) -> String {
    stream.name().trim_end_matches("-events").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_reads_each_event_on_its_sessions_subject() {
    let fixture = TestDb::postgres_stream().await;
    let db = &fixture.db;
    let stream = db.event_stream().expect("stream").clone();
    owned(db, "shop").await;
    owned(db, "other").await;
    assert_eq!(seq_of(db, "shop", "e1").await, 1);
    assert_eq!(seq_of(db, "other", "o1").await, 1);
    assert_eq!(seq_of(db, "shop", "e2").await, 2);

    let js = async_nats::jetstream::new(client().await);
    let raw = js.get_stream(stream.name()).await.expect("stream");
    let last = raw
        .get_last_raw_message_by_subject(&stream.subject("shop"))
        .await
        .expect("the session's last event");
    assert_eq!(
        last.subject.as_str(),
        format!("{}.events.shop", cluster_of(&stream))
    );
    let header = |name: &str| last.headers.get(name).map(|v| v.as_str().to_string());
    assert_eq!(header(EVENT_ID_HEADER).as_deref(), Some("e2"));
    assert_eq!(header(SEQ_HEADER).as_deref(), Some("2"));
    assert_eq!(header(KIND_HEADER).as_deref(), Some("text"));
    assert_eq!(&last.payload[..], br#"{"eventId":"e2","seq":2,"pad":""}"#);

    // `/disconnect` deletes the session: its bodies leave the stream, the
    // other session's stay.
    assert!(db.delete_session("shop").await.expect("delete"));
    let gone = raw
        .get_last_raw_message_by_subject(&stream.subject("shop"))
        .await;
    assert_eq!(
        gone.expect_err("purged").kind(),
        LastRawMessageErrorKind::NoMessageFound
    );
    assert_eq!(
        db.events_after("other", 0, 10).await.expect("read").len(),
        1
    );
    fixture.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_publish_writes_nothing_and_takes_no_seq() {
    let fixture = TestDb::postgres_stream().await;
    let db = &fixture.db;
    let stream = db.event_stream().expect("stream").clone();
    owned(db, "s").await;
    assert_eq!(seq_of(db, "s", "e1").await, 1);

    // The stream is gone (as when JetStream is down): nothing is logged.
    stream.delete().await.expect("delete");
    let refused = append(db, "s", "e2", 0).await;
    assert!(
        matches!(refused, Err(DbError::Unavailable(_))),
        "{refused:?}"
    );

    // Back again: the next event takes the next seq, no gap.
    let settings = settings(64 << 20);
    EventStream::open(client().await, &cluster_of(&stream), &settings)
        .await
        .expect("reopen");
    assert_eq!(seq_of(db, "s", "e2").await, 2);
    let logged = db.events_after("s", 0, 10).await.expect("read");
    // e1's body went with the deleted stream: only e2 can be read.
    assert_eq!(logged.iter().map(|e| e.seq).collect::<Vec<_>>(), [2]);
    fixture.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_stream_refuses_new_events_and_keeps_the_old() {
    let fixture = TestDb::postgres().await;
    let cluster = format!("t{}", uuid::Uuid::new_v4().simple());
    let settings = settings(1 << 20);
    let stream = EventStream::open(client().await, &cluster, &settings)
        .await
        .expect("open");
    let db = fixture.db.clone().with_event_stream(stream.clone());
    owned(&db, "s").await;
    let mut logged = 0u64;
    let refused = loop {
        match append(&db, "s", &format!("e{logged}"), 64 << 10).await {
            Ok(Appended::Logged(e)) => {
                logged += 1;
                assert_eq!(e.seq, logged);
            }
            Ok(other) => panic!("{other:?}"),
            Err(e) => break e,
        }
        assert!(
            logged < 32,
            "1 MiB should not take {logged} bodies of 64 KiB"
        );
    };
    assert!(matches!(refused, DbError::Unavailable(_)), "{refused:?}");
    assert!(logged >= 10, "{logged}");
    // Nothing older was dropped to make room.
    let kept = db.events_after("s", 0, 100).await.expect("read");
    assert_eq!(kept.len() as u64, logged);
    stream.delete().await.expect("delete");
    fixture.finish().await;
}

/// The consumer `docs/api.md` shows (`The event stream`), run for real: a
/// durable pull consumer on one session's subject reads its events in `seq`
/// order, and resumes after its last acknowledgement.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_consumer_reads_one_sessions_events_in_order() {
    use async_nats::jetstream::consumer::pull;
    use futures::StreamExt;

    let fixture = TestDb::postgres_stream().await;
    let db = &fixture.db;
    let stream_name = db.event_stream().expect("stream").name().to_string();
    let subject = db.event_stream().expect("stream").subject("shop");
    owned(db, "shop").await;
    owned(db, "other").await;
    for n in 1..=3 {
        seq_of(db, "shop", &format!("s{n}")).await;
        seq_of(db, "other", &format!("o{n}")).await;
    }

    let js = async_nats::jetstream::new(client().await);
    let read = |count: usize| {
        let js = js.clone();
        let (stream_name, subject) = (stream_name.clone(), subject.clone());
        async move {
            let stream = js.get_stream(&stream_name).await.expect("stream");
            let consumer = stream
                .get_or_create_consumer(
                    "archive-shop",
                    pull::Config {
                        durable_name: Some("archive-shop".into()),
                        filter_subject: subject,
                        ack_wait: std::time::Duration::from_secs(5),
                        ..Default::default()
                    },
                )
                .await
                .expect("consumer");
            let mut messages = consumer.messages().await.expect("messages");
            let mut got = Vec::new();
            while got.len() < count {
                let next =
                    tokio::time::timeout(std::time::Duration::from_secs(10), messages.next());
                let message = next
                    .await
                    .expect("in time")
                    .expect("a message")
                    .expect("ok");
                let seq = message.headers.as_ref().and_then(|h| h.get(SEQ_HEADER));
                let seq = seq.map(|v| v.as_str().to_string()).expect("Parley-Seq");
                let event: serde_json::Value =
                    serde_json::from_slice(&message.payload).expect("JSON");
                got.push((seq, event["eventId"].as_str().expect("eventId").to_string()));
                message.ack().await.expect("ack");
            }
            got
        }
    };
    let pairs = |ids: &[(u32, &str)]| -> Vec<(String, String)> {
        ids.iter()
            .map(|(s, id)| (s.to_string(), id.to_string()))
            .collect()
    };
    assert_eq!(read(3).await, pairs(&[(1, "s1"), (2, "s2"), (3, "s3")]));
    // Later events only: the durable consumer resumes after its last ack
    // (s4 may first go to the stopped reader's open pull request, then
    // comes again after `ack_wait`, within the read's 10 s).
    seq_of(db, "shop", "s4").await;
    assert_eq!(read(1).await, pairs(&[(4, "s4")]));
    fixture.finish().await;
}
