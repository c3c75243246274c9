//! The lease port: exclusive, expiring ownership of a key (a session) with a
//! fencing token that grows at every grant, plus worker presence for spreading load
//! and API pod presence for the cluster summary.
//!
//! Keys are relative; adapters prefix them with the cluster name.
pub mod memory;
pub mod redis;

use std::time::Duration;

use async_trait::async_trait;

/// A granted lease. `token` proves ownership for renew and release; `fence`
/// orders grants: a later grant of the same key always has a larger fence,
/// and a grant's fence is above the floor its caller names (the last fence
/// the key's stored rows saw), so the order holds even when the store lost
/// its counters and the grantee's clock is behind the last owner's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub key: String,
    pub holder: String,
    pub token: String,
    pub fence: u64,
}

/// A live member (worker) as the store sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    /// The load it announced last.
    pub load: u64,
    /// How long its membership lasts unless it announces itself again.
    pub left: Duration,
}

/// How far gone a holder must be for [`Leases::take_over`] to take its
/// leases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gone {
    /// Its membership lapsed.
    Lapsed,
    /// Its membership has at most this long left: it stopped announcing
    /// itself, and the caller learnt elsewhere that it is gone (the bus no
    /// longer reaches it).
    Silent { left_at_most: Duration },
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("lease store unavailable: {0}")]
pub struct LeaseError(pub String);

#[async_trait]
pub trait Leases: Send + Sync + 'static {
    /// Grants the lease to `holder` when nobody holds `key`, with a fence
    /// above `floor` (and above every earlier grant the store remembers);
    /// `None` when somebody holds it.
    async fn acquire(
        &self,
        key: &str,
        holder: &str,
        ttl: Duration,
        floor: u64,
    ) -> Result<Option<Lease>, LeaseError>;

    /// Takes `key` over from `from`, a holder that is gone as `gone` says
    /// (it stopped announcing itself: it died, or lost the store and closed
    /// its sessions), without waiting for the lease to expire: granted as
    /// [`Leases::acquire`] grants, but only while `from` holds the key (or
    /// nobody does) and is still that far gone (it has not announced itself
    /// again); `None` otherwise.
    async fn take_over(
        &self,
        key: &str,
        holder: &str,
        from: (&str, Gone),
        ttl: Duration,
        floor: u64,
    ) -> Result<Option<Lease>, LeaseError>;

    /// Extends the lease; `false` when it expired or another holder has it now.
    async fn renew(&self, lease: &Lease, ttl: Duration) -> Result<bool, LeaseError>;

    /// Gives the lease up at once; `false` when it was no longer ours.
    async fn release(&self, lease: &Lease) -> Result<bool, LeaseError>;

    /// The current holder of each key (same order), `None` where none.
    async fn holders(&self, keys: &[String]) -> Result<Vec<Option<String>>, LeaseError>;

    /// Announces a live member (worker) with its load, valid for `ttl`.
    async fn announce(&self, member: &str, load: u64, ttl: Duration) -> Result<(), LeaseError>;

    /// Removes a member at once (graceful shutdown).
    async fn withdraw(&self, member: &str) -> Result<(), LeaseError>;

    /// Live members, sorted by name.
    async fn members(&self) -> Result<Vec<Member>, LeaseError>;

    /// Announces a live API pod, valid for `ttl`; kept apart from the
    /// workers' presence (API pods own no sessions).
    async fn announce_api_pod(&self, pod: &str, ttl: Duration) -> Result<(), LeaseError>;

    /// Live API pods, sorted by name.
    async fn api_pods(&self) -> Result<Vec<String>, LeaseError>;

    /// Whether the store is reachable now.
    async fn healthy(&self) -> bool;

    /// `"redis"` or `"in-process"`.
    fn kind(&self) -> &'static str;

    /// When this handle last found that the store had lost its data (for a
    /// lease time after that, claims wait while owners take their leases
    /// back); `None` when it never did. The in-process store never does.
    fn reset_seen(&self) -> Option<std::time::Instant> {
        None
    }
}

/// Lease key of a session.
pub fn session_key(client_id: &str) -> String {
    format!("session:{client_id}")
}
