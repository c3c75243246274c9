//! The session supervisor: claims sessions (on `/start` and by sweeping),
//! spreads them over the live workers, hands them over, and shuts down.
mod balance;
#[cfg(test)]
pub(crate) mod fakes;
#[cfg(test)]
mod feed_tests;
#[cfg(test)]
mod fence_tests;
#[cfg(test)]
mod gate;
#[cfg(test)]
mod handover_tests;
#[cfg(test)]
mod hold_tests;
mod pass_on;
mod registry;
#[cfg(test)]
mod send_tests;
mod silent;
mod start;
mod sweep;
#[cfg(test)]
mod takeover_tests;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use parley_model::ids::ClientId;
use parley_shared::bus::{Bus, BusError};
use parley_shared::db::{Db, DbError};
use parley_shared::lease::{self, Gone, Lease, LeaseError, Leases};
use parley_shared::media::MediaStore;
use tokio::time::{Instant, timeout};

use self::balance::Hysteresis;
use self::pass_on::PassedOn;
use self::registry::Registry;
use crate::events::EventPipeline;
use crate::network::Network;
use crate::presence;
use crate::send::download::Fetcher;
use crate::session::{
    self, INITIALIZING, NetworkControl, NotRun, OpenError, RequestCache, SessionDeps, Timing,
};

pub use balance::{fair_share, pick_to_shed, should_shed};
pub use sweep::{SweepError, SweepReport};

/// The ports and settings a supervisor works with.
pub struct Wiring {
    pub db: Db,
    pub bus: Arc<dyn Bus>,
    pub leases: Arc<dyn Leases>,
    pub network: Arc<dyn Network>,
    /// The adapter's test controls, when it has them (the sandbox).
    pub control: Option<Arc<dyn NetworkControl>>,
    pub pod_name: String,
    pub timing: Timing,
    /// Where multipart uploads wait for their send.
    pub media: Arc<dyn MediaStore>,
    /// Downloads `downloadUrl`s through the egress guard.
    pub fetcher: Fetcher,
    /// Events to webhooks (and hosted history).
    pub events: Arc<EventPipeline>,
}

/// Why a claim is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `/start`: run it even when it was logged out before (it pairs again).
    Start,
    /// A sweep found it unowned: run it only while it should run.
    Sweep,
}

/// What a claim came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// This worker runs the session (now, or already), with its status.
    Ours { status: String },
    /// Another worker holds the session's lease (empty: it was changing hands).
    Elsewhere { holder: String },
    /// The lease was free but the session is not run.
    NotRun(NotRun),
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum ClaimError {
    #[error(transparent)]
    Lease(#[from] LeaseError),
    #[error(transparent)]
    Open(#[from] OpenError),
    #[error("the worker is shutting down")]
    ShuttingDown,
    #[error("the worker's membership lapsed: it claims nothing until it is a member again")]
    NotAMember,
}

impl From<DbError> for ClaimError {
    fn from(e: DbError) -> Self {
        ClaimError::Open(OpenError::Db(e))
    }
}

impl From<BusError> for ClaimError {
    fn from(e: BusError) -> Self {
        ClaimError::Open(OpenError::Bus(e))
    }
}

/// Runs this worker's sessions. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct Supervisor {
    inner: Arc<Inner>,
}

struct Inner {
    deps: SessionDeps,
    registry: Arc<Registry>,
    hysteresis: Mutex<Hysteresis>,
    /// Sessions seen unowned by sweeps, since when.
    unowned_since: Mutex<HashMap<ClientId, Instant>>,
    /// Sessions handed over to spread load: to whom, and when.
    passed_on: Mutex<PassedOn>,
    /// This worker's membership: one of [`NOT_ANNOUNCED`], [`MEMBER`],
    /// [`LAPSED`].
    membership: AtomicU8,
    /// When the last announcement that went through was sent.
    announced: Mutex<Option<Instant>>,
    /// The other members that answered on their alive subject: only they
    /// are taken over while silent (`silent`).
    answering: Mutex<std::collections::HashSet<String>>,
}

/// Not announced yet: the first claim announces it.
const NOT_ANNOUNCED: u8 = 0;
/// An announcement went through while the membership could be trusted.
const MEMBER: u8 = 1;
/// No announcement went through in time: every session was closed, and
/// nothing is claimed until one goes through.
const LAPSED: u8 = 2;

impl Supervisor {
    pub fn new(wiring: Wiring) -> Self {
        let requests = Arc::new(RequestCache::new(
            wiring.timing.request_capacity,
            wiring.timing.request_memory,
        ));
        let deps = SessionDeps {
            db: wiring.db,
            bus: wiring.bus,
            leases: wiring.leases,
            network: wiring.network,
            control: wiring.control,
            pod_name: wiring.pod_name,
            timing: wiring.timing,
            requests,
            media: wiring.media,
            fetcher: wiring.fetcher,
            events: wiring.events,
        };
        Self {
            inner: Arc::new(Inner {
                deps,
                registry: Arc::default(),
                hysteresis: Mutex::default(),
                unowned_since: Mutex::default(),
                passed_on: Mutex::default(),
                membership: AtomicU8::new(NOT_ANNOUNCED),
                announced: Mutex::default(),
                answering: Mutex::default(),
            }),
        }
    }

    fn deps(&self) -> &SessionDeps {
        &self.inner.deps
    }

    fn hysteresis(&self) -> MutexGuard<'_, Hysteresis> {
        self.inner
            .hysteresis
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn unowned_since(&self) -> MutexGuard<'_, HashMap<ClientId, Instant>> {
        self.inner
            .unowned_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    pub fn pod_name(&self) -> &str {
        &self.deps().pod_name
    }

    pub fn timing(&self) -> &Timing {
        &self.deps().timing
    }

    pub fn leases(&self) -> Arc<dyn Leases> {
        Arc::clone(&self.deps().leases)
    }

    /// An announcement of this worker sent at `sent` went through: it is a
    /// member again (and claims again, when its membership had lapsed).
    pub fn membership_renewed(&self, sent: Instant) {
        {
            let mut announced = self.announced();
            *announced = Some(announced.map_or(sent, |last| last.max(sent)));
        }
        if self.inner.membership.swap(MEMBER, Ordering::SeqCst) == LAPSED {
            tracing::warn!("worker presence announced again: claiming sessions again");
        }
    }

    fn announced(&self) -> MutexGuard<'_, Option<Instant>> {
        self.inner
            .announced
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// How long since the last announcement that went through was sent;
    /// `None` before the first.
    fn silent_for(&self) -> Option<std::time::Duration> {
        self.announced().map(|sent| sent.elapsed())
    }

    /// Whether this worker's membership lapsed and no announcement went
    /// through since.
    fn is_lapsed(&self) -> bool {
        self.inner.membership.load(Ordering::SeqCst) == LAPSED
    }

    /// No announcement went through while the membership could be trusted:
    /// other workers may take this one's sessions over as soon as it lapses,
    /// so every session closes at once and nothing is claimed until an
    /// announcement goes through.
    pub fn membership_lapsed(&self) {
        self.lapse("worker presence could not be announced in time: closing every session");
    }

    /// Closes every session and claims nothing until an announcement goes
    /// through, logging `why` (once: a lapse while lapsed changes nothing).
    fn lapse(&self, why: &str) {
        if self.inner.membership.swap(LAPSED, Ordering::SeqCst) == LAPSED {
            return;
        }
        let sessions = self.inner.registry.signal_lease_lost();
        tracing::error!(sessions, "{why}");
    }

    /// How many sessions this worker runs.
    pub fn load(&self) -> u64 {
        u64::try_from(self.inner.registry.len()).unwrap_or(u64::MAX)
    }

    /// The clientIds this worker runs, sorted.
    pub fn owned(&self) -> Vec<ClientId> {
        self.inner
            .registry
            .snapshot()
            .into_iter()
            .map(|(id, _)| id)
            .collect()
    }

    /// The status of a session this worker runs.
    pub fn status_of(&self, client_id: &ClientId) -> Option<String> {
        self.inner.registry.status(client_id)
    }

    /// Announces this worker and its load to the other workers once.
    pub async fn announce(&self) -> Result<(), LeaseError> {
        let gauge = &parley_shared::metrics::metrics().sessions;
        let snapshot = self.inner.registry.snapshot();
        for state in [
            crate::session::INITIALIZING,
            crate::session::QR,
            crate::session::CONNECTED,
        ] {
            let n = snapshot.iter().filter(|(_, s)| s == state).count();
            gauge
                .with_label_values(&[state])
                .set(i64::try_from(n).unwrap_or(i64::MAX));
        }
        let deps = self.deps();
        let sent = Instant::now();
        presence::announce(
            deps.leases.as_ref(),
            &deps.timing,
            self.pod_name(),
            self.load(),
        )
        .await?;
        self.membership_renewed(sent);
        Ok(())
    }

    /// Takes the lease of `client_id` and runs the session, unless another
    /// worker holds it or the session should not run.
    pub async fn claim(&self, client_id: &ClientId, origin: Origin) -> Result<Claim, ClaimError> {
        self.claim_from(client_id, origin, None).await
    }

    /// [`Self::claim`], taking the lease over from `from` (a holder that is
    /// gone, as said) when given.
    #[tracing::instrument(skip_all, fields(client_id = %client_id, ?origin, from))]
    pub async fn claim_from(
        &self,
        client_id: &ClientId,
        origin: Origin,
        from: Option<(&str, Gone)>,
    ) -> Result<Claim, ClaimError> {
        let registry = &self.inner.registry;
        if registry.is_closed() {
            return Err(ClaimError::ShuttingDown);
        }
        if let Some(status) = registry.status(client_id) {
            return Ok(Claim::Ours { status });
        }
        // A worker claims only as a member: others take over the sessions
        // of a holder that is none.
        match self.inner.membership.load(Ordering::SeqCst) {
            LAPSED => return Err(ClaimError::NotAMember),
            NOT_ANNOUNCED => self.announce().await?,
            _ => {}
        }
        let deps = self.deps();
        let key = lease::session_key(client_id.as_str());
        // The grant's fence goes above the last one the session's row saw,
        // so a claim is never refused for a fence the lease store forgot
        // (lost with its data) or a clock behind the last owner's.
        let Some(row) = deps.db.session(client_id.as_str()).await? else {
            return Ok(Claim::NotRun(NotRun::Unknown));
        };
        let floor = u64::try_from(row.fence).unwrap_or(0);
        // Twice: the lease may be released between a refused acquire and the look-up.
        for _ in 0..2 {
            let granted_at = Instant::now();
            let (ttl, pod) = (deps.timing.lease_ttl, deps.pod_name.as_str());
            let granted = match from {
                Some(from) => deps.leases.take_over(&key, pod, from, ttl, floor).await?,
                None => deps.leases.acquire(&key, pod, ttl, floor).await?,
            };
            if let Some(lease) = granted {
                if let Some((from, gone)) = from {
                    tracing::info!(
                        from,
                        ?gone,
                        "took the session over from a worker that is gone"
                    );
                }
                crate::session::lease_event("acquisition");
                return self.run(client_id, lease, granted_at, origin).await;
            }
            match deps
                .leases
                .holders(std::slice::from_ref(&key))
                .await?
                .pop()
                .flatten()
            {
                Some(h) if h == deps.pod_name => {
                    // Being claimed (or handed over) by this worker right now.
                    let status = registry
                        .status(client_id)
                        .unwrap_or_else(|| INITIALIZING.into());
                    return Ok(Claim::Ours { status });
                }
                Some(h) => return Ok(Claim::Elsewhere { holder: h }),
                None => {}
            }
        }
        Ok(Claim::Elsewhere {
            holder: String::new(),
        })
    }

    /// Runs a session whose lease was just granted (or gives the lease back).
    async fn run(
        &self,
        client_id: &ClientId,
        lease: Lease,
        granted_at: Instant,
        origin: Origin,
    ) -> Result<Claim, ClaimError> {
        let deps = self.deps();
        let opened = match session::open(deps, client_id, &lease, origin == Origin::Start).await {
            Ok(Ok(opened)) => opened,
            Ok(Err(not_run)) => {
                self.release(&lease).await;
                return Ok(Claim::NotRun(not_run));
            }
            Err(e) => {
                self.release(&lease).await;
                return Err(e.into());
            }
        };
        let fence = lease.fence;
        let registry = Arc::clone(&self.inner.registry);
        let epoch = registry.next_epoch();
        let id = client_id.clone();
        let handle = session::spawn(deps.clone(), lease, granted_at, opened, epoch, move || {
            registry.remove(&id, epoch);
        });
        let status = handle.status();
        if let Err(handle) = self.inner.registry.insert(handle) {
            // Shutting down (or, impossibly, already running): do not keep it.
            handle.hand_over().await;
            return Err(ClaimError::ShuttingDown);
        }
        tracing::info!(fence, "session claimed");
        Ok(Claim::Ours { status })
    }

    async fn release(&self, lease: &Lease) {
        let deps = self.deps();
        match timeout(deps.timing.network_timeout, deps.leases.release(lease)).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                tracing::warn!(key = %lease.key, error = %e, "cannot release a lease; it expires")
            }
            Err(_) => tracing::warn!(key = %lease.key, "releasing a lease timed out; it expires"),
        }
    }

    /// Hands one session over (closes it without logout, releases its lease) and
    /// waits until it is done. `false` when this worker does not run it.
    #[tracing::instrument(skip_all, fields(client_id = %client_id))]
    pub async fn hand_over(&self, client_id: &ClientId) -> bool {
        match self.inner.registry.take(client_id) {
            Some(handle) => {
                handle.hand_over().await;
                true
            }
            None => false,
        }
    }

    /// Hands every session over at once, then withdraws this worker's
    /// presence; returns when all are released. Claims after this are
    /// refused. It stays a member until then: another worker takes a
    /// session over at once from a holder that is no member, so withdrawing
    /// first would let a session run on two workers while it stops here.
    pub async fn shutdown(&self) {
        let handles = self.inner.registry.close();
        tracing::info!(sessions = handles.len(), "handing every session over");
        for handle in &handles {
            handle.signal_hand_over();
        }
        futures::future::join_all(handles.into_iter().map(session::SessionHandle::join)).await;
        presence::withdraw(self.deps().leases.as_ref(), self.pod_name()).await;
    }
}
