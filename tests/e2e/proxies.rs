//! A session's own network proxy (`/set-proxy`): checked when set, stored
//! sealed and shown without its credentials; the owner reconnects through
//! it at once (and a new owner after a move); a proxy that refuses names
//! itself in the session's health; removing it connects directly again.
//! On the test network the socket and the media upload go through it; on
//! the sandbox each connect opens a tunnel to the gateway's public URL.
use parley_network::contract::ForwardProxy;
use serde_json::{Value, json};

use crate::events::support::*;
use crate::sends::support::{Answer, file_server};
use crate::shapes::{Deployment, Shape};
use crate::support::*;

#[tokio::test]
async fn a_sessions_proxy_carries_its_connection_on_serve() {
    proxied(Shape::Serve).await;
}

#[tokio::test]
async fn a_sessions_proxy_carries_its_connection_after_a_move_on_a_cluster() {
    proxied(Shape::Cluster).await;
}

const PASSWORD: &str = "pw-5f1e-never-shown";

async fn set_proxy(p: &Parley, url: Value) -> (u16, Value) {
    post(p, "/set-proxy", json!({"clientId": "px", "proxyUrl": url})).await
}

/// The session's row of `GET /sessions`.
async fn overview(p: &Parley) -> Value {
    let (status, page) = get(p, "/sessions?clientId=px").await;
    assert_eq!(status, 200, "{page}");
    assert!(!page.to_string().contains(PASSWORD), "{page}");
    page["sessions"][0].clone()
}

/// Sends `body` to the contact, who never wrote: over the test network the
/// session writes with its account's salt, which came by app state while
/// the session reconnected through the proxy right after linking. A send
/// refused for want of a privacy token (error 463: the salt may come a
/// moment after the reconnect; nothing was sent) is sent again, for up to
/// 30 s: tokens are tested on their own, the proxy here.
async fn send_to_contact(p: &Parley, body: &str) -> (u16, Value) {
    let request = json!({"clientId": "px", "to": format!("+{CONTACT}"), "body": body});
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (status, sent) = post(p, "/send-message", request.clone()).await;
        let no_token = status == 502 && sent["error"].as_str().is_some_and(|e| e.contains("463"));
        if !no_token || std::time::Instant::now() >= deadline {
            return (status, sent);
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// Waits until the session is connected with `proxy` tunnels (at least).
async fn connected_through(p: &Parley, proxy: &ForwardProxy, tunnels: usize) {
    eventually(30, "connected through the proxy", || async {
        let row = overview(p).await;
        (row["connected"] == true && proxy.tunnels() >= tunnels).then_some(())
    })
    .await;
}

async fn proxied(shape: Shape) {
    let dir = tempfile::tempdir().unwrap();
    let mut d = Deployment::start(shape, dir.path(), EVENT_VARS).await;
    let rx = parley_tests::receiver::Receiver::start().await;
    hooked(&d.api, "px", &rx.url, json!({})).await;
    contact(&d.api).await;
    let proxy = ForwardProxy::start(Some(("parley", PASSWORD))).await;
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    refused(
        &d.api,
        "/set-proxy",
        [
            (json!({"proxyUrl": proxy.url()}), 400),
            (json!({"clientId": "px", "proxyUrl": "ftp://proxy.example:21"}), 400),
            (json!({"clientId": "px", "proxyUrl": "http://proxy.example:3128/x"}), 400),
            (
                json!({"clientId": "px", "proxyUrl": format!("http://u:{PASSWORD}@127.0.0.1:{closed}")}),
                400,
            ),
            (json!({"clientId": "nobody", "proxyUrl": proxy.url()}), 404),
        ],
    )
    .await;
    let (_, answer) = set_proxy(
        &d.api,
        json!(format!("http://u:{PASSWORD}@127.0.0.1:{closed}")),
    )
    .await;
    assert!(!answer.to_string().contains(PASSWORD), "{answer}");
    assert_eq!(overview(&d.api).await["proxy"], Value::Null);

    // Set: shown without its credentials; the owner reconnects through it.
    let (status, set) = set_proxy(&d.api, json!(proxy.url())).await;
    assert_eq!(status, 200, "{set}");
    let shown = format!("http://127.0.0.1:{}", proxy.port());
    assert_eq!(
        set,
        json!({"ok": true, "clientId": "px", "proxy": {"url": shown, "credentials": true}})
    );
    connected_through(&d.api, &proxy, 1).await;
    assert_eq!(overview(&d.api).await["proxy"]["url"], shown.as_str());
    let (status, sent) = send_to_contact(&d.api, "through the proxy").await;
    assert_eq!(status, 200, "{sent}");
    if network() == Net::Wire {
        // The media upload goes through it too (the test network's CDN).
        let png: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
        let file = file_server(Answer::file("image/png", png)).await;
        let (status, sent) = post(
            &d.api,
            "/send-media-message",
            json!({"clientId": "px", "to": format!("+{CONTACT}"),
                "downloadUrl": format!("{}/p.png", file.base)}),
        )
        .await;
        assert_eq!(status, 200, "{sent}");
        let seen = proxy.forwarded();
        let socket = &seen[0].target;
        assert!(
            seen.iter().any(|f| &f.target != socket),
            "no media request through the proxy, only the socket: {seen:?}"
        );
    }

    if shape == Shape::Cluster {
        // The next owner dials through it too, without being told.
        let before = proxy.tunnels();
        d.move_session("px").await;
        connected_through(&d.api, &proxy, before + 1).await;
    }
    let p = &d.api;

    // Wrong credentials pass the check (an HTTP proxy asks for them only
    // with a tunnel) and fail the connection: the health names the proxy.
    let (status, set) = set_proxy(p, json!(proxy.url_with("parley", "wrong-one"))).await;
    assert_eq!(status, 200, "{set}");
    eventually(30, "the refusing proxy in the session's health", || async {
        let (_, health) = get(p, "/health/clients").await;
        let row = health["clients"]
            .as_array()?
            .iter()
            .find(|c| c["clientId"] == "px")?
            .clone();
        (row["connected"] == false && row["lastDisconnect"] == "proxy-refused").then_some(())
    })
    .await;
    assert_eq!(overview(p).await["lastDisconnect"], "proxy-refused");

    // Removed: the session connects directly, the proxy sees nothing more.
    let (status, set) = set_proxy(p, Value::Null).await;
    assert_eq!(status, 200, "{set}");
    assert_eq!(set["proxy"], Value::Null, "{set}");
    eventually(30, "connected directly", || async {
        (overview(p).await["connected"] == true).then_some(())
    })
    .await;
    let tunnels = proxy.tunnels();
    let (status, sent) = send_to_contact(p, "directly").await;
    assert_eq!(status, 200, "{sent}");
    assert_eq!(
        proxy.tunnels(),
        tunnels,
        "a direct connection used the proxy"
    );
}
