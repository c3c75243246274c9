//! A lease store whose renewals can be made to hang or be refused, and
//! whose announcements can be made to fail.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use parley_model::ids::ClientId;
use parley_shared::lease::memory::MemoryLeases;
use parley_shared::lease::{Gone, Lease, LeaseError, Leases, Member};

/// In-process leases whose renewals can be made to hang or be refused.
#[derive(Clone, Default)]
pub struct TestLeases {
    inner: MemoryLeases,
    hang_renew: Arc<AtomicBool>,
    refuse_renew: Arc<AtomicBool>,
    refuse_announce: Arc<AtomicBool>,
    reset_seen: Arc<std::sync::Mutex<Option<std::time::Instant>>>,
    /// Releases and withdrawals, in order (`release <key>`, `withdraw <member>`).
    goodbyes: Arc<std::sync::Mutex<Vec<String>>>,
}

impl TestLeases {
    pub fn hang_renewals(&self) {
        self.hang_renew.store(true, Ordering::SeqCst);
    }

    pub fn refuse_renewals(&self) {
        self.refuse_renew.store(true, Ordering::SeqCst);
    }

    /// Announcements fail (`true`) or go through again (`false`), as when
    /// the store cannot be reached.
    pub fn refuse_announcements(&self, refuse: bool) {
        self.refuse_announce.store(refuse, Ordering::SeqCst);
    }

    /// Says the store was found to have lost its data now (as a Redis
    /// handle says after a restart without persistence).
    pub fn seem_reset(&self) {
        *self.reset_seen.lock().unwrap() = Some(std::time::Instant::now());
    }

    /// Every lease released and member withdrawn so far, in order.
    pub fn goodbyes(&self) -> Vec<String> {
        self.goodbyes.lock().unwrap().clone()
    }

    pub async fn holder(&self, client_id: &ClientId) -> Option<String> {
        let key = parley_shared::lease::session_key(client_id.as_str());
        self.inner.holders(&[key]).await.ok()?.pop().flatten()
    }
}

#[async_trait]
impl Leases for TestLeases {
    async fn acquire(
        &self,
        key: &str,
        holder: &str,
        ttl: Duration,
        floor: u64,
    ) -> Result<Option<Lease>, LeaseError> {
        self.inner.acquire(key, holder, ttl, floor).await
    }
    async fn take_over(
        &self,
        key: &str,
        holder: &str,
        from: (&str, Gone),
        ttl: Duration,
        floor: u64,
    ) -> Result<Option<Lease>, LeaseError> {
        self.inner.take_over(key, holder, from, ttl, floor).await
    }
    async fn renew(&self, lease: &Lease, ttl: Duration) -> Result<bool, LeaseError> {
        if self.hang_renew.load(Ordering::SeqCst) {
            std::future::pending::<()>().await;
        }
        if self.refuse_renew.load(Ordering::SeqCst) {
            return Ok(false);
        }
        self.inner.renew(lease, ttl).await
    }
    async fn release(&self, lease: &Lease) -> Result<bool, LeaseError> {
        let released = self.inner.release(lease).await;
        let said = format!("release {}", lease.key);
        self.goodbyes.lock().unwrap().push(said);
        released
    }
    async fn holders(&self, keys: &[String]) -> Result<Vec<Option<String>>, LeaseError> {
        self.inner.holders(keys).await
    }
    async fn announce(&self, member: &str, load: u64, ttl: Duration) -> Result<(), LeaseError> {
        if self.refuse_announce.load(Ordering::SeqCst) {
            return Err(LeaseError("the lease store cannot be reached".into()));
        }
        self.inner.announce(member, load, ttl).await
    }
    async fn withdraw(&self, member: &str) -> Result<(), LeaseError> {
        self.goodbyes
            .lock()
            .unwrap()
            .push(format!("withdraw {member}"));
        self.inner.withdraw(member).await
    }
    async fn members(&self) -> Result<Vec<Member>, LeaseError> {
        self.inner.members().await
    }
    async fn announce_api_pod(&self, pod: &str, ttl: Duration) -> Result<(), LeaseError> {
        self.inner.announce_api_pod(pod, ttl).await
    }
    async fn api_pods(&self) -> Result<Vec<String>, LeaseError> {
        self.inner.api_pods().await
    }
    async fn healthy(&self) -> bool {
        true
    }
    fn kind(&self) -> &'static str {
        "in-process"
    }
    fn reset_seen(&self) -> Option<std::time::Instant> {
        *self.reset_seen.lock().unwrap()
    }
}
