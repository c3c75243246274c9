//! The self-fence: a session whose lease can no longer be trusted closes
//! its network connection at once, whatever its task is doing then (a
//! command may be waiting on the bus or the event stream for seconds while
//! the worker is cut off from them), so no device stays connected on two
//! workers while another takes the session over. The task then ends as a
//! lost lease ends it; what it still writes is refused by the database's
//! fence once a newer owner has claimed the session.
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use parley_model::ids::ClientId;
use tokio::sync::watch;
use tokio::time::timeout;

use super::StopReason;
use crate::network::Connection;

/// Logged when a session whose lease is lost (or fenced out by a newer
/// owner) closed its connection.
pub(super) const FENCED: &str = "the session's connection closed at once: its lease is lost";

/// The session's open connection, shared by its task (which opens and
/// closes it) and its fence (which closes it on a lost lease).
#[derive(Clone, Default)]
pub(super) struct LiveConnection(Arc<Mutex<Option<Arc<dyn Connection>>>>);

impl LiveConnection {
    fn slot(&self) -> MutexGuard<'_, Option<Arc<dyn Connection>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `connection` is the session's open one now.
    pub fn opened(&self, connection: &Arc<dyn Connection>) {
        *self.slot() = Some(Arc::clone(connection));
    }

    /// Takes `connection` to close it; `false` when the fence closed it
    /// already.
    pub fn take(&self, connection: &Arc<dyn Connection>) -> bool {
        let mut slot = self.slot();
        match slot.as_ref() {
            Some(live) if Arc::ptr_eq(live, connection) => {
                *slot = None;
                true
            }
            Some(_) => true,
            None => false,
        }
    }
}

/// Closes `live`'s connection as soon as `stop` says the lease was lost,
/// within `wait`; ends then, or once the session's task is gone.
pub(super) fn spawn(
    client_id: ClientId,
    live: LiveConnection,
    mut stop: watch::Receiver<Option<StopReason>>,
    wait: Duration,
) {
    tokio::spawn(async move {
        let lost = stop
            .wait_for(|reason| *reason == Some(StopReason::LeaseLost))
            .await
            .is_ok();
        if !lost {
            return;
        }
        let Some(connection) = live.slot().take() else {
            return;
        };
        if timeout(wait, connection.close()).await.is_err() {
            tracing::warn!(%client_id, "closing the connection timed out");
        }
        tracing::warn!(%client_id, "{FENCED}");
    });
}
