//! What the API-level wire tests share: the test-network binary, HTTP
//! calls with the account token, and waiting for a state with a deadline.
#![allow(dead_code)] // each test binary uses its own part
use std::path::PathBuf;
use std::time::Duration;

use parley_tests::Parley;
use parley_tests::receiver::Receiver;
use parley_wire_network::{TestDevice, WireNetwork};
use serde_json::{Value, json};

pub const TOKEN: &str = "wire-account-token-0123456789abcdef";
pub const HOOK_TOKEN: &str = "wire-webhook-token-0123456789abcdef";
pub const PHONE: &str = "4915100000401";
pub const CONTACT: &str = "4915100000402";
pub const WAIT: Duration = Duration::from_secs(15);

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_parley-test-network"))
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

/// Starts `id` with its webhook at `hook`, waits for its QR, then asks for
/// a pairing code for `phone` instead; returns the code.
pub async fn start_for_code(p: &Parley, id: &str, hook: &str, phone: &str) -> String {
    start_for_qr(p, id, hook).await;
    let (status, body) = post(p, "/pair-phone", json!({"clientId": id, "phone": phone})).await;
    assert_eq!(status, 200, "{body}\n{}", p.output());
    assert_eq!(
        (&body["clientId"], &body["phone"]),
        (&json!(id), &json!(phone)),
        "{body}"
    );
    let code = body["code"].as_str().expect("a code").to_string();
    assert_eq!(code.len(), 8, "an 8-character code: {body}");
    code
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

/// The database of `parley serve` whose data is in `dir`.
pub async fn serve_db(dir: &std::path::Path) -> parley_shared::db::Db {
    let url = format!(
        "sqlite://{}",
        dir.join("parley-data/parley.sqlite").display()
    );
    parley_shared::db::Db::connect(&url)
        .await
        .expect("open the database")
}

/// `parley serve` with the real adapter on `net`, plus `more` settings.
pub async fn serve(dir: &std::path::Path, net: &WireNetwork, more: &[(&str, &str)]) -> Parley {
    Parley::start(&bin(), &["serve"], dir, &adapter_vars(net, more)).await
}

/// The settings every gateway of these tests runs with: the account token,
/// the real adapter on `net`, webhooks and media on loopback; plus `more`.
fn adapter_vars(net: &WireNetwork, more: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut vars: Vec<(String, String)> = [
        ("PARLEY_ACCOUNT_TOKEN", TOKEN),
        ("PARLEY_NETWORK", "whatsapp"),
        ("PARLEY_ALLOW_HTTP_WEBHOOKS", "true"),
        ("PARLEY_ALLOW_PRIVATE_EGRESS", "true"),
    ]
    .into_iter()
    .chain(more.iter().copied())
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    vars.push(("PARLEY_NETWORK_URL".into(), net.url()));
    vars
}

/// Where the real adapter runs in a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One `parley serve`: device keys in SQLite, files on disk.
    Serve,
    /// An API and two workers: device keys in PostgreSQL, NATS, Redis,
    /// files in S3 (the test services, `PARLEY_TEST_*`).
    Cluster,
}

/// The gateway of `shape` on `net` with `more` settings, started in `dir`:
/// the process that takes every request, and the cluster's workers (by pod
/// name), to be kept alive beside it.
pub async fn gateway(
    shape: Shape,
    dir: &std::path::Path,
    net: &WireNetwork,
    more: &[(&str, &str)],
) -> (Parley, Vec<(String, Parley)>) {
    if shape == Shape::Serve {
        return (serve(dir, net, more).await, Vec::new());
    }
    let vars = cluster_vars(net, more).await;
    let (ok, out) = parley_tests::process::run_once(&bin(), &["migrate"], dir, &vars).await;
    assert!(ok, "migrate: {out}");
    let mut workers = Vec::new();
    for pod in ["worker-0", "worker-1"] {
        workers.push((pod.to_string(), spawn(dir, &vars, "worker", pod).await));
    }
    (spawn(dir, &vars, "api", "api-0").await, workers)
}

/// Every process's output: `api` and then each worker's, for a failure
/// message.
pub fn outputs(api: &Parley, workers: &[(String, Parley)]) -> String {
    let mut all = api.output();
    for (pod, w) in workers {
        all.push_str(&format!("\n{pod}:\n{}", w.output()));
    }
    all
}

/// The settings of a cluster on `net`: its own database, bucket and cluster
/// name on the test services, the real adapter, plus `more`.
pub async fn cluster_vars(net: &WireNetwork, more: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut vars = parley_tests::services::ClusterEnv::new().await.vars();
    vars.extend(adapter_vars(net, more));
    vars
}

/// Starts one cluster process: `role` (`api` or `worker`) as pod `pod`.
pub async fn spawn(
    dir: &std::path::Path,
    vars: &[(String, String)],
    role: &str,
    pod: &str,
) -> Parley {
    let mut vars = vars.to_vec();
    vars.push(("PARLEY_POD_NAME".into(), pod.into()));
    Parley::start(&bin(), &[role], dir, &vars).await
}

/// Waits for the webhook event whose `messageId` is `id` (others are
/// skipped); panics with the events skipped and the server's output after
/// [`WAIT`].
pub async fn event_for(hooks: &mut Receiver, p: &Parley, id: &str) -> Value {
    event_where(hooks, p, id, |e| e["messageId"] == id).await
}

/// Waits for the webhook event `test` accepts (`what` names it in a failure).
pub async fn event_where(
    hooks: &mut Receiver,
    p: &Parley,
    what: &str,
    test: impl Fn(&Value) -> bool,
) -> Value {
    match maybe_event(hooks, test).await {
        Ok(event) => event,
        Err(skipped) => panic!("no webhook for {what} (got {skipped:?}):\n{}", p.output()),
    }
}

/// The webhook event `test` accepts, if it comes within [`WAIT`]; else the
/// `(type, messageId)` of the events that came instead.
pub async fn maybe_event(
    hooks: &mut Receiver,
    test: impl Fn(&Value) -> bool,
) -> Result<Value, Vec<(String, String)>> {
    let until = tokio::time::Instant::now() + WAIT;
    let mut skipped = Vec::new();
    loop {
        let left = until.saturating_duration_since(tokio::time::Instant::now());
        let Some(hook) = hooks.maybe_next(left).await else {
            return Err(skipped);
        };
        let body = hook.json();
        if test(&body) {
            return Ok(body);
        }
        let field = |k: &str| body[k].as_str().unwrap_or_default().to_string();
        skipped.push((field("type"), field("messageId")));
    }
}

/// Waits until `client_id`'s event log shows message `id`'s event as
/// delivered: the receiver's answer is recorded a moment after the webhook
/// arrives, and until then the event counts against the session's cap.
pub async fn logged_as_delivered(p: &Parley, client_id: &str, id: &str) {
    eventually("the event logged as delivered", || async {
        let (_, body) = get(p, &format!("/events?clientId={client_id}")).await;
        body["events"]
            .as_array()?
            .iter()
            .any(|e| e["event"]["messageId"] == id && e["delivery"]["state"] == "delivered")
            .then_some(())
    })
    .await;
}

/// The count of the gateway's metric series `series` (a line's start, as
/// `name{labels}`), 0 while it has none.
pub async fn metric(p: &Parley, series: &str) -> f64 {
    let Ok(res) = reqwest::get(p.ops_url("/metrics")).await else {
        return 0.0;
    };
    let text = res.text().await.unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with(series))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Fetches `url` (a stored file's link) and returns its bytes.
pub async fn fetch(url: &str) -> Vec<u8> {
    let res = reqwest::get(url).await.expect("fetch a stored file");
    assert_eq!(res.status(), 200, "{url}");
    res.bytes().await.expect("body").to_vec()
}

/// The test network with the shop's phone ([`PHONE`]) and a customer
/// ([`CONTACT`]) on it.
pub async fn network_with_phones() -> (WireNetwork, TestDevice, TestDevice) {
    let net = WireNetwork::start().await.expect("test network");
    let phone = TestDevice::start(&net, PHONE, "Shop phone")
        .await
        .expect("phone");
    let contact = TestDevice::start(&net, CONTACT, "Customer")
        .await
        .expect("contact");
    (net, phone, contact)
}

/// `parley serve` on a test network with its phone and contact, and one
/// session linked by the phone, its keys on the server.
pub struct LinkedServe {
    pub net: WireNetwork,
    pub phone: TestDevice,
    pub contact: TestDevice,
    pub hooks: Receiver,
    pub p: Parley,
    /// The session's device number on the phone's account.
    pub device: u16,
    /// Where `serve` keeps its data and its log: a test that takes the
    /// struct apart keeps it (`dir: _dir`), or `..` deletes it under the
    /// running process.
    pub dir: tempfile::TempDir,
}

/// [`LinkedServe`] for the session `id`.
pub async fn linked_on_serve(id: &str) -> LinkedServe {
    linked_on_serve_after(id, |_| {}).await
}

/// [`LinkedServe`] for the session `id`, the network set by `prepare`
/// once the phones are on it and before the session links.
pub async fn linked_on_serve_after(id: &str, prepare: impl FnOnce(&WireNetwork)) -> LinkedServe {
    linked_on_serve_with(id, async |net, _, _| prepare(net)).await
}

/// [`LinkedServe`] for the session `id`, the network and its phones (the
/// shop's, the customer's) set by `prepare` before the session links.
pub async fn linked_on_serve_with(
    id: &str,
    prepare: impl AsyncFnOnce(&WireNetwork, &TestDevice, &TestDevice),
) -> LinkedServe {
    let (net, phone, contact) = network_with_phones().await;
    prepare(&net, &phone, &contact).await;
    let hooks = Receiver::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (p, _) = gateway(Shape::Serve, dir.path(), &net, &[]).await;
    let code = start_for_qr(&p, id, &hooks.url).await;
    let linked = phone.scan(&net, &code).expect("the phone scans");
    connected(&p, id).await;
    let ready = net
        .watcher()
        .keys_uploaded(PHONE, linked.device, WAIT)
        .await;
    assert!(ready, "the session uploaded its keys:\n{}", p.output());
    LinkedServe {
        net,
        phone,
        contact,
        hooks,
        p,
        device: linked.device,
        dir,
    }
}
