//! The proxy tunnel and the proxied websocket against local proxies and
//! targets (loopback only).
use std::sync::atomic::Ordering;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use whatsapp_rust::transport::TransportFactory;
use whatsapp_rust::wacore::net::WHATSAPP_WEB_ORIGIN;

use super::{ConnectProxy, closed_port, read_head};
use crate::live::Proxy;
use crate::live::transport::ProxiedTransport;
use parley_network::ProxyFault;

/// A loopback target that answers each line it reads with the line uppercased.
async fn shouting_target() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 64];
                while let Ok(n) = s.read(&mut buf).await {
                    if n == 0 || s.write_all(&buf[..n].to_ascii_uppercase()).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    port
}

#[tokio::test]
async fn a_connect_proxy_tunnels_to_the_target() {
    let target = shouting_target().await;
    let proxy = ConnectProxy::start("200 Connection established").await;
    let mut stream = Proxy::parse(&proxy.url())
        .expect("proxy")
        .tunnel("127.0.0.1", target)
        .await
        .expect("tunnel");
    stream.write_all(b"hello").await.expect("write");
    let mut answer = [0u8; 5];
    stream.read_exact(&mut answer).await.expect("read");
    assert_eq!(&answer, b"HELLO");
    let requests = proxy.requests.lock().expect("lock").clone();
    assert!(
        requests[0].starts_with(&format!("CONNECT 127.0.0.1:{target} HTTP/1.1\r\n")),
        "{requests:?}"
    );
}

#[tokio::test]
async fn credentials_go_in_a_basic_proxy_authorization() {
    let target = shouting_target().await;
    let proxy = ConnectProxy::start("200 OK").await;
    let url = format!("http://parley:s%20cret@127.0.0.1:{}", proxy.port);
    Proxy::parse(&url)
        .expect("proxy")
        .tunnel("127.0.0.1", target)
        .await
        .expect("tunnel");
    let head = proxy.requests.lock().expect("lock")[0].clone();
    // base64("parley:s cret")
    assert!(
        head.contains("Proxy-Authorization: Basic cGFybGV5OnMgY3JldA==\r\n"),
        "{head}"
    );
}

#[tokio::test]
async fn a_refusing_proxy_and_a_closed_port_fail_clearly() {
    let proxy = ConnectProxy::start("403 Forbidden").await;
    let err = Proxy::parse(&proxy.url())
        .expect("proxy")
        .tunnel("web.whatsapp.com", 443)
        .await
        .expect_err("refused");
    assert!(err.to_string().contains("403 Forbidden"), "{err}");
    assert_eq!(err.fault, ProxyFault::Refused);
    assert_eq!(proxy.connections.load(Ordering::SeqCst), 1);

    let port = closed_port().await;
    let err = Proxy::parse(&format!("socks5://127.0.0.1:{port}"))
        .expect("proxy")
        .tunnel("web.whatsapp.com", 443)
        .await
        .expect_err("closed");
    assert!(err.to_string().contains("not reachable"), "{err}");
    assert_eq!(err.fault, ProxyFault::Unreachable);
}

/// A minimal SOCKS5 server (no auth or user/password) relaying to loopback targets.
async fn socks5_server(expect_auth: Option<(&'static str, &'static str)>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((mut c, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut hello = [0u8; 2];
                c.read_exact(&mut hello).await.ok()?;
                let mut methods = vec![0u8; usize::from(hello[1])];
                c.read_exact(&mut methods).await.ok()?;
                let method = if expect_auth.is_some() { 2 } else { 0 };
                if !methods.contains(&method) {
                    c.write_all(&[5, 0xff]).await.ok()?;
                    return None;
                }
                c.write_all(&[5, method]).await.ok()?;
                if let Some((user, pass)) = expect_auth {
                    let mut v = [0u8; 2];
                    c.read_exact(&mut v).await.ok()?;
                    let mut u = vec![0u8; usize::from(v[1])];
                    c.read_exact(&mut u).await.ok()?;
                    let plen = c.read_u8().await.ok()?;
                    let mut p = vec![0u8; usize::from(plen)];
                    c.read_exact(&mut p).await.ok()?;
                    let ok = u == user.as_bytes() && p == pass.as_bytes();
                    c.write_all(&[1, if ok { 0 } else { 1 }]).await.ok()?;
                    if !ok {
                        return None;
                    }
                }
                let mut req = [0u8; 5];
                c.read_exact(&mut req).await.ok()?;
                let mut host = vec![0u8; usize::from(req[4])];
                c.read_exact(&mut host).await.ok()?;
                let port = c.read_u16().await.ok()?;
                let host = String::from_utf8(host).ok()?;
                let mut up = tokio::net::TcpStream::connect((host.as_str(), port))
                    .await
                    .ok()?;
                c.write_all(&[5, 0, 0, 1, 127, 0, 0, 1, 0, 0]).await.ok()?;
                tokio::io::copy_bidirectional(&mut c, &mut up).await.ok()?;
                Some(())
            });
        }
    });
    port
}

#[tokio::test]
async fn a_socks5_proxy_tunnels_with_and_without_credentials() {
    let target = shouting_target().await;
    for (auth, url) in [
        (None, "socks5://127.0.0.1:{port}"),
        (
            Some(("parley", "pw")),
            "socks5://parley:pw@127.0.0.1:{port}",
        ),
    ] {
        let port = socks5_server(auth).await;
        let url = url.replace("{port}", &port.to_string());
        let mut stream = Proxy::parse(&url)
            .expect("proxy")
            .tunnel("127.0.0.1", target)
            .await
            .expect("tunnel");
        stream.write_all(b"abc").await.expect("write");
        let mut answer = [0u8; 3];
        stream.read_exact(&mut answer).await.expect("read");
        assert_eq!(&answer, b"ABC", "{url}");
    }
    let port = socks5_server(Some(("parley", "pw"))).await;
    let err = Proxy::parse(&format!("socks5://parley:wrong@127.0.0.1:{port}"))
        .expect("proxy")
        .tunnel("127.0.0.1", target)
        .await
        .expect_err("bad credentials");
    assert!(err.to_string().contains("credentials"), "{err}");
    assert!(!err.to_string().contains("wrong"), "no password in {err}");
    assert_eq!(err.fault, ProxyFault::Refused);
    // The greeting alone tells wrong credentials too (the set-time check).
    let err = Proxy::parse(&format!("socks5://parley:wrong@127.0.0.1:{port}"))
        .expect("proxy")
        .probe(std::time::Duration::from_secs(5))
        .await
        .expect_err("bad credentials");
    assert_eq!(err.fault, ProxyFault::Refused, "{err}");
    Proxy::parse(&format!("socks5://parley:pw@127.0.0.1:{port}"))
        .expect("proxy")
        .probe(std::time::Duration::from_secs(5))
        .await
        .expect("good credentials");
}

#[tokio::test]
async fn the_websocket_upgrade_goes_through_the_proxy() {
    // The target reads the upgrade request and closes: the upgrade fails, but
    // what reached it proves the path (tunnel, then the websocket handshake).
    let target = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let target_port = target.local_addr().expect("addr").port();
    let seen = tokio::spawn(async move {
        let (mut s, _) = target.accept().await.expect("accept");
        read_head(&mut s).await
    });
    let proxy = ConnectProxy::start("200 OK").await;
    let factory = ProxiedTransport::new(Proxy::parse(&proxy.url()).expect("proxy"))
        .with_url(format!("ws://127.0.0.1:{target_port}/ws/chat"));
    assert!(factory.create_transport().await.is_err());
    let request = seen.await.expect("target");
    assert!(
        request.starts_with("GET /ws/chat HTTP/1.1\r\n"),
        "{request}"
    );
    assert!(
        request.to_ascii_lowercase().contains("upgrade: websocket"),
        "{request}"
    );
    assert!(
        request.contains(&format!("origin: {WHATSAPP_WEB_ORIGIN}\r\n")),
        "{request}"
    );
    assert_eq!(proxy.connections.load(Ordering::SeqCst), 1);
}
