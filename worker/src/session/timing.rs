//! The worker's clocks: lease lifetime and renewal, sweeps, reconnect backoff,
//! network timeouts and rebalancing hysteresis. Tests shorten them.
use std::time::Duration;

/// Every delay the supervisor and its sessions use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timing {
    /// How long a granted or renewed lease lasts.
    pub lease_ttl: Duration,
    /// How often a session renews its lease.
    pub renew_every: Duration,
    /// How long before the lease would expire a session that could not renew
    /// closes itself (clock drift and network delay allowance).
    pub fence_margin: Duration,
    /// How often the supervisor looks for unowned sessions.
    pub sweep_every: Duration,
    /// How long the worker's membership (its presence) lasts without being
    /// announced again: once it lapsed, other workers take its sessions over
    /// without waiting for their leases to expire.
    pub member_ttl: Duration,
    /// How often the worker announces its membership.
    pub member_every: Duration,
    /// How long a member that the bus no longer reaches must have been
    /// silent (no announcement through) before others take its sessions
    /// over without waiting for its membership to lapse; `None`: only once
    /// it lapsed.
    pub silent_after: Option<Duration>,
    /// First reconnect delay.
    pub backoff_min: Duration,
    /// Longest reconnect delay.
    pub backoff_max: Duration,
    /// A connection up this long resets the backoff when it drops.
    pub stable_after: Duration,
    /// Longest wait for one network operation (connect, pair, logout, close).
    pub network_timeout: Duration,
    /// How long a send waits for a paired session to come online (after a
    /// reconnect or a handover) before it is refused. Below the API's attempt
    /// timeout, so the caller gets the answer rather than a retry.
    pub connect_hold: Duration,
    /// Members must be unchanged this long before load is rebalanced.
    pub rebalance_settle: Duration,
    /// Least time between two handovers for rebalancing.
    pub rebalance_gap: Duration,
    /// A session unowned this long is claimed even above the fair share (the
    /// workers that should take it are not doing so); rebalancing then pauses
    /// for ten times as long.
    pub orphan_grace: Duration,
    /// How long a command's outcome is remembered by request id.
    pub request_memory: Duration,
    /// How many outcomes are remembered at most.
    pub request_capacity: usize,
}

impl Default for Timing {
    fn default() -> Self {
        Self::with_lease_ttl(Duration::from_secs(10))
    }
}

impl Timing {
    /// Production delays around a lease lifetime: renew every third of it, and
    /// fence a fifth of it before it would expire.
    pub fn with_lease_ttl(lease_ttl: Duration) -> Self {
        Self {
            lease_ttl,
            renew_every: lease_ttl / 3,
            fence_margin: lease_ttl / 5,
            sweep_every: Duration::from_millis(500),
            member_ttl: Duration::from_millis(3500),
            member_every: Duration::from_millis(500),
            // Three announcements missed.
            silent_after: Some(Duration::from_millis(1500)),
            backoff_min: Duration::from_millis(200),
            backoff_max: Duration::from_secs(30),
            stable_after: Duration::from_secs(30),
            network_timeout: Duration::from_secs(10),
            connect_hold: Duration::from_secs(5),
            rebalance_settle: Duration::from_secs(5),
            rebalance_gap: Duration::from_secs(1),
            orphan_grace: lease_ttl,
            request_memory: Duration::from_secs(300),
            // Covers the API's retry budget (25 s) at 2,000 commands/s per worker;
            // an outcome is a few hundred bytes.
            request_capacity: 50_000,
        }
    }

    /// How long a lease stays trusted after a renewal was sent.
    pub fn trusted_for(&self) -> Duration {
        self.lease_ttl.saturating_sub(self.fence_margin)
    }

    /// How long the worker's membership stays trusted after an announcement
    /// was sent: past it, the worker closes every session (other workers may
    /// take them over once the membership lapsed).
    pub fn member_trusted_for(&self) -> Duration {
        self.member_ttl.saturating_sub(self.member_every * 2)
    }

    /// [`Self::silent_after`], when the membership does not lapse as soon.
    pub fn silent_takeover(&self) -> Option<Duration> {
        self.silent_after.filter(|silent| *silent < self.member_ttl)
    }

    /// How long a worker that has lost its bus connection may go without an
    /// announcement through before it closes every session: one
    /// announcement fewer than others wait for before they take its
    /// sessions over ([`Self::silent_takeover`]).
    pub fn silent_fence(&self) -> Option<Duration> {
        Some(self.silent_takeover()?.saturating_sub(self.member_every))
    }
}
