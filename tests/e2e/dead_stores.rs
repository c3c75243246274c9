//! An API process whose database or bus dies while it runs: the answers say
//! which dependency is unavailable (503, with `Retry-After`) and nothing of
//! the store's or the bus's own error text, and each carries its request id.
use parley_tests::relay::{self, Relay};
use serde_json::json;

use crate::support::*;

/// A migrated cluster API process whose database and NATS connections go
/// through relays the test can cut.
async fn api_behind_relays(dir: &std::path::Path) -> (Parley, Relay, Relay) {
    let env = services::ClusterEnv::new().await;
    let db = Relay::start(&relay::authority(&env.database_url)).await;
    let bus = Relay::start(&relay::authority(&services::nats_url())).await;
    let mut all = env.vars();
    all.extend(vars(&[
        ("PARLEY_ACCOUNT_TOKEN", TOKEN),
        ("PARLEY_NETWORK", "sandbox"),
        ("PARLEY_POD_NAME", "api-0"),
    ]));
    let (ok, out) = parley_tests::process::run_once(bin(), &["migrate"], dir, &all).await;
    assert!(ok, "migrate: {out}");
    for (name, value) in all.iter_mut() {
        match name.as_str() {
            "PARLEY_DATABASE_URL" => *value = relay::through(value, &db),
            "PARLEY_NATS_URL" => *value = relay::through(value, &bus),
            _ => {}
        }
    }
    let api = Parley::start(bin(), &["api"], dir, &all).await;
    (api, db, bus)
}

/// Status, body, `x-request-id` and `Retry-After` of a request with the
/// account token.
async fn ask(
    p: &Parley,
    method: &str,
    path: &str,
    body: serde_json::Value,
) -> (u16, String, String, String) {
    let m: reqwest::Method = method.parse().unwrap();
    let mut req = client().request(m, p.url(path)).bearer_auth(TOKEN);
    if method != "GET" {
        req = req.json(&body);
    }
    let res = req.send().await.unwrap();
    let header = |name: &str| {
        res.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let (id, retry_after) = (header("x-request-id"), header("retry-after"));
    (
        res.status().as_u16(),
        res.text().await.unwrap(),
        id,
        retry_after,
    )
}

fn send_body() -> serde_json::Value {
    json!({"clientId": "nobody", "to": "15550001111", "body": "hi"})
}

#[tokio::test]
async fn a_dead_database_answers_503_without_its_error_text() {
    let dir = tempfile::tempdir().unwrap();
    let (p, db, _bus) = api_behind_relays(dir.path()).await;
    let (status, body, ..) = ask(&p, "GET", "/clients", json!({})).await;
    assert_eq!(status, 200, "{body}");

    db.cut();
    let expected = json!({"error": "database unavailable"}).to_string();
    for (method, path, body) in [
        ("GET", "/clients", json!({})),
        ("GET", "/chatrooms?clientId=nobody", json!({})),
        // No owner answers for it: the API looks the session up.
        ("POST", "/send-message", send_body()),
    ] {
        let (status, text, id, retry_after) = ask(&p, method, path, body).await;
        assert_eq!(
            (status, text.as_str(), retry_after.as_str()),
            (503, expected.as_str(), "2"),
            "{method} {path}"
        );
        assert!(
            uuid::Uuid::parse_str(&id).is_ok(),
            "{method} {path}: {id:?}"
        );
    }
    let (status, ready, ..) = ask(&p, "GET", "/health/ready", json!({})).await;
    assert_eq!(status, 503, "{ready}");
    // The event log lives in the database: it takes no events either.
    let ready: serde_json::Value = serde_json::from_str(&ready).unwrap();
    assert_eq!(
        (&ready["database"], &ready["events"]),
        (&json!(false), &json!(false)),
        "{ready}"
    );
}

#[tokio::test]
async fn a_dead_bus_answers_503_without_its_error_text() {
    let dir = tempfile::tempdir().unwrap();
    let (p, _db, bus) = api_behind_relays(dir.path()).await;
    bus.cut();
    let expected = json!({"error": "bus unavailable"}).to_string();
    for (path, body) in [
        ("/send-message", send_body()),
        ("/start?clientId=nobody", json!({})),
    ] {
        let (status, text, id, retry_after) = ask(&p, "POST", path, body).await;
        let answer = (status, text.as_str(), retry_after.as_str());
        assert_eq!(answer, (503, expected.as_str(), "2"), "{path}");
        assert!(uuid::Uuid::parse_str(&id).is_ok(), "{path}: {id:?}");
    }
    // Readiness fails on the database only (the spec); it reports the bus.
    let (status, ready, ..) = ask(&p, "GET", "/health/ready", json!({})).await;
    let ready: serde_json::Value = serde_json::from_str(&ready).unwrap();
    assert_eq!((status, &ready["bus"]), (200, &json!(false)), "{ready}");
}
