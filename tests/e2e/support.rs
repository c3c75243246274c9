//! Shared helpers of the end-to-end tests.
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use parley_tests::test_network::TestNetwork;

use serde_json::Value;

pub use parley_tests::Parley;
pub use parley_tests::services;

pub const TOKEN: &str = "test-account-token-0123456789abcdef";

/// The network the suite's sessions run on: `PARLEY_E2E_NETWORK` is
/// `sandbox` (the default: the simulated network) or `wire` (the real
/// adapter on the wire-level test network, through the test-network build,
/// whose `/sandbox/*` routes drive that network; docs/sandbox.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Net {
    Sandbox,
    Wire,
}

/// An outbox payload of a photo as the network carries it: on the real
/// network only documents have a file name (an image message has no field
/// for one), so over the test network the outbox shows none; the sandbox
/// keeps the one the send gave.
pub fn photo_as_carried(mut payload: serde_json::Value) -> serde_json::Value {
    if network() == Net::Wire
        && let Some(fields) = payload.as_object_mut()
    {
        fields.remove("fileName");
    }
    payload
}

pub fn network() -> Net {
    match std::env::var("PARLEY_E2E_NETWORK").as_deref() {
        Err(_) | Ok("") | Ok("sandbox") => Net::Sandbox,
        Ok("wire") => Net::Wire,
        Ok(other) => panic!("PARLEY_E2E_NETWORK={other:?}: expected sandbox or wire"),
    }
}

/// The `parley` this package builds (the shipped program).
pub fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_parley"))
}

/// The `parley` the suite's gateways run ([`serve_with`], [`api_and_worker`]):
/// the shipped program, or on the wire network the test-network build beside
/// it (same target directory). Tests that start processes of their own run
/// the shipped program on the sandbox whatever the selector says.
pub fn gateway_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| match network() {
        Net::Sandbox => bin().to_path_buf(),
        Net::Wire => beside_parley("parley-test-network"),
    })
}

/// A binary of the wire-level workspace, built into the same directory.
fn beside_parley(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_BIN_EXE_parley")).with_file_name(name);
    assert!(
        path.is_file(),
        "PARLEY_E2E_NETWORK=wire needs {} (cargo build --locked --manifest-path tests/wire-network/Cargo.toml --bins)",
        path.display()
    );
    path
}

/// The network settings of a gateway whose data is in `dir`: the sandbox,
/// or a test network of the directory's own, shared by every process and
/// restart of the gateway that uses the directory.
pub fn network_vars(dir: &Path) -> Vec<(String, String)> {
    static NETWORKS: Mutex<Vec<(PathBuf, Arc<TestNetwork>)>> = Mutex::new(Vec::new());
    match network() {
        Net::Sandbox => vars(&[("PARLEY_NETWORK", "sandbox")]),
        Net::Wire => {
            let mut networks = NETWORKS.lock().unwrap_or_else(|p| p.into_inner());
            let net = match networks.iter().find(|(d, _)| d == dir) {
                Some((_, net)) => Arc::clone(net),
                None => {
                    let net = Arc::new(TestNetwork::start(&beside_parley("parley-wire-network")));
                    networks.push((dir.to_path_buf(), Arc::clone(&net)));
                    net
                }
            };
            net.vars()
        }
    }
}

pub fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `parley serve` in a fresh directory with the suite's network and a known token.
pub async fn serve(dir: &Path) -> Parley {
    serve_with(dir, &[]).await
}

/// [`serve`] with more `PARLEY_*` variables.
pub async fn serve_with(dir: &Path, more: &[(&str, &str)]) -> Parley {
    let mut all = vars(&[("PARLEY_ACCOUNT_TOKEN", TOKEN)]);
    all.extend(network_vars(dir));
    all.extend(vars(more));
    Parley::start(gateway_bin(), &["serve"], dir, &all).await
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("http client")
}

/// Status and JSON body of a response (the body must be JSON).
pub async fn json(res: reqwest::Response) -> (u16, serde_json::Value) {
    let status = res.status().as_u16();
    let ct = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let text = res.text().await.expect("body");
    let body = serde_json::from_str(&text)
        .unwrap_or_else(|_| panic!("status {status}: body is not JSON ({ct}): {text:?}"));
    (status, body)
}

pub async fn post(p: &Parley, path: &str, body: Value) -> (u16, Value) {
    json(
        client()
            .post(p.url(path))
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await
            .unwrap(),
    )
    .await
}

pub async fn get(p: &Parley, path: &str) -> (u16, Value) {
    json(
        client()
            .get(p.url(path))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// Polls `probe` every 50 ms until it returns `Some`, failing after `secs`.
pub async fn eventually<T, F, Fut>(secs: u64, what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let until = tokio::time::Instant::now() + Duration::from_secs(secs);
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

/// One API process and one worker process of the cluster `env` (its own
/// database, bucket and cluster name on the real services), migrated, on the
/// suite's network, with `more` `PARLEY_*` variables. Returns `(api, worker)`.
pub async fn api_and_worker(
    env: &services::ClusterEnv,
    dir: &Path,
    more: &[(&str, &str)],
) -> (Parley, Parley) {
    let mut all = env.vars();
    all.extend(vars(&[("PARLEY_ACCOUNT_TOKEN", TOKEN)]));
    all.extend(network_vars(dir));
    all.extend(vars(more));
    let (ok, out) = parley_tests::process::run_once(gateway_bin(), &["migrate"], dir, &all).await;
    assert!(ok, "migrate: {out}");
    let worker = Parley::start(gateway_bin(), &["worker"], dir, &all).await;
    let api = Parley::start(gateway_bin(), &["api"], dir, &all).await;
    (api, worker)
}
