//! Shared helpers of the end-to-end tests.
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

pub use parley_tests::Parley;
pub use parley_tests::services;

pub const TOKEN: &str = "test-account-token-0123456789abcdef";

pub fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_parley"))
}

pub fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `parley serve` in a fresh directory with the sandbox network and a known token.
pub async fn serve(dir: &Path) -> Parley {
    serve_with(dir, &[]).await
}

/// [`serve`] with more `PARLEY_*` variables.
pub async fn serve_with(dir: &Path, more: &[(&str, &str)]) -> Parley {
    let mut all = vars(&[
        ("PARLEY_ACCOUNT_TOKEN", TOKEN),
        ("PARLEY_NETWORK", "sandbox"),
    ]);
    all.extend(vars(more));
    Parley::start(bin(), &["serve"], dir, &all).await
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
/// sandbox network, with `more` `PARLEY_*` variables. Returns `(api, worker)`.
pub async fn api_and_worker(
    env: &services::ClusterEnv,
    dir: &Path,
    more: &[(&str, &str)],
) -> (Parley, Parley) {
    let mut all = env.vars();
    all.extend(vars(&[
        ("PARLEY_ACCOUNT_TOKEN", TOKEN),
        ("PARLEY_NETWORK", "sandbox"),
    ]));
    all.extend(vars(more));
    let (ok, out) = parley_tests::process::run_once(bin(), &["migrate"], dir, &all).await;
    assert!(ok, "migrate: {out}");
    let worker = Parley::start(bin(), &["worker"], dir, &all).await;
    let api = Parley::start(bin(), &["api"], dir, &all).await;
    (api, worker)
}
