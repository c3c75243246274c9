//! The session actor: one task per owned session. It waits for whichever comes
//! first (stop signal, network event, command, reconnect time) and handles it,
//! and ends by closing the connection and releasing the lease.
use std::future::Future;
use std::sync::Arc;

use parley_model::ids::ClientId;
use parley_shared::bus::{Incoming, Subscription};
use parley_shared::db::{SessionRow, StatePatch};
use parley_shared::lease::Lease;
use tokio::sync::{mpsc, watch};
use tokio::task::{Id, JoinError, JoinHandle};
use tokio::time::{Instant, timeout, timeout_at};

use super::calls::Ringing;
use super::fence::{FENCED, LiveConnection};
use super::held_queue::Held;
use super::in_flight::InFlight;
use super::output::{Output, Persisted};
use super::pacing::Pacer;
use super::{Backoff, SessionDeps, StopReason, StopSignal};
use crate::network::{Connection, Jid, NetworkEvent};
use crate::send::Me;

/// Longest wait for the bus to hand back the commands on their way when a
/// session stops (a round trip to the NATS server).
const DRAIN_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// How long a handover waits for the webhook attempts under way to end and
/// be recorded (a receiver that hangs longer gets the event again from the
/// next owner: at least once).
const DELIVERIES_ENDING: std::time::Duration = std::time::Duration::from_secs(3);

/// Status while connecting, reconnecting or before the network said anything.
pub const INITIALIZING: &str = "initializing";
/// Status while a QR code waits to be scanned.
pub const QR: &str = "qr";
/// Status while online and linked.
pub const CONNECTED: &str = "connected";

/// A live network connection and its events.
pub(super) struct Link {
    /// Shared with the sends in flight.
    pub connection: Arc<dyn Connection>,
    pub events: mpsc::Receiver<NetworkEvent>,
}

/// Why a session's task ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum End {
    /// Handover (shutdown, rebalance): close, record it, release.
    HandOver,
    /// The lease can no longer be trusted: close at once, then record that
    /// the session runs nowhere (a fenced write: refused once a newer owner
    /// claimed it).
    LeaseLost,
    /// A newer owner wrote the session's state: close at once, write nothing.
    FencedOut,
    /// Logged out or banned by the network; the state is written already.
    Terminal,
    /// Deleted by `/disconnect`.
    Deleted,
    /// The session's row is gone.
    Gone,
    /// The bus closed the command subscription: hand over so it is claimed afresh.
    BusClosed,
}

impl From<StopReason> for End {
    fn from(reason: StopReason) -> Self {
        match reason {
            StopReason::HandOver => End::HandOver,
            StopReason::LeaseLost => End::LeaseLost,
            StopReason::FencedOut => End::FencedOut,
        }
    }
}

/// `Ok` to go on, `Err` to end the session.
pub(super) type Flow = Result<(), End>;

enum Step {
    Stop(StopReason),
    Event(Option<NetworkEvent>),
    Command(Option<Incoming>),
    Sent(Result<(Id, crate::send::Done), JoinError>),
    Connect,
    /// A held send's wait ended.
    HoldEnded,
}

/// The state of one owned session, owned by its task.
pub(super) struct Actor {
    pub deps: SessionDeps,
    pub id: ClientId,
    pub lease: Lease,
    /// Settings as last read from the database.
    pub row: SessionRow,
    pub status: watch::Sender<String>,
    /// The current QR code, empty when none.
    pub qr: String,
    /// Whether the device is linked (pairing again is refused).
    pub paired: bool,
    pub link: Option<Link>,
    /// The link's connection, which the fence closes on a lost lease.
    pub live: LiveConnection,
    /// When the current connection came online.
    pub online_since: Option<Instant>,
    pub backoff: Backoff,
    /// When to (re)connect; `None` while connected or ending.
    pub retry_at: Option<Instant>,
    /// The last disconnect reason written, to skip rewriting it at every retry.
    pub last_disconnect: String,
    /// Sends running beside the loop.
    pub in_flight: InFlight,
    /// Sends waiting for the connection.
    pub held: Held,
    /// Webhook events (and hosted history) of this session.
    pub output: Output,
    /// Who the session is on the network, for its own messages.
    /// Who the session is: known once it was online (or restored linked).
    pub me: Option<Me>,
    /// Keeps its sends within the session's pacing limit.
    pub pacer: Pacer,
    /// While a sandbox operation applies its events: whether each message's
    /// event is in the log, awaited before the operation answers.
    pub persisting: Option<Vec<Persisted>>,
    /// The calls that ring it now.
    pub ringing: Ringing,
    /// The label changes it sent lately, whose echo is no news.
    pub own_labels: super::labels::OwnLabels,
}

impl Actor {
    pub fn new(
        deps: SessionDeps,
        lease: Lease,
        id: ClientId,
        row: SessionRow,
        status: watch::Sender<String>,
        stop: StopSignal,
        live: LiveConnection,
    ) -> Self {
        let backoff = Backoff::new(deps.timing.backoff_min, deps.timing.backoff_max);
        let on_fenced_out = Arc::new(move || {
            stop.send_if_modified(|s| {
                let first = s.is_none_or(|s| s == StopReason::HandOver);
                if first {
                    *s = Some(StopReason::FencedOut);
                }
                first
            });
        });
        let output = Output::open(
            Arc::clone(&deps.events),
            &id,
            &row,
            lease.fence,
            on_fenced_out,
        );
        let me = Jid::parse(&row.jid).map(|jid| Me {
            jid,
            push_name: String::new(),
        });
        Self {
            id,
            paired: row.logged_in,
            pacer: Pacer::new(row.pacing),
            last_disconnect: row.last_disconnect.clone(),
            deps,
            lease,
            row,
            status,
            qr: String::new(),
            link: None,
            live,
            online_since: None,
            backoff,
            retry_at: Some(Instant::now()),
            in_flight: InFlight::default(),
            held: Held::default(),
            output,
            me,
            persisting: None,
            ringing: Ringing::default(),
            own_labels: Default::default(),
        }
    }

    /// Runs the session until it ends, then closes it, calls `on_exit` and releases the lease.
    pub async fn run(
        mut self,
        mut commands: Subscription,
        mut stop: watch::Receiver<Option<StopReason>>,
        keeper: JoinHandle<()>,
        on_exit: impl FnOnce(),
    ) {
        tracing::info!(client_id = %self.id, fence = self.lease.fence, "session running");
        // What this worker remembered of the session's contacts may be
        // stale: another worker may have owned it since.
        self.forget_contacts();
        let end = loop {
            let (retry_at, hold_ends) = (self.retry_at, self.hold_ends());
            // Finished sends are answered, and a due connection attempt made,
            // before new commands are taken; no command is taken while the
            // session has as many sends running or waiting as it may.
            let room = self.in_flight.has_room() && self.held.has_room();
            let step = tokio::select! {
                biased;
                reason = stopped(&mut stop) => Step::Stop(reason),
                event = next_event(&mut self.link) => Step::Event(event),
                finished = self.in_flight.next() => Step::Sent(finished),
                () = sleep_until_some(retry_at) => Step::Connect,
                () = sleep_until_some(hold_ends) => Step::HoldEnded,
                incoming = commands.next(), if room => Step::Command(incoming),
            };
            let flow = match step {
                Step::Stop(reason) => Err(reason.into()),
                Step::Event(event) => until_stopped(&mut stop, self.on_event(event)).await,
                // A command being handled is finished and answered, even when a stop
                // arrives meanwhile: its caller must not wait for a reply that never comes.
                Step::Command(Some(incoming)) => self.on_command(incoming).await,
                Step::Command(None) => Err(End::BusClosed),
                Step::Sent(finished) => {
                    self.on_sent(finished).await;
                    Ok(())
                }
                Step::Connect => until_stopped(&mut stop, self.connect()).await,
                Step::HoldEnded => Ok(()),
            };
            if let Err(end) = flow {
                break end;
            }
            // Online now, unpaired now, or waited long enough.
            self.release_held().await;
        };
        if matches!(end, End::LeaseLost | End::FencedOut) {
            // Self-fence: nothing else first. Another worker may run the
            // session already: its connection closes, then its deliveries
            // end (what is left pending is the next owner's to deliver).
            if let Some(link) = self.link.take()
                && self.close(link).await
            {
                tracing::warn!(client_id = %self.id, "{FENCED}");
            }
            self.end_deliveries().await;
        }
        // No new commands come here; those on their way are answered below.
        commands.drain();
        self.refuse_held().await;
        self.settle_sends().await;
        if self.deps.bus.healthy().await {
            refuse_waiting(&mut commands).await;
        } else {
            // The bus cannot hand back what is on its way: answer what is here.
            while let Some(incoming) = commands.try_next() {
                answer_moved(incoming).await;
            }
        }
        drop(commands);
        self.finish(end, keeper, on_exit).await;
    }

    /// Closes the connection, records a handover, leaves the supervisor's books
    /// (`on_exit`) and releases the lease.
    async fn finish(mut self, end: End, keeper: JoinHandle<()>, on_exit: impl FnOnce()) {
        if let Some(link) = self.link.take() {
            self.close(link).await;
        }
        if matches!(end, End::HandOver | End::BusClosed | End::LeaseLost) {
            let patch = StatePatch {
                status: Some(INITIALIZING.into()),
                connected: Some(false),
                ..StatePatch::default()
            };
            // A newer owner may exist already: then this write is refused, as
            // it should be. Without it a session closed for want of its lease
            // (its worker cut off from the lease store) would show connected
            // until it is claimed again. Bounded: the database may be out of
            // reach too.
            let wait = self.deps.timing.network_timeout;
            if timeout(wait, self.write(patch)).await.is_err() {
                tracing::warn!(client_id = %self.id, "recording the session's end timed out");
            }
        }
        // Deliveries under way end and are recorded before the lease goes: the
        // next owner then finds them delivered, not pending (no duplicates).
        self.end_deliveries().await;
        self.forget_contacts();
        keeper.abort();
        on_exit();
        // Stopped: it serves nothing from here on. Said before the lease goes,
        // so no next owner can start before this line.
        tracing::info!(client_id = %self.id, ?end, "session stopped");
        match timeout(
            self.deps.timing.network_timeout,
            self.deps.leases.release(&self.lease),
        )
        .await
        {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                tracing::warn!(client_id = %self.id, error = %e, "cannot release the lease; it expires")
            }
            Err(_) => tracing::warn!(client_id = %self.id, "lease release timed out; it expires"),
        }
    }

    /// Ends the deliveries under way, waiting for their records at most
    /// [`DELIVERIES_ENDING`]; later calls return at once.
    async fn end_deliveries(&self) {
        if timeout(DELIVERIES_ENDING, self.output.stop_deliveries())
            .await
            .is_err()
        {
            tracing::warn!(client_id = %self.id, "deliveries under way did not end in time; the next owner repeats them");
        }
    }

    /// Forgets the contacts' pairs the worker remembers for the session.
    fn forget_contacts(&self) {
        if let Some(contacts) = &self.deps.events.contacts {
            contacts.forget(&self.id);
        }
    }

    /// Closes a connection without logging out, unless the fence closed it
    /// already; whether it closed it.
    pub(super) async fn close(&self, link: Link) -> bool {
        if !self.live.take(&link.connection) {
            return false;
        }
        if timeout(self.deps.timing.network_timeout, link.connection.close())
            .await
            .is_err()
        {
            tracing::warn!(client_id = %self.id, "closing the connection timed out");
        }
        true
    }

    /// Writes state under the lease's fence; a refusal means a newer owner exists.
    /// Database failures are logged and the session goes on (its lease still holds).
    pub(super) async fn write(&self, patch: StatePatch) -> Flow {
        match self
            .deps
            .db
            .fenced_update(self.id.as_str(), self.lease.fence, patch)
            .await
        {
            Ok(true) => Ok(()),
            Ok(false) => {
                tracing::warn!(client_id = %self.id, fence = self.lease.fence, "a newer owner exists: stopping");
                Err(End::FencedOut)
            }
            Err(e) => {
                tracing::error!(client_id = %self.id, error = %e, "cannot record session state");
                Ok(())
            }
        }
    }

    pub(super) fn current_status(&self) -> String {
        self.status.borrow().clone()
    }

    /// The connection, while the session is online on it.
    pub(super) fn online_link(&self) -> Option<&Link> {
        self.link
            .as_ref()
            .filter(|_| *self.status.borrow() == CONNECTED)
    }

    pub(super) fn set_status(&self, status: &str) {
        self.status.send_if_modified(|s| {
            let changed = s != status;
            if changed {
                status.clone_into(s);
            }
            changed
        });
    }

    /// Schedules the next connection attempt after the backoff delay.
    pub(super) fn schedule_reconnect(&mut self) {
        let delay = self.backoff.next_delay();
        tracing::debug!(client_id = %self.id, ?delay, "reconnecting later");
        self.retry_at = Some(Instant::now() + delay);
    }
}

/// Tells the callers of the commands still waiting, and of those the bus
/// delivers until the drain completes, that the session moved: they ask its
/// next owner at once instead of waiting for their attempt to time out.
async fn refuse_waiting(commands: &mut Subscription) {
    let until = Instant::now() + DRAIN_WAIT;
    while let Ok(Some(incoming)) = timeout_at(until, commands.next()).await {
        answer_moved(incoming).await;
    }
}

/// Tells the caller of `incoming` that the session moved: it asks the next
/// owner with the same request id.
pub(super) async fn answer_moved(incoming: Incoming) {
    if let Err(e) = incoming
        .respond(parley_shared::bus::commands::moved())
        .await
    {
        tracing::warn!(error = %e, "cannot send the reply");
    }
}

/// Resolves when the session is told to stop.
async fn stopped(stop: &mut watch::Receiver<Option<StopReason>>) -> StopReason {
    match stop.wait_for(Option::is_some).await {
        Ok(reason) => reason.unwrap_or(StopReason::HandOver),
        // Nobody can signal any more: the supervisor is gone.
        Err(_) => StopReason::HandOver,
    }
}

/// Runs `step` unless the session is told to stop first (then `step` is dropped).
async fn until_stopped(
    stop: &mut watch::Receiver<Option<StopReason>>,
    step: impl Future<Output = Flow>,
) -> Flow {
    tokio::select! {
        biased;
        reason = stopped(stop) => Err(reason.into()),
        flow = step => flow,
    }
}

/// The next network event; pending while not connected, `None` once the connection's events end.
async fn next_event(link: &mut Option<Link>) -> Option<NetworkEvent> {
    match link {
        Some(link) => link.events.recv().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until_some(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
