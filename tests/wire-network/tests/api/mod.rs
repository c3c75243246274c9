//! What the API-level wire tests share: the test-network binary, HTTP
//! calls with the account token, and waiting for a state with a deadline.
#![allow(dead_code)] // each test binary uses its own part
use std::path::PathBuf;
use std::time::Duration;

use parley_tests::Parley;
use serde_json::{Value, json};

pub const TOKEN: &str = "wire-account-token-0123456789abcdef";
pub const HOOK_TOKEN: &str = "wire-webhook-token-0123456789abcdef";
pub const PHONE: &str = "4915100000401";
pub const CONTACT: &str = "4915100000402";
pub const WAIT: Duration = Duration::from_secs(15);

pub fn bin() -> PathBuf {
    let bin = std::env::var("PARLEY_TEST_NETWORK_BIN").unwrap_or_else(|_| {
        panic!("PARLEY_TEST_NETWORK_BIN is not set: run scripts/wire-e2e.sh, which builds the test-network binary")
    });
    PathBuf::from(bin)
}

pub async fn call(
    p: &Parley,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = reqwest::Client::new()
        .request(method, p.url(path))
        .bearer_auth(TOKEN);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let res = req.send().await.expect("request");
    let status = res.status().as_u16();
    let text = res.text().await.expect("body");
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, body)
}

pub async fn post(p: &Parley, path: &str, body: Value) -> (u16, Value) {
    call(p, reqwest::Method::POST, path, Some(body)).await
}

pub async fn get(p: &Parley, path: &str) -> (u16, Value) {
    call(p, reqwest::Method::GET, path, None).await
}

/// Polls `probe` until it answers, for at most [`WAIT`].
pub async fn eventually<T, Fut: std::future::Future<Output = Option<T>>>(
    what: &str,
    probe: impl FnMut() -> Fut,
) -> T {
    eventually_within(WAIT, what, probe).await
}

/// Polls `probe` until it answers, for at most `deadline`.
pub async fn eventually_within<T, Fut: std::future::Future<Output = Option<T>>>(
    deadline: Duration,
    what: &str,
    mut probe: impl FnMut() -> Fut,
) -> T {
    let until = tokio::time::Instant::now() + deadline;
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < until,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub async fn connected(p: &Parley, id: &str) -> String {
    eventually("the session connected", || async {
        let (_, body) = post(p, "/check-state", json!({"clientId": id})).await;
        (body["status"] == true).then(|| body["state"].as_str().unwrap_or_default().to_string())
    })
    .await
}

/// Starts `id` with its webhook at `hook` and returns the QR code it shows.
pub async fn start_for_qr(p: &Parley, id: &str, hook: &str) -> String {
    let (status, body) = post(
        p,
        &format!("/start?clientId={id}"),
        json!({"webhookUrl": hook, "webhookToken": HOOK_TOKEN}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    eventually("a QR code", || async {
        let (_, body) = get(p, &format!("/qr?clientId={id}")).await;
        let qr = body["qr"].as_str().unwrap_or_default();
        (body["status"] == "qr" && !qr.is_empty()).then(|| parley_tests::qr::decode_data_url(qr))
    })
    .await
}

/// Sends `text` to the phone number `to` through the API; returns the message id.
pub async fn send_text(p: &Parley, id: &str, to: &str, text: &str) -> String {
    let (status, sent) = post(
        p,
        "/send-message",
        json!({"clientId": id, "to": format!("+{to}"), "body": text}),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    sent["messageId"]
        .as_str()
        .expect("a message id")
        .to_string()
}
