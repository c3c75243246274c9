//! Secrets at rest: `parley serve` seals webhook tokens and session proxy
//! URLs with a key it generates beside its data (owner-only), stores session
//! secrets only as digests, and keeps working across a key rotation with
//! `parley rekey`; the cluster roles refuse to start without
//! `PARLEY_STORE_KEYS`.
use std::os::unix::fs::PermissionsExt;

use parley_network::contract::ForwardProxy;
use parley_shared::db::Db;
use parley_tests::receiver::Receiver;
use sea_orm::ConnectionTrait;
use serde_json::json;

use crate::events::support::*;
use crate::support::*;

const SECRET: &str = "session-secret-0123456789abcdef";
const PROXY_PASSWORD: &str = "proxy-password-7d2c";

/// Every stored `(webhook_token, secret_hash, proxy_url)` of the serve
/// database in `dir`.
async fn stored(dir: &std::path::Path) -> Vec<(String, String, String)> {
    let url = format!(
        "sqlite://{}",
        dir.join("parley-data/parley.sqlite").display()
    );
    let db = Db::connect(&url).await.expect("open the database");
    let rows = db
        .conn()
        .query_all_raw(sea_orm::Statement::from_string(
            db.conn().get_database_backend(),
            "SELECT webhook_token, COALESCE(secret_hash, '') AS secret_hash, proxy_url FROM sessions",
        ))
        .await
        .expect("query");
    rows.iter()
        .map(|r| {
            (
                r.try_get::<String>("", "webhook_token").expect("token"),
                r.try_get::<String>("", "secret_hash").expect("hash"),
                r.try_get::<String>("", "proxy_url").expect("proxy"),
            )
        })
        .collect()
}

#[tokio::test]
async fn serve_seals_webhook_tokens_with_a_key_file_of_its_own_and_rekeys() {
    let dir = tempfile::tempdir().unwrap();
    let mut rx = Receiver::start().await;
    let mut p = serve_with(dir.path(), EVENT_VARS).await;
    hooked(&p, "rest1", &rx.url, json!({})).await;
    let (status, body) = post(
        &p,
        "/set-api-secret",
        json!({"clientId": "rest1", "secret": SECRET}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let proxy = ForwardProxy::start(Some(("parley", PROXY_PASSWORD))).await;
    let (status, body) = post(
        &p,
        "/set-proxy",
        json!({"clientId": "rest1", "proxyUrl": proxy.url()}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    eventually(30, "connected through the proxy", || async {
        let (_, page) = get(&p, "/sessions?clientId=rest1").await;
        (page["sessions"][0]["connected"] == true && proxy.tunnels() >= 1).then_some(())
    })
    .await;
    contact(&p).await;
    let first = text(&p, "rest1", "before the restart").await;
    let (e, _) = until_message(&mut rx, &first).await;
    assert_headers(&e, HOOK_TOKEN);

    let keys = dir.path().join("parley-data/store-keys");
    let mode = std::fs::metadata(&keys)
        .expect("a key file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "owner-only");
    let rows = stored(dir.path()).await;
    assert_eq!(rows.len(), 1);
    for (token, hash, proxy_url) in &rows {
        assert!(
            !token.is_empty() && !token.contains(HOOK_TOKEN),
            "sealed: {token}"
        );
        assert!(!hash.contains(SECRET), "a digest, never the secret");
        assert!(
            !proxy_url.is_empty() && !proxy_url.contains(PROXY_PASSWORD),
            "sealed: {proxy_url}"
        );
    }
    assert!(
        !std::fs::read_to_string(&p.log)
            .unwrap()
            .contains(PROXY_PASSWORD),
        "the proxy's password is never logged"
    );
    assert!(
        !std::fs::read_to_string(&p.log)
            .unwrap()
            .contains(&std::fs::read_to_string(&keys).unwrap()),
        "the key is never logged"
    );

    // Rotation: the old key and a new active one, `parley rekey`, then the
    // new key alone runs the gateway.
    assert_eq!(p.terminate().await, Some(0), "{}", p.output());
    let old = std::fs::read_to_string(&keys).unwrap();
    let new = parley_shared::store_keys::StoreKeys::generate_entry("k2");
    let both = vars(&[
        ("PARLEY_STORE_KEYS", &format!("{},{new}", old.trim())),
        ("PARLEY_STORE_KEY_ID", "k2"),
    ]);
    let (ok, out) = parley_tests::process::run_once(bin(), &["rekey"], dir.path(), &both).await;
    assert!(ok, "rekey: {out}");
    assert!(
        out.contains("1 webhook token(s), 1 session proxy URL(s)"),
        "{out}"
    );
    let (ok, out) = parley_tests::process::run_once(bin(), &["rekey"], dir.path(), &both).await;
    assert!(
        ok && out.contains("0 webhook token(s), 0 session proxy URL(s)"),
        "nothing left: {out}"
    );
    let mut only_new = EVENT_VARS.to_vec();
    only_new.push(("PARLEY_STORE_KEYS", &new));
    let p = serve_with(dir.path(), &only_new).await;
    eventually(15, "connected again", || async {
        let (_, body) = post(&p, "/check-state", json!({"clientId": "rest1"})).await;
        (body["status"] == true).then_some(())
    })
    .await;
    let second = text(&p, "rest1", "after the restart").await;
    let (e, _) = until_message(&mut rx, &second).await;
    assert_headers(&e, HOOK_TOKEN);
    // The proxy URL opened with the new key: still connected through it.
    let (_, page) = get(&p, "/sessions?clientId=rest1").await;
    assert_eq!(page["sessions"][0]["proxy"]["credentials"], true, "{page}");
    assert!(proxy.tunnels() >= 2, "reconnected through the proxy");
}

#[tokio::test]
async fn the_cluster_roles_refuse_to_start_without_store_keys() {
    let dir = tempfile::tempdir().unwrap();
    let env = services::ClusterEnv::new().await;
    let mut all: Vec<(String, String)> = env
        .vars()
        .into_iter()
        .filter(|(k, _)| k != "PARLEY_STORE_KEYS")
        .collect();
    all.extend(vars(&[
        ("PARLEY_ACCOUNT_TOKEN", TOKEN),
        ("PARLEY_NETWORK", "sandbox"),
    ]));
    for role in ["api", "worker"] {
        let (ok, out) = parley_tests::process::run_once(bin(), &[role], dir.path(), &all).await;
        assert!(!ok, "{role} started without keys: {out}");
        assert!(
            out.contains("PARLEY_STORE_KEYS is required"),
            "{role}: {out}"
        );
    }
}
