//! Connecting with the network out of reach (a proxy on a closed port, or one
//! that refuses): the connect fails as unreachable, quickly, with the reason.
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use parley_shared::db::{Db, NewSession, StatePatch};

use super::{ConnectProxy, closed_port};
use crate::live::WhatsappNetwork;
use parley_network::{ClientId, Network, NetworkError, SessionContext};

/// A migrated SQLite database with the session `live1` owned under fence 1.
pub(super) async fn sqlite() -> (Db, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("parley.db").display());
    let db = Db::connect(&url).await.expect("open SQLite");
    db.migrate().await.expect("migrate");
    // The session row the device store's writes are fenced against, owned under fence 1.
    let new = NewSession {
        client_id: "live1".into(),
        ..NewSession::default()
    };
    db.create_session(new).await.expect("session");
    assert!(
        db.fenced_update("live1", 1, StatePatch::default())
            .await
            .expect("claim")
    );
    (db, dir)
}

fn ctx() -> SessionContext {
    SessionContext {
        client_id: ClientId::parse("live1").expect("a clientId"),
        fence: 1,
        pod_name: "test".into(),
        proxy: None,
    }
}

async fn unreachable_through(network: &WhatsappNetwork) -> String {
    let started = Instant::now();
    let attempt = tokio::time::timeout(Duration::from_secs(25), network.connect(ctx()))
        .await
        .expect("a connect through a dead proxy returns in time");
    assert!(started.elapsed() < Duration::from_secs(25));
    match attempt {
        Err(NetworkError::Unreachable(why)) => why,
        Err(other) => panic!("expected unreachable, got {other:?}"),
        Ok(_) => panic!("connected without a network"),
    }
}

#[tokio::test]
async fn a_closed_proxy_port_is_unreachable_with_the_reason() {
    let (db, _dir) = sqlite().await;
    let port = closed_port().await;
    let network =
        WhatsappNetwork::new(db, Some(&format!("http://127.0.0.1:{port}"))).expect("adapter");
    let why = unreachable_through(&network).await;
    assert!(
        why.contains(&format!("127.0.0.1:{port} not reachable")),
        "{why}"
    );
}

#[tokio::test]
async fn a_refusing_proxy_is_asked_at_every_attempt() {
    let (db, _dir) = sqlite().await;
    let proxy = ConnectProxy::start("403 Forbidden").await;
    let network = WhatsappNetwork::new(db, Some(&proxy.url())).expect("adapter");
    let why = unreachable_through(&network).await;
    assert!(why.contains("403 Forbidden"), "{why}");
    let first = proxy.connections.load(Ordering::SeqCst);
    assert!(first >= 1, "the websocket went through the proxy");
    unreachable_through(&network).await;
    assert!(proxy.connections.load(Ordering::SeqCst) > first);
    // Both the websocket and the HTTP client (version check, media; ureq marks
    // its CONNECTs with `Proxy-Connection`) went through the proxy.
    let heads = proxy.requests.lock().expect("lock").clone();
    assert!(heads.iter().all(|h| h.starts_with("CONNECT ")), "{heads:?}");
    assert!(
        heads.iter().any(|h| h.contains("Proxy-Connection")),
        "{heads:?}"
    );
    assert!(
        heads.iter().any(|h| !h.contains("Proxy-Connection")),
        "{heads:?}"
    );
}

#[tokio::test]
async fn forgetting_a_session_without_state_succeeds() {
    let (db, _dir) = sqlite().await;
    let network = WhatsappNetwork::new(db, None).expect("adapter");
    assert_eq!(
        network
            .forget(&ClientId::parse("neverpaired").expect("a clientId"))
            .await,
        Ok(())
    );
}

#[test]
fn an_unusable_proxy_url_is_refused_up_front() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (db, _dir) = rt.block_on(sqlite());
    let err = WhatsappNetwork::new(db, Some("ftp://proxy:21")).err();
    assert!(err.is_some_and(|e| e.contains("ftp")));
}
