//! An API pod announces itself in the lease store while it runs, so the
//! cluster summary (`GET /cluster`) lists the live API pods.
use std::sync::Arc;
use std::time::Duration;

use parley_shared::lease::Leases;

/// How often a pod announces itself, and how long an announcement lasts
/// (a pod that stops is gone from the list within this).
const EVERY: Duration = Duration::from_secs(5);
const LASTS: Duration = Duration::from_secs(15);

/// Announces `pod` every [`EVERY`] for as long as the runtime runs.
pub fn spawn(leases: Arc<dyn Leases>, pod: String) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(EVERY);
        loop {
            tick.tick().await;
            if let Err(e) = leases.announce_api_pod(&pod, LASTS).await {
                tracing::debug!(error = %e, "cannot announce this API pod");
            }
        }
    });
}
