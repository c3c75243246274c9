//! The sandbox network adapter: a simulated messaging network whose state lives
//! in the gateway's database, so it outlives worker restarts and handovers.
mod codes;
mod connection;
mod contacts;
mod control;
mod group_changes;
mod groups;
mod history;
mod inbound;
pub mod injected;
mod labels;
mod live;
mod notices;
pub mod ops;
mod outbox;
mod payload;
mod presence;
mod proxied;
#[cfg(feature = "routes")]
pub mod routes;
mod sends;
pub mod store;
mod suspects;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use parley_shared::db::Db;

use crate::store::{SandboxDevice, Store};
use parley_shared::picture_links;
use tokio::sync::mpsc;

use self::connection::SandboxConnection;
use self::live::{Live, Phase};
use self::outbox::OutboxWriter;
use self::suspects::Suspects;
use parley_network::{
    ClientId, Connection, DisconnectReason, Identity, Jid, Network, NetworkError, NetworkEvent,
    SessionContext,
};

/// How many events a session may leave unread before the network waits.
const EVENT_BUFFER: usize = 64;

/// How long a pairing code stays valid.
pub const PAIR_CODE_TTL: Duration = Duration::from_secs(180);

pub use sends::EDIT_WINDOW;

/// The simulated network. Cheap to clone; clones share the live connections.
#[derive(Clone)]
pub struct SandboxNetwork {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    qr_first: Duration,
    qr_next: Duration,
    /// Where the signed picture links point (this deployment's public URL).
    links_base: String,
    /// How long a picture link stays valid.
    links_ttl: Duration,
    /// The signing key, read from the database once.
    links_key: tokio::sync::OnceCell<Vec<u8>>,
    /// The live connection of each session connected through this process.
    live: Mutex<HashMap<String, Arc<Live>>>,
    /// Where sends land (batched).
    outbox: OutboxWriter,
    /// Sessions that may have faults armed.
    suspects: Arc<Suspects>,
}

impl SandboxNetwork {
    /// A network over `db`; QR codes rotate after `qr_first`, then every `qr_next`.
    pub fn new(db: Db, qr_first: Duration, qr_next: Duration) -> SandboxNetwork {
        let suspects = Arc::new(Suspects::default());
        SandboxNetwork {
            inner: Arc::new(Inner {
                store: Store::new(db.clone()),
                qr_first,
                qr_next,
                links_base: "http://127.0.0.1:8080".into(),
                links_ttl: Duration::from_secs(picture_links::DEFAULT_TTL_SECS),
                links_key: tokio::sync::OnceCell::new(),
                live: Mutex::new(HashMap::new()),
                // The simulated network's own record: one writer, commits not
                // waiting for the disk flush (see `Db::relaxed`).
                outbox: OutboxWriter::new(Store::new(db.relaxed(2)), Arc::clone(&suspects)),
                suspects,
            }),
        }
    }

    /// Picture links point at `base` (the gateway's public URL, which serves
    /// them) and stay valid for `ttl`. Call before the network is shared.
    pub fn with_picture_links(mut self, base: String, ttl: Duration) -> SandboxNetwork {
        let inner = Arc::get_mut(&mut self.inner).expect("configured before it is shared");
        inner.links_base = base;
        inner.links_ttl = ttl;
        self
    }

    fn store(&self) -> &Store {
        &self.inner.store
    }

    fn outbox(&self) -> &OutboxWriter {
        &self.inner.outbox
    }

    fn suspects(&self) -> &Suspects {
        &self.inner.suspects
    }

    fn registry(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Live>>> {
        self.inner
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The session's live connection in this process.
    fn live(&self, client_id: &str) -> Option<Arc<Live>> {
        self.registry().get(client_id).cloned()
    }

    /// Registers `live`, returning the connection it replaces.
    fn register(&self, live: &Arc<Live>) -> Option<Arc<Live>> {
        self.registry()
            .insert(live.client_id.clone(), Arc::clone(live))
    }

    /// Ends a live connection: sends `reason` (when given), closes the event
    /// receiver, withdraws its QR code and closes its log row.
    async fn end(&self, live: &Arc<Live>, reason: Option<DisconnectReason>) {
        {
            let mut registry = self.registry();
            if registry
                .get(&live.client_id)
                .is_some_and(|current| Arc::ptr_eq(current, live))
            {
                registry.remove(&live.client_id);
            }
        }
        let mut state = live.state().await;
        if matches!(state.phase, Phase::Ended) {
            return;
        }
        if let Some(reason) = reason {
            state.emit(NetworkEvent::Disconnected(reason)).await;
        }
        let qr = state.end();
        drop(state);
        if let Some(qr) = qr {
            self.clear_qr(&live.client_id, &qr).await;
        }
        if let Err(e) = self.store().close_sandbox_connection(live.log_id).await {
            tracing::warn!(client_id = %live.client_id, error = %e, "sandbox: connection log not closed");
        }
    }

    /// Withdraws a QR code; a failure only leaves a stale code that no longer links.
    async fn clear_qr(&self, client_id: &str, qr: &str) {
        if let Err(e) = self.store().clear_qr(client_id, qr).await {
            tracing::warn!(client_id, error = %e, "sandbox: QR code not withdrawn");
        }
    }

    /// The first phase of a new connection: linked with the stored device, or
    /// pairing with a fresh QR code.
    async fn first_phase(
        &self,
        client_id: &str,
        device: Option<SandboxDevice>,
    ) -> Result<(Phase, NetworkEvent), NetworkError> {
        if let Some(device) = device {
            let identity = identity_of(&device).ok_or_else(|| {
                unreachable(format!(
                    "the stored device JID {:?} is malformed",
                    device.jid
                ))
            })?;
            let event = NetworkEvent::Connected(identity);
            return Ok((Phase::Linked, event));
        }
        let qr = codes::qr_code(client_id);
        self.store()
            .set_qr(client_id, &qr)
            .await
            .map_err(unreachable)?;
        let event = NetworkEvent::Qr { code: qr.clone() };
        Ok((Phase::Pairing { qr, rotation: None }, event))
    }
}

#[async_trait]
impl Network for SandboxNetwork {
    async fn connect(
        &self,
        ctx: SessionContext,
    ) -> Result<(Box<dyn Connection>, mpsc::Receiver<NetworkEvent>), NetworkError> {
        if let Some(proxy) = &ctx.proxy {
            proxied::tunnel_to(&self.inner.links_base, proxy).await?;
        }
        let db = self.store();
        // A fault armed under an earlier owner is found by the first operation.
        self.suspects().suspect(ctx.client_id.as_str());
        let log_id = db
            .open_sandbox_connection(ctx.client_id.as_str(), &ctx.pod_name, ctx.fence)
            .await
            .map_err(unreachable)?;
        let first = match db.sandbox_device(ctx.client_id.as_str()).await {
            Ok(device) => self.first_phase(ctx.client_id.as_str(), device).await,
            Err(e) => Err(unreachable(e)),
        };
        let (phase, event) = match first {
            Ok(first) => first,
            Err(e) => {
                if let Err(close) = db.close_sandbox_connection(log_id).await {
                    tracing::warn!(client_id = %ctx.client_id, error = %close, "sandbox: connection log not closed");
                }
                return Err(e);
            }
        };
        let pairing = matches!(phase, Phase::Pairing { .. });
        let (tx, rx) = mpsc::channel(EVENT_BUFFER);
        let live = Arc::new(Live::new(&ctx, log_id, tx, phase));
        live.state().await.emit(event).await;
        if pairing {
            let (first, next) = (self.inner.qr_first, self.inner.qr_next);
            live.start_rotation(db.clone(), first, next).await;
        }
        if let Some(replaced) = self.register(&live) {
            self.end(&replaced, Some(DisconnectReason::StreamReplaced))
                .await;
        }
        tracing::debug!(client_id = %ctx.client_id, pod = %ctx.pod_name, fence = ctx.fence, "sandbox: connected");
        Ok((Box::new(SandboxConnection::new(self.clone(), live)), rx))
    }

    async fn forget(&self, client_id: &ClientId) -> Result<(), NetworkError> {
        self.store()
            .forget_sandbox_session(client_id.as_str())
            .await
            .map_err(unreachable)
    }
}

/// The session identity a device record stands for (`None` when its stored
/// JID is malformed).
fn identity_of(device: &SandboxDevice) -> Option<Identity> {
    Some(Identity {
        jid: Jid::parse(&device.jid)?,
        lid: device.lid.clone(),
        push_name: device.push_name.clone(),
    })
}

/// The network's state could not be read or written (the sandbox keeps it
/// in the gateway's database): to the session, the network is unreachable.
/// The store's own words go to the log, never to the caller.
fn unreachable(e: impl std::fmt::Display) -> NetworkError {
    tracing::warn!(error = %e, "the sandbox network's state is out of reach");
    NetworkError::Unreachable("the sandbox network's state is out of reach".into())
}
