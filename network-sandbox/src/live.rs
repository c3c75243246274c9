//! One live connection as the simulated network sees it: its phase (pairing with
//! a rotating QR, linked, ended) and the sender of its events.
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use crate::store::Store;
use tokio::sync::{Mutex, MutexGuard, mpsc};
use tokio::task::JoinHandle;

use super::codes;
use parley_network::{NetworkEvent, SessionContext};

/// Where a connection stands.
pub(super) enum Phase {
    /// Showing `qr`; `rotation` replaces it periodically.
    Pairing {
        qr: String,
        rotation: Option<JoinHandle<()>>,
    },
    Linked,
    /// Closed, dropped or logged out: nothing more is sent.
    Ended,
}

pub(super) struct State {
    /// `None` once ended, which closes the session's receiver.
    tx: Option<mpsc::Sender<NetworkEvent>>,
    pub phase: Phase,
    /// The phones whose presence this connection subscribed to.
    pub watching: HashSet<String>,
}

impl State {
    /// Sends an event to the session; `false` when nobody listens any more.
    pub async fn emit(&self, event: NetworkEvent) -> bool {
        match &self.tx {
            Some(tx) => tx.send(event).await.is_ok(),
            None => false,
        }
    }

    /// Ends the connection: stops the QR rotation and closes the receiver.
    /// Returns the QR code that was showing, if any.
    pub fn end(&mut self) -> Option<String> {
        self.tx = None;
        match std::mem::replace(&mut self.phase, Phase::Ended) {
            Phase::Pairing { qr, rotation } => {
                if let Some(rotation) = rotation {
                    rotation.abort();
                }
                Some(qr)
            }
            Phase::Linked | Phase::Ended => None,
        }
    }

    /// Leaves pairing for the linked phase; returns the QR code that was showing.
    pub fn link(&mut self) -> Option<String> {
        match std::mem::replace(&mut self.phase, Phase::Linked) {
            Phase::Pairing { qr, rotation } => {
                if let Some(rotation) = rotation {
                    rotation.abort();
                }
                Some(qr)
            }
            Phase::Linked | Phase::Ended => None,
        }
    }
}

/// A connection registered with the network.
pub(super) struct Live {
    /// The connection log row.
    pub log_id: i64,
    pub client_id: String,
    pub fence: u64,
    state: Mutex<State>,
}

impl Live {
    pub fn new(
        ctx: &SessionContext,
        log_id: i64,
        tx: mpsc::Sender<NetworkEvent>,
        phase: Phase,
    ) -> Live {
        Live {
            log_id,
            client_id: ctx.client_id.to_string(),
            fence: ctx.fence,
            state: Mutex::new(State {
                tx: Some(tx),
                phase,
                watching: HashSet::new(),
            }),
        }
    }

    pub async fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().await
    }

    /// Starts replacing the QR code after `first`, then every `next`, while pairing.
    pub async fn start_rotation(self: &Arc<Self>, db: Store, first: Duration, next: Duration) {
        let live = Arc::clone(self);
        let task = tokio::spawn(async move {
            let mut wait = first;
            loop {
                tokio::time::sleep(wait).await;
                wait = next;
                if !live.rotate(&db).await {
                    break;
                }
            }
        });
        let mut state = self.state.lock().await;
        match &mut state.phase {
            Phase::Pairing { rotation, .. } => *rotation = Some(task),
            Phase::Linked | Phase::Ended => task.abort(),
        }
    }

    /// Shows a new QR code; `false` when pairing is over or nobody listens.
    async fn rotate(&self, db: &Store) -> bool {
        let mut state = self.state.lock().await;
        let Phase::Pairing { qr, .. } = &mut state.phase else {
            return false;
        };
        let code = codes::qr_code(&self.client_id);
        if let Err(e) = db.set_qr(&self.client_id, &code).await {
            tracing::warn!(client_id = %self.client_id, error = %e, "sandbox: QR not rotated");
            return true;
        }
        *qr = code.clone();
        state.emit(NetworkEvent::Qr { code }).await
    }
}
