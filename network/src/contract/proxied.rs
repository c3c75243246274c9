//! A session's own proxy, as every adapter must honour it.
use super::{DEADLINE, Events, ForwardProxy, Subject, ctx, pair_with, the_next_one_goes};
use crate::{NetworkError, NetworkEvent, Proxy, ProxyFault, SessionContext};

/// `ctx` of the subject at `fence`, through the proxy at `url`.
fn through(s: &Subject<'_>, fence: u64, url: &str) -> SessionContext {
    SessionContext {
        proxy: Some(Proxy::parse(url).expect("a proxy URL")),
        ..ctx(s, fence)
    }
}

/// The connect's failure, which must be the session's proxy's.
async fn proxy_failure(s: &Subject<'_>, context: SessionContext) -> crate::ProxyError {
    match s.network.connect(context).await {
        Err(NetworkError::Proxy(e)) => e,
        Err(other) => panic!("expected the proxy's failure, got {other}"),
        Ok(_) => panic!("connected through a proxy that should have failed"),
    }
}

/// Waits for the connection to come online; what the network kept for the
/// device while it was away (the receipt of the text sent through the
/// proxy) may come first.
async fn connected(events: &mut Events) {
    loop {
        match tokio::time::timeout(DEADLINE, events.recv()).await {
            Ok(Some(NetworkEvent::Connected(_))) => return,
            Ok(Some(NetworkEvent::Message(m))) if m.content.is_notice() => continue,
            other => panic!("expected Connected, got {other:?}"),
        }
    }
}

/// A session pairs and texts through its own proxy (with credentials);
/// wrong credentials fail the connect as a refusing proxy, a port where
/// nothing listens as an unreachable one, both named without the
/// credentials; without a proxy the session connects directly again.
pub async fn a_sessions_proxy_carries_its_connection(s: Subject<'_>) {
    let proxy = ForwardProxy::start(Some(("parley", "s3cret-pw"))).await;
    let (conn, _events, _) = pair_with(&s, through(&s, 1, &proxy.url())).await;
    assert!(proxy.tunnels() >= 1, "no tunnel through the proxy");
    the_next_one_goes(&s, conn, "through the proxy").await;

    let refused = proxy_failure(&s, through(&s, 2, &proxy.url_with("parley", "wrong-pw"))).await;
    assert_eq!(refused.fault, ProxyFault::Refused, "{refused}");
    assert!(refused.to_string().contains("407"), "{refused}");
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let unreachable = proxy_failure(
        &s,
        through(
            &s,
            3,
            &format!("socks5://parley:s3cret-pw@127.0.0.1:{closed}"),
        ),
    )
    .await;
    assert_eq!(unreachable.fault, ProxyFault::Unreachable, "{unreachable}");
    for e in [&refused, &unreachable] {
        assert!(!e.to_string().contains("pw"), "credentials in {e}");
    }

    let before = proxy.tunnels();
    let (direct, mut events) = s
        .network
        .connect(ctx(&s, 4))
        .await
        .expect("a direct connect");
    connected(&mut events).await;
    assert_eq!(
        proxy.tunnels(),
        before,
        "a direct connection used the proxy"
    );
    direct.close().await;
}
