//! The lease keeper of one session: renews the lease on time and raises
//! [`StopReason::LeaseLost`] as soon as the lease can no longer be trusted.
use std::sync::Arc;

use parley_shared::lease::{Lease, Leases};
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep_until, timeout_at};

use super::{StopReason, StopSignal, Timing};

/// Renews `lease` every `timing.renew_every` until it is lost or the task is aborted.
/// The lease is trusted until `timing.trusted_for()` after the last renewal was
/// sent (the grant, first): past that, or when a renewal is refused, the session
/// is told to stop. Failed renewals (store unreachable) are retried until then.
pub fn spawn(
    leases: Arc<dyn Leases>,
    lease: Lease,
    timing: Timing,
    granted_at: Instant,
    stop: StopSignal,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let retry = (timing.renew_every / 4).max(std::time::Duration::from_millis(10));
        let mut trusted_until = granted_at + timing.trusted_for();
        let mut next = granted_at + timing.renew_every;
        loop {
            sleep_until(next.min(trusted_until)).await;
            if Instant::now() >= trusted_until {
                tracing::warn!(key = %lease.key, "lease not renewed in time: closing the session");
                break;
            }
            let sent = Instant::now();
            match timeout_at(trusted_until, leases.renew(&lease, timing.lease_ttl)).await {
                Ok(Ok(true)) => {
                    lease_event("renewal");
                    trusted_until = sent + timing.trusted_for();
                    next = sent + timing.renew_every;
                }
                Ok(Ok(false)) => {
                    tracing::warn!(key = %lease.key, "lease lost to another holder: closing the session");
                    break;
                }
                Ok(Err(e)) => {
                    tracing::warn!(key = %lease.key, error = %e, "cannot renew the lease; retrying");
                    next = Instant::now() + retry;
                }
                Err(_) => {
                    tracing::warn!(key = %lease.key, "lease renewal too slow: closing the session");
                    break;
                }
            }
        }
        lease_event("loss");
        stop.send_if_modified(|s| {
            let changed = *s != Some(StopReason::LeaseLost);
            *s = Some(StopReason::LeaseLost);
            changed
        });
    })
}

/// Counts a lease event (`acquisition`, `renewal`, `loss`) in `/metrics`.
pub(crate) fn lease_event(event: &str) {
    parley_shared::metrics::metrics()
        .lease_events
        .with_label_values(&[event])
        .inc();
}
