//! The in-process lease store, for tests and single-process deployments.
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::{Gone, Lease, LeaseError, Leases, Member};

/// An in-process lease store; clones share it.
#[derive(Clone, Default)]
pub struct MemoryLeases {
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    leases: HashMap<String, Held>,
    /// Last fence granted per key; never removed, so fences only grow.
    fences: HashMap<String, u64>,
    members: HashMap<String, (u64, Instant)>,
    api_pods: HashMap<String, Instant>,
}

struct Held {
    lease: Lease,
    expires: Instant,
}

impl MemoryLeases {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    /// Grants `key` to `holder` (whoever held it before). Fences must also
    /// grow across process restarts (stored rows keep the last one): above
    /// the caller's floor, and never below the wall clock in microseconds.
    fn grant(&mut self, key: &str, holder: &str, ttl: Duration, floor: u64) -> Lease {
        let fence = self.fences.entry(key.to_owned()).or_default();
        *fence = (*fence + 1)
            .max(wall_clock_micros())
            .max(floor.saturating_add(1));
        let lease = Lease {
            key: key.to_owned(),
            holder: holder.to_owned(),
            token: format!("{:032x}", rand::random::<u128>()),
            fence: *fence,
        };
        let held = Held {
            lease: lease.clone(),
            expires: Instant::now() + ttl,
        };
        self.leases.insert(key.to_owned(), held);
        lease
    }

    /// The unexpired lease of `key`; forgets an expired one.
    fn live(&mut self, key: &str) -> Option<&mut Held> {
        if self
            .leases
            .get(key)
            .is_some_and(|held| held.expires <= Instant::now())
        {
            self.leases.remove(key);
        }
        self.leases.get_mut(key)
    }
}

fn wall_clock_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

#[async_trait]
impl Leases for MemoryLeases {
    async fn acquire(
        &self,
        key: &str,
        holder: &str,
        ttl: Duration,
        floor: u64,
    ) -> Result<Option<Lease>, LeaseError> {
        let mut state = self.state();
        if state.live(key).is_some() {
            return Ok(None);
        }
        Ok(Some(state.grant(key, holder, ttl, floor)))
    }

    async fn take_over(
        &self,
        key: &str,
        holder: &str,
        (from, gone): (&str, Gone),
        ttl: Duration,
        floor: u64,
    ) -> Result<Option<Lease>, LeaseError> {
        let mut state = self.state();
        let now = Instant::now();
        let left = state
            .members
            .get(from)
            .map(|(_, expires)| expires.saturating_duration_since(now))
            .filter(|left| !left.is_zero());
        let still_there = match (left, gone) {
            (None, _) => false,
            (Some(_), Gone::Lapsed) => true,
            (Some(left), Gone::Silent { left_at_most }) => left > left_at_most,
        };
        if still_there
            || state
                .live(key)
                .is_some_and(|held| held.lease.holder != from)
        {
            return Ok(None);
        }
        Ok(Some(state.grant(key, holder, ttl, floor)))
    }

    async fn renew(&self, lease: &Lease, ttl: Duration) -> Result<bool, LeaseError> {
        let mut state = self.state();
        Ok(match state.live(&lease.key) {
            Some(held) if held.lease == *lease => {
                held.expires = Instant::now() + ttl;
                true
            }
            _ => false,
        })
    }

    async fn release(&self, lease: &Lease) -> Result<bool, LeaseError> {
        let mut state = self.state();
        let ours = state
            .live(&lease.key)
            .is_some_and(|held| held.lease == *lease);
        if ours {
            state.leases.remove(&lease.key);
        }
        Ok(ours)
    }

    async fn holders(&self, keys: &[String]) -> Result<Vec<Option<String>>, LeaseError> {
        let mut state = self.state();
        Ok(keys
            .iter()
            .map(|key| state.live(key).map(|held| held.lease.holder.clone()))
            .collect())
    }

    async fn announce(&self, member: &str, load: u64, ttl: Duration) -> Result<(), LeaseError> {
        self.state()
            .members
            .insert(member.to_owned(), (load, Instant::now() + ttl));
        Ok(())
    }

    async fn withdraw(&self, member: &str) -> Result<(), LeaseError> {
        self.state().members.remove(member);
        Ok(())
    }

    async fn members(&self) -> Result<Vec<Member>, LeaseError> {
        let mut state = self.state();
        let now = Instant::now();
        state.members.retain(|_, (_, expires)| *expires > now);
        let mut members: Vec<Member> = state
            .members
            .iter()
            .map(|(name, (load, expires))| Member {
                name: name.clone(),
                load: *load,
                left: expires.saturating_duration_since(now),
            })
            .collect();
        members.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(members)
    }

    async fn announce_api_pod(&self, pod: &str, ttl: Duration) -> Result<(), LeaseError> {
        self.state()
            .api_pods
            .insert(pod.to_owned(), Instant::now() + ttl);
        Ok(())
    }

    async fn api_pods(&self) -> Result<Vec<String>, LeaseError> {
        let mut state = self.state();
        let now = Instant::now();
        state.api_pods.retain(|_, expires| *expires > now);
        let mut pods: Vec<String> = state.api_pods.keys().cloned().collect();
        pods.sort();
        Ok(pods)
    }

    async fn healthy(&self) -> bool {
        true
    }

    fn kind(&self) -> &'static str {
        "in-process"
    }
}
