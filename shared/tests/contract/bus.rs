//! The bus contract, run against the in-process bus and NATS.
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::future::BoxFuture;
use parley_shared::bus::memory::MemoryBus;
use parley_shared::bus::nats::NatsBus;
use parley_shared::bus::{Bus, BusError, Headers, Message, Subscription};

use crate::support::{nats_url, unique};

/// Opens a bus under the given prefix; every bus of one opener shares one network.
type Open = Arc<dyn Fn(String) -> BoxFuture<'static, Arc<dyn Bus>> + Send + Sync>;

fn memory() -> Open {
    // The root's own prefix is never used: each test opens buses under its own.
    let network = MemoryBus::new("root");
    Arc::new(move |prefix| {
        let bus: Arc<dyn Bus> = Arc::new(network.with_prefix(&prefix));
        Box::pin(async move { bus })
    })
}

fn nats() -> Open {
    Arc::new(|prefix| {
        Box::pin(async move {
            let bus = NatsBus::connect(&nats_url(), &prefix).await;
            let bus = bus.unwrap_or_else(|e| panic!("NATS must run at {}: {e}", nats_url()));
            Arc::new(bus) as Arc<dyn Bus>
        })
    })
}

/// Expands every case into one test per adapter.
macro_rules! contract_tests {
    ($adapter:ident, $open:expr) => {
        mod $adapter {
            cases!($open; round_trip_with_headers, no_responders_is_fast_and_not_timeout,
                queue_group_delivers_each_request_once, plain_subscribers_all_receive,
                a_publication_reaches_every_subscriber_and_wants_no_reply,
                dropped_subscription_has_no_responders,
                draining_hands_back_every_request_on_its_way, prefixes_isolate, healthy);
        }
    };
}

macro_rules! cases {
    ($open:expr; $($case:ident),*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                super::$case($open).await;
            }
        )*
    };
}

contract_tests!(memory, super::memory());
contract_tests!(nats, super::nats());

const TIMEOUT: Duration = Duration::from_secs(2);

fn message(payload: &'static str, headers: &[(&str, &str)]) -> Message {
    let headers: Headers = headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Message {
        headers,
        payload: Bytes::from_static(payload.as_bytes()),
    }
}

/// Answers every request of `subscription` with its payload reversed, tagged `by`.
fn serve(mut subscription: Subscription, by: &'static str) {
    tokio::spawn(async move {
        while let Some(incoming) = subscription.next().await {
            let mut payload = incoming.payload.to_vec();
            payload.reverse();
            let reply = Message {
                headers: Headers::from([("by".into(), by.into())]),
                payload: payload.into(),
            };
            incoming.respond(reply).await.unwrap();
        }
    });
}

async fn round_trip_with_headers(open: Open) {
    let bus = open(unique("bus")).await;
    let mut subscription = bus.subscribe("session.a", None).await.unwrap();
    let server = tokio::spawn(async move {
        let incoming = subscription.next().await.unwrap();
        assert_eq!(incoming.subject, "session.a");
        assert_eq!(
            incoming.headers.get("traceparent").map(String::as_str),
            Some("00-abc")
        );
        assert_eq!(
            incoming.headers.get("x-request-id").map(String::as_str),
            Some("r1")
        );
        assert_eq!(incoming.payload, "ping");
        incoming
            .respond(message("pong", &[("status", "200")]))
            .await
            .unwrap();
    });

    let request = message("ping", &[("traceparent", "00-abc"), ("x-request-id", "r1")]);
    let reply = bus.request("session.a", request, TIMEOUT).await.unwrap();
    assert_eq!(reply.payload, "pong");
    assert_eq!(reply.headers.get("status").map(String::as_str), Some("200"));
    server.await.unwrap();
}

async fn no_responders_is_fast_and_not_timeout(open: Open) {
    let bus = open(unique("bus")).await;
    let started = Instant::now();
    let error = bus
        .request("session.nobody", message("x", &[]), TIMEOUT)
        .await
        .unwrap_err();
    assert_eq!(error, BusError::NoResponders("session.nobody".into()));
    assert!(
        started.elapsed() < TIMEOUT / 4,
        "no responders took {:?}",
        started.elapsed()
    );

    // A subscriber that never answers: the request times out, after the timeout.
    let mut silent = bus.subscribe("session.silent", None).await.unwrap();
    let timeout = Duration::from_millis(300);
    let started = Instant::now();
    let error = bus
        .request("session.silent", message("x", &[]), timeout)
        .await
        .unwrap_err();
    assert_eq!(error, BusError::Timeout("session.silent".into()));
    assert!(
        started.elapsed() >= timeout,
        "timed out after {:?}",
        started.elapsed()
    );
    assert!(
        silent.next().await.is_some(),
        "the silent subscriber got the request"
    );
}

async fn queue_group_delivers_each_request_once(open: Open) {
    const N: usize = 40;
    let bus = open(unique("bus")).await;
    serve(
        bus.subscribe("start", Some("workers")).await.unwrap(),
        "one",
    );
    serve(
        bus.subscribe("start", Some("workers")).await.unwrap(),
        "two",
    );

    let mut counts = [0; 2];
    for _ in 0..N {
        let reply = bus
            .request("start", message("x", &[]), TIMEOUT)
            .await
            .unwrap();
        match reply.headers.get("by").map(String::as_str) {
            Some("one") => counts[0] += 1,
            Some("two") => counts[1] += 1,
            other => panic!("reply from {other:?}"),
        }
    }
    assert_eq!(counts[0] + counts[1], N);
    assert!(
        counts.iter().all(|&c| c > 0),
        "both members served: {counts:?}"
    );
}

async fn a_publication_reaches_every_subscriber_and_wants_no_reply(open: Open) {
    let bus = open(unique("bus")).await;
    // Nobody listens: dropped, not an error.
    bus.publish("feed.p", message("0", &[])).await.unwrap();
    let mut first = bus.subscribe("feed.p", None).await.unwrap();
    let mut second = bus.subscribe("feed.p", None).await.unwrap();
    let mut other = bus.subscribe("feed.q", None).await.unwrap();
    for (payload, headers) in [("1", &[][..]), ("2", &[("k", "v")][..])] {
        bus.publish("feed.p", message(payload, headers))
            .await
            .unwrap();
    }
    for sub in [&mut first, &mut second] {
        for (payload, header) in [("1", None), ("2", Some("v"))] {
            let got = tokio::time::timeout(TIMEOUT, sub.next())
                .await
                .expect("published in time")
                .unwrap();
            assert_eq!(got.payload, payload);
            assert_eq!(got.headers.get("k").map(String::as_str), header);
            // Answering a publication goes nowhere, and is no error.
            got.respond(message("ignored", &[])).await.unwrap();
        }
    }
    assert!(
        tokio::time::timeout(Duration::from_millis(200), other.next())
            .await
            .is_err(),
        "another subject received it"
    );
    assert!(first.try_next().is_none(), "the unsubscribed one came late");
}

async fn plain_subscribers_all_receive(open: Open) {
    let bus = open(unique("bus")).await;
    let mut first = bus.subscribe("session.b", None).await.unwrap();
    let mut second = bus.subscribe("session.b", None).await.unwrap();
    let requester = bus.clone();
    let request = tokio::spawn(async move {
        requester
            .request("session.b", message("hi", &[]), TIMEOUT)
            .await
    });

    let a = first.next().await.unwrap();
    let b = second.next().await.unwrap();
    assert_eq!(a.payload, "hi");
    assert_eq!(b.payload, "hi");
    a.respond(message("first", &[])).await.unwrap();
    // A late reply is not an error; the requester already has the first one.
    let reply = request.await.unwrap().unwrap();
    assert_eq!(reply.payload, "first");
    b.respond(message("second", &[])).await.unwrap();
}

async fn dropped_subscription_has_no_responders(open: Open) {
    let bus = open(unique("bus")).await;
    let mut subscription = bus.subscribe("session.c", None).await.unwrap();
    let server = tokio::spawn(async move {
        let incoming = subscription.next().await.unwrap();
        incoming.respond(message("ok", &[])).await.unwrap();
        subscription
    });
    bus.request("session.c", message("x", &[]), TIMEOUT)
        .await
        .unwrap();

    drop(server.await.unwrap());
    let error = bus
        .request("session.c", message("x", &[]), TIMEOUT)
        .await
        .unwrap_err();
    assert_eq!(error, BusError::NoResponders("session.c".into()));
}

/// A subscriber that goes away drains: every request already on its way is
/// handed back to it to answer (the worker answers "moved"), nothing is left
/// to time out, and then nobody is there.
async fn draining_hands_back_every_request_on_its_way(open: Open) {
    let prefix = unique("bus");
    let bus = open(prefix.clone()).await;
    // The callers are another connection, as API pods are: eight of them ask
    // one after another, so requests are on their way when the drain begins.
    let caller = open(prefix).await;
    let mut subscription = bus.subscribe("session.d", None).await.unwrap();
    let patience = Duration::from_secs(3);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let callers: Vec<_> = (0..8)
        .map(|_| {
            let (caller, stop) = (Arc::clone(&caller), Arc::clone(&stop));
            tokio::spawn(async move {
                let mut outcomes = Vec::new();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) && outcomes.len() < 5000 {
                    let sent = caller.request("session.d", message("x", &[]), patience);
                    outcomes.push(sent.await.map(|_| ()));
                }
                outcomes
            })
        })
        .collect();
    // Serve a while, then stop taking new requests.
    let mut served = 0;
    while served < 200 {
        let incoming = subscription.next().await.unwrap();
        incoming.respond(message("served", &[])).await.unwrap();
        served += 1;
    }
    subscription.drain();
    let until = tokio::time::Instant::now() + TIMEOUT;
    loop {
        match tokio::time::timeout_at(until, subscription.next()).await {
            Ok(Some(incoming)) => incoming.respond(message("moved", &[])).await.unwrap(),
            Ok(None) => break,
            Err(_) => panic!("the drain did not end within {TIMEOUT:?}"),
        }
    }
    // Callers now find nobody; let them see it a few times, then stop them.
    tokio::time::sleep(Duration::from_millis(50)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut nobody = 0;
    for caller in callers {
        for outcome in caller.await.unwrap() {
            match outcome {
                Ok(()) => {}
                Err(BusError::NoResponders(_)) => nobody += 1,
                Err(e) => panic!("a request was left without an answer: {e:?}"),
            }
        }
    }
    assert!(nobody > 0, "after the drain, requests find no responders");
}

async fn prefixes_isolate(open: Open) {
    let ours = open(unique("bus")).await;
    let theirs = open(unique("bus")).await;
    serve(theirs.subscribe("start", None).await.unwrap(), "theirs");
    // Their subscriber answers them, so it is live: yet we see nobody.
    theirs
        .request("start", message("x", &[]), TIMEOUT)
        .await
        .unwrap();
    let error = ours
        .request("start", message("x", &[]), TIMEOUT)
        .await
        .unwrap_err();
    assert_eq!(error, BusError::NoResponders("start".into()));

    serve(ours.subscribe("start", None).await.unwrap(), "ours");
    let by = |reply: Message| reply.headers.get("by").cloned();
    let reply = ours
        .request("start", message("x", &[]), TIMEOUT)
        .await
        .unwrap();
    assert_eq!(by(reply).as_deref(), Some("ours"));
    let reply = theirs
        .request("start", message("x", &[]), TIMEOUT)
        .await
        .unwrap();
    assert_eq!(by(reply).as_deref(), Some("theirs"));
}

async fn healthy(open: Open) {
    let bus = open(unique("bus")).await;
    assert!(bus.healthy().await);
    assert!(["nats", "in-process"].contains(&bus.kind()));
}
