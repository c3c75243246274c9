//! A test network server's URL: the adapter dials one only on loopback, and
//! then fetches no app version; only the test-network build (the library's
//! certificate check off) is let to use one through `PARLEY_NETWORK_URL`.
use std::time::Duration;

use super::connect::sqlite;
use super::{ConnectProxy, closed_port};
use crate::live::{WhatsappNetwork, loopback_ws_url};
use parley_network::{ClientId, Network, NetworkError, SessionContext};

#[test]
fn loopback_websocket_urls_are_accepted() {
    for url in [
        "ws://127.0.0.1:1/ws/chat",
        "ws://127.8.9.10:443/ws/chat",
        "wss://127.0.0.1/ws/chat",
        "ws://[::1]:5/x",
        "ws://localhost:8080/ws/chat",
        "ws://LOCALHOST:8080/ws/chat",
    ] {
        assert!(
            loopback_ws_url(url).is_ok(),
            "{url}: {:?}",
            loopback_ws_url(url)
        );
    }
    assert_eq!(
        loopback_ws_url("ws://127.0.0.1:1/ws/chat").as_deref(),
        Ok("ws://127.0.0.1:1/ws/chat")
    );
}

#[test]
fn other_urls_are_refused() {
    for url in [
        "ws://10.0.0.1/ws/chat",
        "ws://example.com",
        "wss://web.whatsapp.com/ws/chat",
        "ws://192.168.1.5:8080/ws/chat",
        "ws://0.0.0.0:8080/ws/chat",
        "ws://[::]:5/x",
        "ws://[::ffff:10.0.0.1]:5/x",
        "ws://localhost.example.com/ws/chat",
        "ws://127.0.0.1.example.com/ws/chat",
        "http://127.0.0.1:1/ws/chat",
        "https://localhost/ws/chat",
        "tcp://127.0.0.1:1",
        "127.0.0.1:1",
        "not a url",
        "",
    ] {
        assert!(loopback_ws_url(url).is_err(), "{url} was accepted");
    }
}

#[tokio::test]
async fn the_adapter_refuses_a_non_loopback_url() {
    let (db, _dir) = sqlite().await;
    let network = WhatsappNetwork::new(db, None).expect("adapter");
    let err = network.clone().with_ws_url("ws://10.0.0.1/ws/chat").err();
    assert!(err.is_some_and(|e| e.contains("loopback")));
    assert!(network.clone().with_ws_url("ws://example.com").is_err());
    assert!(network.clone().with_ws_url("ws://[::1]:5/x").is_ok());
    assert!(network.with_ws_url("ws://127.0.0.1:1/ws/chat").is_ok());
}

/// Through a proxy that refuses every CONNECT and notes it, so every dial
/// shows: the websocket goes to the test network server, and the HTTP client
/// (ureq, whose CONNECTs carry `Proxy-Connection`) fetches no app version.
#[tokio::test]
async fn a_test_network_url_is_dialled_without_a_version_fetch() {
    let (db, _dir) = sqlite().await;
    let proxy = ConnectProxy::start("403 Forbidden").await;
    let port = closed_port().await;
    let network = WhatsappNetwork::new(db, Some(&proxy.url()))
        .expect("adapter")
        .with_ws_url(format!("ws://127.0.0.1:{port}/ws/chat"))
        .expect("a loopback URL");
    let ctx = SessionContext {
        client_id: ClientId::parse("live1").expect("a clientId"),
        fence: 1,
        pod_name: "test".into(),
        proxy: None,
    };
    let attempt = tokio::time::timeout(Duration::from_secs(25), network.connect(ctx))
        .await
        .expect("a connect through a refusing proxy returns in time");
    match attempt {
        Err(NetworkError::Unreachable(why)) => assert!(why.contains("403 Forbidden"), "{why}"),
        Err(other) => panic!("expected unreachable, got {other:?}"),
        Ok(_) => panic!("connected through a refusing proxy"),
    }
    let heads = proxy.requests.lock().expect("lock").clone();
    assert!(!heads.is_empty(), "the websocket went through the proxy");
    let target = format!("CONNECT 127.0.0.1:{port} ");
    assert!(heads.iter().all(|h| h.starts_with(&target)), "{heads:?}");
    assert!(
        heads.iter().all(|h| !h.contains("Proxy-Connection")),
        "{heads:?}"
    );
}

#[tokio::test]
async fn this_build_refuses_a_test_network_and_may_dial_the_network() {
    let (db, _dir) = sqlite().await;
    let network = WhatsappNetwork::new(db, None).expect("adapter");
    assert!(!crate::live::test_network_build());
    let refused = network
        .clone()
        .with_test_network("ws://127.0.0.1:1/ws/chat")
        .err();
    assert!(refused.is_some_and(|e| e.contains("only by the test-network build")));
    assert!(network.for_the_network().is_ok());
}
