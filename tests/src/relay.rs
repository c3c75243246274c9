//! A TCP relay on loopback in front of a real service, which a test can cut:
//! every open connection is dropped and the port stops listening, so the
//! process under test sees its store die while it runs.
use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

pub struct Relay {
    port: u16,
    cut: watch::Sender<bool>,
}

impl Relay {
    /// Relays a fresh loopback port to `target` (`host:port`).
    pub async fn start(target: &str) -> Relay {
        let target: SocketAddr = tokio::net::lookup_host(target)
            .await
            .expect("resolve the relay's target")
            .next()
            .expect("an address for the relay's target");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let (cut, mut cut_rx) = watch::channel(false);
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    accepted = listener.accept() => accepted,
                    _ = cut_rx.changed() => break,
                };
                let Ok((mut inbound, _)) = accepted else {
                    continue;
                };
                let mut cut_rx = cut_rx.clone();
                tokio::spawn(async move {
                    let Ok(mut outbound) = TcpStream::connect(target).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = cut_rx.changed() => {}
                    }
                });
            }
            // The listener drops here: new connections are refused.
        });
        Relay { port, cut }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Drops every connection and stops listening.
    pub fn cut(&self) {
        let _ = self.cut.send(true);
    }
}

/// `url` with its `host:port` replaced by the relay's.
pub fn through(url: &str, relay: &Relay) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL with a scheme");
    let (authority, tail) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let (user, _) = match authority.rsplit_once('@') {
        Some((user, host)) => (format!("{user}@"), host),
        None => (String::new(), authority),
    };
    format!("{scheme}://{user}127.0.0.1:{}{tail}", relay.port())
}

/// The `host:port` of `url`.
pub fn authority(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or(rest);
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, h)| h)
        .to_string()
}
