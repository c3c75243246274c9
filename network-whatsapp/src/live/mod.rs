//! The live adapter: the network port on a whatsapp-rust client per session.
//!
//! `connect` builds a client whose storage is the session's fenced device
//! store, dials the network (through the session's own proxy or the
//! deployment's, see `parley_network::proxy` and
//! `transport`) and waits until the socket is up: a session with stored device
//! state then logs in as linked, one without starts pairing (QR events). When
//! the network cannot be reached the connect fails as unreachable and the
//! session retries with its backoff; the library's own reconnect loop is used
//! only once a connection stood (its restart after pairing). Events are pumped
//! in order through `inbound`; `connection`, `sends` and `lookups` map the
//! port's calls onto the client (`mentions` resolves bare user-parts).
mod authors;
mod calls;
mod capped_file;
mod certificates;
mod chat_states;
mod connection;
pub(crate) mod device_saves;
mod durable;
mod errors;
mod history;
mod history_names;
mod http_client;
mod inbound;
mod labels;
mod lid_lookup;
mod lifecycle;
mod lookups;
mod loopback_http;
mod mentions;
mod port;
mod presence;
mod privacy_tokens;
mod sends;
mod server_acks;
mod statuses;
mod transport;
mod upload;

#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use async_trait::async_trait;
use parley_shared::db::Db;
use tokio::sync::{mpsc, watch};
use whatsapp_rust::bot::Bot;
use whatsapp_rust::http::UreqHttpClient;
use whatsapp_rust::transport::{TokioWebSocketTransportFactory, TransportFactory};
use whatsapp_rust::{Client, TokioRuntime};

use super::store::{OpenStores, SeaOrmDeviceStore};
use authors::Authors;
use connection::LiveConnection;
use durable::{Acks, Durable, Hooked};
use inbound::{Forward, Pump};
use parley_network::{
    ClientId, Connection, Network, NetworkError, NetworkEvent, ProxyError, ProxyFault,
    SessionContext,
};
use server_acks::ServerAcks;
use transport::{Observed, ProxiedTransport};

pub use lifecycle::{identity_of, lifecycle};
pub use loopback_http::{LoopbackHttp, plain_on_loopback};
pub use parley_network::proxy::{Proxy, ProxyKind};

/// How long a connect waits for the socket (the library gives the version
/// check, the websocket and the handshake 20 s each).
const SOCKET_WAIT: Duration = Duration::from_secs(30);

/// Events buffered towards the session.
const EVENT_BUFFER: usize = 256;

/// The app version a client dialling a test network server announces, fixed
/// so that the library fetches nothing from the internet.
const TEST_NETWORK_VERSION: (u32, u32, u32) = (2, 3000, 1_000_000_000);

/// Whether this is the test-network build: the one whose whatsapp-rust has
/// its certificate-chain check off (tests/wire-network turns its
/// `danger-skip-cert-chain-verify` on; this crate has no switch of its own),
/// told at run time by asking the library. Only that build honours a test
/// network server's URL, and it never dials the network.
pub fn test_network_build() -> bool {
    certificates::verified().is_err()
}

/// Whether this build's library refuses a server certificate chain nobody
/// signed; see [`WhatsappNetwork::for_the_network`].
pub fn certificates_verified() -> Result<(), String> {
    certificates::verified()
}

/// The whatsapp-rust network.
#[derive(Clone)]
pub struct WhatsappNetwork {
    db: Db,
    proxy: Option<Proxy>,
    http: UreqHttpClient,
    /// A test network server's websocket URL on loopback (test builds only).
    ws_url: Option<String>,
    /// The device stores of the connections opened, which `forget` stops.
    open: OpenStores,
}

impl WhatsappNetwork {
    /// The adapter on `db`, its egress through `proxy` (a `PARLEY_NETWORK_PROXY` URL).
    pub fn new(db: Db, proxy: Option<&str>) -> Result<Self, String> {
        ensure_crypto_provider();
        let proxy = proxy.map(Proxy::parse).transpose()?;
        let http = http_client::http_client(proxy.as_ref())?;
        Ok(Self {
            db,
            proxy,
            http,
            ws_url: None,
            open: OpenStores::default(),
        })
    }

    /// Dials the test network server at `url` (a `ws://` or `wss://` URL on
    /// loopback: 127.0.0.0/8, `::1` or `localhost`) instead of the network,
    /// with a fixed app version. Any other URL is refused. Only the
    /// test-network build's library accepts such a server's certificate.
    pub fn with_ws_url(mut self, url: impl Into<String>) -> Result<Self, String> {
        self.ws_url = Some(loopback_ws_url(&url.into())?);
        Ok(self)
    }

    /// `PARLEY_NETWORK_URL`: a test network server, honoured by the
    /// test-network build only (any other build refuses it rather than
    /// ignore it).
    pub fn with_test_network(self, url: &str) -> Result<Self, String> {
        if !test_network_build() {
            return Err(
                "PARLEY_NETWORK_URL is honoured only by the test-network build (tests only)".into(),
            );
        }
        let network = self.with_ws_url(url)?;
        tracing::warn!(
            url,
            "test-network build: dialling a test network server, not the network"
        );
        Ok(network)
    }

    /// The real network: refused by the test-network build (it dials only a
    /// test network server), and by any build whose library accepts a server
    /// certificate chain nobody signed.
    pub fn for_the_network(self) -> Result<Self, String> {
        certificates::verified()?;
        Ok(self)
    }

    /// The websocket's factory, through `proxy` when there is one.
    fn transport(&self, proxy: Option<&Proxy>) -> Box<dyn TransportFactory> {
        if let Some(url) = &self.ws_url {
            return match proxy {
                Some(proxy) => Box::new(ProxiedTransport::new(proxy.clone()).with_url(url.clone())),
                None => Box::new(TokioWebSocketTransportFactory::new().with_url(url.clone())),
            };
        }
        match proxy {
            Some(proxy) => Box::new(ProxiedTransport::new(proxy.clone())),
            None => Box::new(TokioWebSocketTransportFactory::new()),
        }
    }

    /// The route of one session's connection: its own proxy (with an HTTP
    /// client of its own for media) when it set one, else the deployment's.
    fn route(&self, ctx: &SessionContext) -> Result<(Option<Proxy>, UreqHttpClient), NetworkError> {
        match &ctx.proxy {
            Some(own) => {
                let http = http_client::http_client(Some(own))
                    .map_err(|e| NetworkError::Proxy(ProxyError::new(ProxyFault::Forbidden, e)))?;
                Ok((Some(own.clone()), http))
            }
            None => Ok((self.proxy.clone(), self.http.clone())),
        }
    }
}

/// `url` when it is a `ws://` or `wss://` URL whose host is loopback
/// (127.0.0.0/8, `::1`, `localhost`), normalised so that the transport reads
/// the same host this checked; else why not.
fn loopback_ws_url(url: &str) -> Result<String, String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("{url:?} is not a URL: {e}"))?;
    if !matches!(parsed.scheme(), "ws" | "wss") {
        return Err(format!("{url:?} is not a ws:// or wss:// URL"));
    }
    let loopback = match parsed.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    if !loopback {
        return Err(format!(
            "{url:?} is not on loopback (127.0.0.0/8, ::1 or localhost): only a local test network server may be dialled"
        ));
    }
    Ok(parsed.into())
}

/// Installs the process's rustls provider (ring) once, unless `main` did
/// already (then that one stays: installing again is refused, harmlessly).
fn ensure_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Closes the connection at the first device-store write a newer owner's
/// fence refuses: the library cannot keep its keys, so nothing it receives
/// from then on can be taken (and nothing is acknowledged). The session sees
/// the connection end, and its own next write stops it.
fn close_when_fenced_out(
    store: SeaOrmDeviceStore,
    client: Arc<Client>,
    mut ended: watch::Receiver<bool>,
) {
    tokio::spawn(async move {
        tokio::select! {
            () = store.fenced_out() => {
                tracing::warn!(client_id = %store.client_id(),
                    "a newer owner holds the session: closing its connection");
                client.enable_auto_reconnect.store(false, Ordering::SeqCst);
                client.disconnect().await;
            }
            () = async { drop(ended.wait_for(|e| *e).await.map(|_| ())) } => {}
        }
    });
}

/// Tears a half-made connection down unless it was handed to the session.
struct Abandon {
    client: Option<Arc<Client>>,
    run: Option<tokio::task::JoinHandle<()>>,
}

impl Abandon {
    /// Hands the run task over: the connection stands.
    fn defuse(mut self) -> Option<tokio::task::JoinHandle<()>> {
        self.client = None;
        self.run.take()
    }
}

impl Drop for Abandon {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            let run = self.run.take();
            tokio::spawn(async move {
                client.disconnect().await;
                if let Some(run) = run {
                    let _ = run.await;
                }
            });
        }
    }
}

#[async_trait]
impl Network for WhatsappNetwork {
    async fn connect(
        &self,
        ctx: SessionContext,
    ) -> Result<(Box<dyn Connection>, mpsc::Receiver<NetworkEvent>), NetworkError> {
        if self.ws_url.is_none() {
            // Never the network from a build that would accept any server.
            certificates::verified().map_err(NetworkError::Rejected)?;
        }
        let store = self
            .open
            .open(&self.db, ctx.client_id.as_str(), ctx.fence)
            .map_err(|e| NetworkError::Rejected(format!("device store: {e}")))?;
        let (proxy, http) = self.route(&ctx)?;
        let (factory, failure) = Observed::new(self.transport(proxy.as_ref()));
        let server_acks = ServerAcks::default();
        let (handler, library_events) = Forward::new(server_acks.clone());
        let durable = Durable {
            pump: Hooked::default(),
            acks: Acks::default(),
        };
        let (hooked, acks) = (durable.pump.clone(), durable.acks.clone());
        let builder = Bot::builder()
            .with_backend(store.clone())
            .with_inbound_durability_hook(durable)
            .with_transport_factory(factory);
        // A test network's CDN is plain HTTP on loopback (test builds only).
        let builder = match self.ws_url {
            Some(_) => builder.with_http_client(LoopbackHttp(http)),
            None => builder.with_http_client(http),
        };
        let builder = builder
            .with_runtime(TokioRuntime)
            .with_event_handler(handler);
        let builder = match self.ws_url {
            Some(_) => builder.with_version(TEST_NETWORK_VERSION),
            None => builder,
        };
        let bot = builder
            .build()
            .await
            .map_err(|e| NetworkError::Unreachable(format!("device state not readable: {e}")))?;
        let client = bot.client();
        // One attempt: a failure goes back to the session, which retries with its backoff.
        client.enable_auto_reconnect.store(false, Ordering::SeqCst);
        let (ended_tx, ended) = watch::channel(false);
        device_saves::keep_saved(&store, &client.persistence_manager(), ended.clone());
        let (out, events) = mpsc::channel(EVENT_BUFFER);
        let authors = Authors::stored(store.clone());
        let pump = Pump {
            client: Arc::clone(&client),
            store: store.clone(),
            out,
            authors: authors.clone(),
            unpaired: Default::default(),
        };
        hooked.set(Some(pump.clone()));
        tokio::spawn(pump.run(library_events, ended.clone()));
        let run = tokio::spawn(async move {
            bot.run().await;
            hooked.set(None);
            let _ = ended_tx.send(true);
        });
        let guard = Abandon {
            client: Some(Arc::clone(&client)),
            run: Some(run),
        };
        let mut ended = ended;
        let up = tokio::select! {
            waited = client.wait_for_socket(SOCKET_WAIT) => waited.is_ok(),
            _ = ended.wait_for(|e| *e) => client.is_connected(),
        };
        if !up {
            let failed = failure.get();
            // The session's own proxy failing is named as such.
            if ctx.proxy.is_some()
                && let Some(proxy) = failed.as_ref().and_then(|f| f.proxy.clone())
            {
                tracing::info!(client_id = %ctx.client_id, reason = %proxy, "the session's proxy failed");
                return Err(NetworkError::Proxy(proxy));
            }
            let why = failed
                .map(|f| f.why)
                .unwrap_or_else(|| "the network did not answer".to_string());
            tracing::info!(client_id = %ctx.client_id, reason = %why, "network not reachable");
            return Err(NetworkError::Unreachable(why));
        }
        // Standing now: the library may restart the stream itself (after pairing).
        client.enable_auto_reconnect.store(true, Ordering::SeqCst);
        close_when_fenced_out(store.clone(), Arc::clone(&client), ended);
        let run = guard.defuse();
        let connection = LiveConnection::new(client, run, authors, acks, server_acks);
        Ok((Box::new(connection), events))
    }

    async fn forget(&self, client_id: &ClientId) -> Result<(), NetworkError> {
        self.open
            .forget(&self.db, client_id.as_str())
            .await
            .map_err(|e| NetworkError::Unreachable(format!("device state not deleted: {e}")))
    }
}
