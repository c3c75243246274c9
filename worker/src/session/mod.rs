//! One owned session: an actor task that drives its network connection, keeps
//! its lease, writes its state under the lease's fence and answers its commands.
mod actor;
mod backoff;
mod calls;
mod commands;
mod events;
mod fence;
mod held;
mod held_queue;
pub mod idempotency;
mod in_flight;
mod keeper;
mod labels;
mod output;
mod pacing;
#[cfg(test)]
mod reply_tests;
mod route;
mod sends;
mod timing;

use std::sync::Arc;

use parley_contract::command::Outcome;
use parley_model::ids::ClientId;
use parley_shared::bus::commands as bus_commands;
use parley_shared::bus::{Bus, BusError, Incoming, Subscription, session_subject};
use parley_shared::db::{Db, DbError, SessionRow, StatePatch};
use parley_shared::lease::{Lease, Leases};
use parley_shared::media::MediaStore;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::events::EventPipeline;
use crate::network::Network;
use crate::send::download::Fetcher;

pub use actor::{CONNECTED, INITIALIZING, QR};
pub use backoff::Backoff;
pub use idempotency::RequestCache;
pub(crate) use keeper::lease_event;
pub use timing::Timing;

pub use parley_network::NetworkControl;

/// What every session of one worker shares.
#[derive(Clone)]
pub struct SessionDeps {
    pub db: Db,
    pub bus: Arc<dyn Bus>,
    pub leases: Arc<dyn Leases>,
    pub network: Arc<dyn Network>,
    /// The adapter's test controls, when it has them (the sandbox).
    pub control: Option<Arc<dyn NetworkControl>>,
    pub pod_name: String,
    pub timing: Timing,
    pub requests: Arc<RequestCache>,
    /// Where multipart uploads wait for their send.
    pub media: Arc<dyn MediaStore>,
    /// Downloads `downloadUrl`s through the egress guard.
    pub fetcher: Fetcher,
    /// Events to webhooks (and hosted history).
    pub events: Arc<EventPipeline>,
}

/// Why a running session is told to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// Hand it over gracefully: close without logout, release the lease.
    HandOver,
    /// The lease could not be renewed in time: close at once (self-fence).
    LeaseLost,
    /// A write was refused for a newer owner's fence: close at once, as for
    /// a lost lease (the lease keeper may not know yet).
    FencedOut,
}

/// The stop signal of one session, shared by its handle and its lease keeper.
pub type StopSignal = Arc<watch::Sender<Option<StopReason>>>;

/// Why a claimed session is not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotRun {
    /// No such session.
    Unknown,
    /// The session should not run (logged out or banned) and nobody asked to start it.
    NotDesired,
    /// A newer owner wrote the session's state meanwhile.
    Superseded,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error(transparent)]
    Bus(#[from] BusError),
}

/// A session ready to run: its settings and its command subscription.
pub struct Opened {
    id: ClientId,
    row: SessionRow,
    commands: Subscription,
}

/// Takes a freshly leased session over: checks it should run, records this
/// worker as its owner under the fence and subscribes to its commands.
/// `start`: explicitly asked to run (`/start`), which makes it desired again.
#[tracing::instrument(skip_all, fields(client_id = %client_id))]
pub async fn open(
    deps: &SessionDeps,
    client_id: &ClientId,
    lease: &Lease,
    start: bool,
) -> Result<Result<Opened, NotRun>, OpenError> {
    let Some(mut row) = deps.db.session(client_id.as_str()).await? else {
        return Ok(Err(NotRun::Unknown));
    };
    if !row.desired && !start {
        return Ok(Err(NotRun::NotDesired));
    }
    let patch = StatePatch {
        status: Some(actor::INITIALIZING.into()),
        pod_name: Some(deps.pod_name.clone()),
        connected: Some(false),
        desired: start.then_some(true),
        ..StatePatch::default()
    };
    if !deps
        .db
        .fenced_update(client_id.as_str(), lease.fence, patch)
        .await?
    {
        return Ok(Err(NotRun::Superseded));
    }
    row.status = actor::INITIALIZING.into();
    row.pod_name.clone_from(&deps.pod_name);
    row.connected = false;
    row.desired = true;
    let commands = deps
        .bus
        .subscribe(&session_subject(client_id.as_str()), None)
        .await?;
    Ok(Ok(Opened {
        id: client_id.clone(),
        row,
        commands,
    }))
}

/// Sends an outcome back to the requester of a command.
pub async fn respond(incoming: Incoming, outcome: &Outcome) {
    if let Err(e) = incoming.respond(bus_commands::encode(outcome)).await {
        tracing::warn!(error = %e, "cannot send the reply");
    }
}

/// A running session as its supervisor sees it.
pub struct SessionHandle {
    client_id: ClientId,
    epoch: u64,
    stop: StopSignal,
    status: watch::Receiver<String>,
    task: JoinHandle<()>,
}

impl SessionHandle {
    pub fn client_id(&self) -> &ClientId {
        &self.client_id
    }

    /// Tells one run of a session from another of the same id.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The status last reached: `initializing`, `qr` or `connected`.
    pub fn status(&self) -> String {
        self.status.borrow().clone()
    }

    /// Whether the session's task has ended.
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }

    /// Asks the session to hand over (close, release) without waiting.
    pub fn signal_hand_over(&self) {
        self.stop.send_if_modified(|s| {
            let idle = s.is_none();
            if idle {
                *s = Some(StopReason::HandOver);
            }
            idle
        });
    }

    /// Tells the session it lost its lease (this worker's membership
    /// lapsed): it closes at once, as when its own renewal fails.
    pub fn signal_lease_lost(&self) {
        self.stop.send_if_modified(|s| {
            let changed = *s != Some(StopReason::LeaseLost);
            *s = Some(StopReason::LeaseLost);
            changed
        });
    }

    /// Waits until the session's task has ended.
    pub async fn join(self) {
        if let Err(e) = self.task.await {
            tracing::error!(client_id = %self.client_id, error = %e, "session task failed");
        }
    }

    /// Hands the session over and waits until its lease is released.
    pub async fn hand_over(self) {
        self.signal_hand_over();
        self.join().await;
    }
}

/// Runs an opened session as its own task. `granted_at` is when the lease was
/// asked for (its deadline counts from then); `on_exit` runs when the task ends.
pub fn spawn(
    deps: SessionDeps,
    lease: Lease,
    granted_at: Instant,
    opened: Opened,
    epoch: u64,
    on_exit: impl FnOnce() + Send + 'static,
) -> SessionHandle {
    let client_id = opened.id.clone();
    let stop: StopSignal = Arc::new(watch::channel(None).0);
    let (status_tx, status) = watch::channel(opened.row.status.clone());
    let keeper = keeper::spawn(
        Arc::clone(&deps.leases),
        lease.clone(),
        deps.timing.clone(),
        granted_at,
        Arc::clone(&stop),
    );
    let live = fence::LiveConnection::default();
    fence::spawn(
        client_id.clone(),
        live.clone(),
        stop.subscribe(),
        deps.timing.network_timeout,
    );
    let actor = actor::Actor::new(
        deps,
        lease,
        opened.id,
        opened.row,
        status_tx,
        Arc::clone(&stop),
        live,
    );
    let task = tokio::spawn(actor.run(opened.commands, stop.subscribe(), keeper, on_exit));
    SessionHandle {
        client_id,
        epoch,
        stop,
        status,
        task,
    }
}
