//! The event log's retention: events older than the configured age are
//! deleted, dead letters included, by every worker in turn (the delete is
//! the same wherever it runs).
use std::time::Duration;

use parley_shared::db::Db;
use tokio::sync::watch;

/// How often old events are looked for.
const EVERY: Duration = Duration::from_secs(600);

/// Deletes events older than `keep` now and every ten minutes until `stop`.
pub async fn run(db: Db, keep: Duration, mut stop: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = crate::stopped(&mut stop) => break,
            _ = tick.tick() => prune(&db, keep).await,
        }
    }
}

async fn prune(db: &Db, keep: Duration) {
    let Ok(keep) = chrono::Duration::from_std(keep) else {
        return;
    };
    match db.prune_events(chrono::Utc::now() - keep).await {
        Ok(0) => {}
        Ok(n) => tracing::info!(deleted = n, "events past their retention deleted"),
        Err(e) => tracing::warn!(error = %e, "cannot delete old events; trying again later"),
    }
}
