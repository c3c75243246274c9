//! Session owners: the supervisor that claims, runs and hands over sessions,
//! the sandbox network, and worker presence. The network adapter is chosen by
//! the binary and handed to [`start`].
pub mod events;
pub mod history;
pub mod network;
pub mod network_errors;
mod presence;
pub mod query;
pub mod send;
pub mod session;
pub mod supervisor;
pub mod webhook;

use std::sync::Arc;
use std::time::Duration;

use parley_shared::config::Config;
use parley_shared::egress::Egress;
use parley_shared::ports::Ports;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::events::{ContactBook, EventLog, EventPipeline, GroupBook, HistorySink};
use crate::history::History;
use crate::history::mirror::MirrorLimits;
use crate::network::Network;
use crate::query::room_avatars::Avatars;
use crate::send::download::{Fetcher, Limits};
use crate::webhook::RetryPolicy;

pub use session::{NetworkControl, Timing};
pub use supervisor::{Supervisor, Wiring};

/// A running worker; [`WorkerHandle::shutdown`] hands its sessions over and stops.
pub struct WorkerHandle {
    supervisor: Supervisor,
    stop: watch::Sender<bool>,
    loops: Vec<JoinHandle<()>>,
    presence_stop: watch::Sender<bool>,
    presence: JoinHandle<()>,
}

/// Starts the worker: serves the start queue, sweeps for unowned sessions and
/// announces its presence.
pub async fn start(config: Config, ports: Ports, adapter: Adapter) -> anyhow::Result<WorkerHandle> {
    let pod_name = config.pod_name();
    let Adapter { network, control } = adapter;
    let egress = Egress {
        allow_private: config.allow_private_egress,
        proxy: config.egress_proxy()?,
    };
    // Without a hosted receiver no session keeps hosted history.
    let history = config.hosted_receiver_url.clone().map(|url| {
        let limits = MirrorLimits {
            max_bytes: config.media_mirror_max_bytes,
            transfers: usize::try_from(config.media_mirror_transfers).unwrap_or(usize::MAX),
        };
        let history = History::with_limits(
            ports.db.clone(),
            Arc::clone(&ports.media),
            Some(url),
            limits,
        );
        history as Arc<dyn HistorySink>
    });
    let avatars = history
        .as_ref()
        .map(|_| Avatars::new(ports.db.clone(), Arc::clone(&ports.media)));
    let contacts = Some(ContactBook::new(ports.db.clone()));
    let groups = Some(GroupBook::new(ports.db.clone()));
    let events = EventPipeline::new(
        egress.clone(),
        RetryPolicy::default(),
        Some(EventLog {
            db: ports.db.clone(),
            session_cap: config.event_session_cap,
            feed: Some(Arc::clone(&ports.bus)),
        }),
        history,
        contacts,
        groups,
        avatars,
    )?;
    let supervisor = Supervisor::new(Wiring {
        db: ports.db.clone(),
        bus: Arc::clone(&ports.bus),
        leases: Arc::clone(&ports.leases),
        network,
        control,
        pod_name,
        timing: Timing {
            member_ttl: Duration::from_millis(config.worker_membership_ms),
            ..Timing::default()
        },
        media: Arc::clone(&ports.media),
        fetcher: Fetcher::new(egress, Limits::SPEC)?
            .with_transfers(usize::try_from(config.media_send_transfers).unwrap_or(usize::MAX)),
        events,
    });
    let (stop, stopped) = watch::channel(false);
    let listener = supervisor
        .listen_start(stopped.clone())
        .await
        .map_err(|e| anyhow::anyhow!("cannot serve the start queue: {e}"))?;
    let alive = supervisor
        .listen_alive(stopped.clone())
        .await
        .map_err(|e| anyhow::anyhow!("cannot answer on the alive subject: {e}"))?;
    let retention = Duration::from_secs(config.event_retention_hours.saturating_mul(3600));
    let pruner = tokio::spawn(events::retention::run(
        ports.db.clone(),
        retention,
        stopped.clone(),
    ));
    let sweeper = tokio::spawn(supervisor.clone().run_sweeps(stopped));
    let (presence_stop, presence_stopped) = watch::channel(false);
    let presence = tokio::spawn(presence::run(supervisor.clone(), presence_stopped));
    tracing::info!(pod_name = supervisor.pod_name(), network = ?config.network, "worker started");
    Ok(WorkerHandle {
        supervisor,
        stop,
        loops: vec![listener, alive, sweeper, pruner],
        presence_stop,
        presence,
    })
}

/// A network adapter, with its test controls when it has them (the sandbox).
pub struct Adapter {
    pub network: Arc<dyn Network>,
    pub control: Option<Arc<dyn NetworkControl>>,
}

impl Adapter {
    /// An adapter without test controls (any network but the sandbox).
    pub fn network(network: Arc<dyn Network>) -> Adapter {
        Adapter {
            network,
            control: None,
        }
    }
}

/// Resolves once `stop` turns true (or its sender is gone).
pub(crate) async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopped| *stopped).await;
}

impl WorkerHandle {
    /// The supervisor, for probes and tests.
    pub fn supervisor(&self) -> &Supervisor {
        &self.supervisor
    }

    /// Stops claiming, hands every session over at once (connections closed
    /// without logout, leases released, not left to expire), then withdraws
    /// presence: announced until the last session is released, so no other
    /// worker takes one over while it still runs here.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        for task in self.loops {
            let _ = task.await;
        }
        self.supervisor.shutdown().await;
        let _ = self.presence_stop.send(true);
        let _ = self.presence.await;
    }
}
