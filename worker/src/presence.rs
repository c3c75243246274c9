//! Announces this worker as a live member, with its load (the sessions it
//! runs), until it stops; then withdraws it at once. The membership is the
//! worker's own lease: other workers take over the sessions of a worker
//! whose membership lapsed, so a worker that cannot announce itself for
//! [`Timing::member_trusted_for`] closes every session before that happens
//! and claims nothing until it is a member again.
use parley_shared::lease::{LeaseError, Leases};
use tokio::sync::watch;
use tokio::time::{Instant, sleep_until, timeout};

use crate::session::Timing;
use crate::supervisor::Supervisor;

/// Announces `name` with `load` once, valid for the membership's lifetime.
pub async fn announce(
    leases: &dyn Leases,
    timing: &Timing,
    name: &str,
    load: u64,
) -> Result<(), LeaseError> {
    leases.announce(name, load, timing.member_ttl).await
}

/// Removes `name` from the live members at once.
pub async fn withdraw(leases: &dyn Leases, name: &str) {
    if let Err(e) = leases.withdraw(name).await {
        tracing::warn!(error = %e, "cannot withdraw worker presence");
    }
}

/// Announces the supervisor's worker every [`Timing::member_every`] with
/// its load until `stop` turns true, then withdraws it. When no announcement
/// went through for [`Timing::member_trusted_for`], or for
/// [`Timing::silent_fence`] while the bus is lost too, the supervisor fences
/// itself (closes every session) until one does.
pub async fn run(supervisor: Supervisor, stop: watch::Receiver<bool>) {
    let watch = supervisor.clone().watch_bus(stop.clone());
    tokio::join!(announce_until_stopped(supervisor, stop), watch);
}

async fn announce_until_stopped(supervisor: Supervisor, mut stop: watch::Receiver<bool>) {
    let timing = supervisor.timing().clone();
    let leases = supervisor.leases();
    let name = supervisor.pod_name().to_string();
    let mut tick = tokio::time::interval(timing.member_every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut trusted_until: Option<Instant> = None;
    loop {
        let lapse = async {
            match trusted_until {
                Some(until) => sleep_until(until).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = tick.tick() => {
                let sent = Instant::now();
                let announced = announce(leases.as_ref(), &timing, &name, supervisor.load());
                match timeout(timing.member_every, announced).await {
                    Ok(Ok(())) => {
                        trusted_until = Some(sent + timing.member_trusted_for());
                        supervisor.membership_renewed(sent);
                    }
                    Ok(Err(e)) => tracing::warn!(error = %e, "cannot announce worker presence"),
                    Err(_) => tracing::warn!(
                        timeout = ?timing.member_every,
                        "announcing worker presence timed out"
                    ),
                }
            }
            () = lapse => {
                trusted_until = None;
                supervisor.membership_lapsed();
            }
            () = crate::stopped(&mut stop) => break,
        }
    }
    withdraw(leases.as_ref(), &name).await;
}
