//! `parley serve` with the real adapter (device keys in SQLite) on the
//! wire-level test network, through its HTTP API: pairing by QR, a text out
//! and one in (as a webhook), and a restart that comes back without a scan.
//!
//! Runs the `parley-test-network` binary that `scripts/wire-e2e.sh` builds
//! and names in `PARLEY_TEST_NETWORK_BIN`.
use std::path::PathBuf;
use std::time::Duration;

use parley_tests::Parley;
use parley_tests::receiver::Receiver;
use parley_wire_network::{TestDevice, WireNetwork};
use serde_json::{Value, json};

const TOKEN: &str = "wire-account-token-0123456789abcdef";
const HOOK_TOKEN: &str = "wire-webhook-token-0123456789abcdef";
const PHONE: &str = "4915100000401";
const CONTACT: &str = "4915100000402";
const WAIT: Duration = Duration::from_secs(15);

fn bin() -> PathBuf {
    let bin = std::env::var("PARLEY_TEST_NETWORK_BIN").unwrap_or_else(|_| {
        panic!("PARLEY_TEST_NETWORK_BIN is not set: run scripts/wire-e2e.sh, which builds the test-network binary")
    });
    PathBuf::from(bin)
}

async fn call(
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

async fn post(p: &Parley, path: &str, body: Value) -> (u16, Value) {
    call(p, reqwest::Method::POST, path, Some(body)).await
}

async fn get(p: &Parley, path: &str) -> (u16, Value) {
    call(p, reqwest::Method::GET, path, None).await
}

/// Polls `probe` until it answers, for at most [`WAIT`].
async fn eventually<T, Fut: std::future::Future<Output = Option<T>>>(
    what: &str,
    mut probe: impl FnMut() -> Fut,
) -> T {
    let until = tokio::time::Instant::now() + WAIT;
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

async fn serve(dir: &std::path::Path, net: &WireNetwork) -> Parley {
    let vars: Vec<(String, String)> = [
        ("PARLEY_ACCOUNT_TOKEN", TOKEN.to_string()),
        ("PARLEY_NETWORK", "whatsapp".to_string()),
        ("PARLEY_NETWORK_URL", net.url()),
        ("PARLEY_ALLOW_HTTP_WEBHOOKS", "true".to_string()),
        ("PARLEY_ALLOW_PRIVATE_EGRESS", "true".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    Parley::start(&bin(), &["serve"], dir, &vars).await
}

async fn connected(p: &Parley, id: &str) -> String {
    eventually("the session connected", || async {
        let (_, body) = post(p, "/check-state", json!({"clientId": id})).await;
        (body["status"] == true).then(|| body["state"].as_str().unwrap_or_default().to_string())
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_pairs_texts_both_ways_and_restarts_without_a_scan() {
    let net = WireNetwork::start().await.expect("test network");
    let phone = TestDevice::start(&net, PHONE, "Shop phone")
        .await
        .expect("phone");
    let contact = TestDevice::start(&net, CONTACT, "Customer")
        .await
        .expect("contact");
    let mut hooks = Receiver::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut p = serve(dir.path(), &net).await;

    let (status, body) = post(
        &p,
        "/start?clientId=wire1",
        json!({"webhookUrl": hooks.url, "webhookToken": HOOK_TOKEN}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let code = eventually("a QR code", || async {
        let (_, body) = get(&p, "/qr?clientId=wire1").await;
        let qr = body["qr"].as_str().unwrap_or_default();
        (body["status"] == "qr" && !qr.is_empty()).then(|| parley_tests::qr::decode_data_url(qr))
    })
    .await;
    let linked = phone.scan(&net, &code).expect("the phone scans");
    let jid = connected(&p, "wire1").await;
    assert_eq!(jid, linked, "{}", p.output());

    // A text out, through the API, to the contact's phone number.
    let (status, sent) = post(
        &p,
        "/send-message",
        json!({"clientId": "wire1", "to": format!("+{CONTACT}"), "body": "Your order shipped"}),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    let id = sent["messageId"]
        .as_str()
        .expect("a message id")
        .to_string();
    let got = contact
        .wait_for(WAIT, |r| r.id == id)
        .await
        .unwrap_or_else(|| panic!("the contact did not get {id}:\n{}", p.output()));
    assert_eq!(got.text.as_deref(), Some("Your order shipped"));

    // A text in, as a webhook event.
    let theirs = contact
        .send_text(&phone.jid(), "Thanks, when will it arrive?")
        .await
        .expect("the contact writes");
    let until = tokio::time::Instant::now() + WAIT;
    let event = loop {
        let left = until.saturating_duration_since(tokio::time::Instant::now());
        let Some(hook) = hooks.maybe_next(left).await else {
            panic!("no webhook for {theirs}:\n{}", p.output());
        };
        let body = hook.json();
        if body.to_string().contains(&theirs) {
            break body;
        }
    };
    assert!(
        event.to_string().contains("Thanks, when will it arrive?"),
        "{event}"
    );

    // A restart comes back from the stored device keys, without a scan.
    p.terminate().await;
    let p = serve(dir.path(), &net).await;
    let again = connected(&p, "wire1").await;
    assert_eq!(again, jid);
    assert!(net.handshakes("IK") >= 1, "the restart resumed with IK");
}
