//! Keeps the device's state saved while a connection is open.
//!
//! The client library saves its device (keys, account, the privacy-token
//! salt, the push name, ...) from a task it wakes at each change; a change
//! made while that task is already saving wakes nothing, and waits for the
//! library's next change or its 30 s timer, so a worker that stopped in
//! between lost it (a salt that came by app state, say, is not asked for
//! again). Every [`EVERY`] the connection flushes the state itself: nothing
//! when the library saved it (the flush is a flag's check), the change
//! otherwise. The store writes the client's latest state at each save's
//! turn (`store::device::Saves`), so the two savers never undo each other.
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use whatsapp_rust::store::persistence_manager::PersistenceManager;

use crate::store::{SeaOrmDeviceStore, is_fence_rejected};

/// How often an open connection flushes its device's state.
pub const EVERY: Duration = Duration::from_secs(1);

/// Flushes `client`'s device state every [`EVERY`] until the connection
/// ended (`ended`) or a newer owner took the session.
pub fn keep_saved(
    store: &SeaOrmDeviceStore,
    client: &Arc<PersistenceManager>,
    mut ended: watch::Receiver<bool>,
) {
    store.saves_of(client);
    let client = Arc::downgrade(client);
    let client_id = store.client_id().to_string();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = ended.wait_for(|e| *e) => return,
            }
            let Some(client) = client.upgrade() else {
                return;
            };
            match client.flush().await {
                Ok(()) => {}
                // A newer owner writes the session now; this connection closes.
                Err(e) if is_fence_rejected(&e) => return,
                Err(e) => {
                    tracing::warn!(%client_id, error = %e, "the device state could not be saved; trying again");
                }
            }
        }
    });
}
