//! `/metrics` after a scripted scenario: the counters moved as they must.
//! It is served on the operations listener only, never on the customer port.
use serde_json::json;

use crate::support::*;

/// The value of the first sample line starting with `prefix` (name and
/// labels), `None` when no such series is exported.
fn series(text: &str, prefix: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// The value of a series the scenario must have produced.
fn sample(text: &str, prefix: &str) -> f64 {
    series(text, prefix).unwrap_or_else(|| panic!("no series {prefix} in:\n{text}"))
}

async fn scrape(p: &Parley) -> String {
    let res = client().get(p.ops_url("/metrics")).send().await.unwrap();
    assert_eq!(res.status(), 200);
    res.text().await.unwrap()
}

#[tokio::test]
async fn metrics_are_served_on_the_operations_listener_only() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve(dir.path()).await;
    let public = client().get(p.url("/metrics")).send().await.unwrap();
    assert_eq!(public.status(), 404, "not on the customer-facing port");
    let ops = client().get(p.ops_url("/metrics")).send().await.unwrap();
    assert_eq!(ops.status(), 200);
    assert!(ops.text().await.unwrap().contains("parley_"));
    // The operations listener serves nothing else.
    for path in ["/clients", "/health/clients", "/config", "/openapi.json"] {
        let res = client().get(p.ops_url(path)).send().await.unwrap();
        assert_eq!(res.status(), 404, "{path} on the operations port");
    }
}

#[tokio::test]
async fn counters_follow_a_session_through_pairing_sending_and_a_drop() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve(dir.path()).await;
    let before = scrape(&p).await;
    assert_eq!(sample(&before, "parley_reconnects_total"), 0.0);

    assert_eq!(post(&p, "/start?clientId=m1", json!({})).await.0, 200);
    eventually(15, "linked", || async {
        let (status, _) = post(
            &p,
            "/sandbox/link",
            json!({"clientId": "m1", "phone": "4915100000077"}),
        )
        .await;
        (status == 200).then_some(())
    })
    .await;
    let (status, body) = post(
        &p,
        "/send-message",
        json!({"clientId": "m1", "to": "4915100000078", "body": "hi"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        post(
            &p,
            "/sandbox/faults",
            json!({"clientId": "m1", "op": "drop"})
        )
        .await
        .0,
        200
    );
    assert_eq!(get(&p, "/no/such/route").await.0, 404);

    let text = eventually(
        15,
        "a reconnect and a connected session in the metrics",
        || async {
            let text = scrape(&p).await;
            let ok = series(&text, "parley_reconnects_total") >= Some(1.0)
                && series(&text, "parley_sessions{state=\"connected\"}") == Some(1.0);
            ok.then_some(text)
        },
    )
    .await;
    assert!(
        sample(&text, "parley_lease_events_total{event=\"acquisition\"}") >= 1.0,
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            "parley_http_requests_total{method=\"POST\",route=\"/send-message\",status=\"200\"}"
        ),
        1.0,
        "{text}"
    );
    assert!(
        sample(
            &text,
            "parley_http_requests_total{method=\"GET\",route=\"unmatched\",status=\"404\"}"
        ) >= 1.0
    );
    assert!(
        sample(
            &text,
            "parley_bus_request_duration_seconds_count{outcome=\"ok\",subject=\"session\"}"
        ) >= 2.0,
        "{text}"
    );
    assert!(
        sample(
            &text,
            "parley_http_request_duration_seconds_count{method=\"POST\",route=\"/start\"}"
        ) >= 1.0
    );
    // The session's lease is renewed every third of its lifetime (10 s).
    eventually(15, "a lease renewal in the metrics", || async {
        let text = scrape(&p).await;
        (series(&text, "parley_lease_events_total{event=\"renewal\"}") >= Some(1.0)).then_some(())
    })
    .await;
}
