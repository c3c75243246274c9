//! Announces this worker as a live member, with its load (the sessions it
//! runs), until it stops; then withdraws it at once.
use std::sync::Arc;
use std::time::Duration;

use parley_shared::lease::{LeaseError, Leases};
use tokio::sync::watch;

/// How long an announcement stays valid without renewal.
pub const PRESENCE_TTL: Duration = Duration::from_secs(6);

/// Announces `name` with `load` once.
pub async fn announce(leases: &dyn Leases, name: &str, load: u64) -> Result<(), LeaseError> {
    leases.announce(name, load, PRESENCE_TTL).await
}

/// Removes `name` from the live members at once.
pub async fn withdraw(leases: &dyn Leases, name: &str) {
    if let Err(e) = leases.withdraw(name).await {
        tracing::warn!(error = %e, "cannot withdraw worker presence");
    }
}

/// Announces every third of [`PRESENCE_TTL`] with the current `load()` until
/// `stop` turns true, then withdraws.
pub async fn run(
    leases: Arc<dyn Leases>,
    name: String,
    load: impl Fn() -> u64 + Send,
    mut stop: watch::Receiver<bool>,
) {
    let mut tick = tokio::time::interval(PRESENCE_TTL / 3);
    loop {
        tokio::select! {
            _ = tick.tick() => {
                if let Err(e) = announce(leases.as_ref(), &name, load()).await {
                    tracing::warn!(error = %e, "cannot announce worker presence");
                }
            }
            () = crate::stopped(&mut stop) => break,
        }
    }
    withdraw(leases.as_ref(), &name).await;
}
