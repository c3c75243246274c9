//! Remembers recent command outcomes by request id, so a retried command is
//! answered from memory instead of acting twice.
use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use parley_contract::command::{Outcome, REQUEST_ID};
use parley_shared::bus::Incoming;
use tokio::time::Instant;

/// Outcomes of the last commands a worker answered, bounded in size and age.
#[derive(Debug)]
pub struct RequestCache {
    capacity: usize,
    ttl: Duration,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    outcomes: HashMap<String, (Instant, Outcome)>,
    /// Keys oldest first, for eviction.
    order: VecDeque<String>,
}

/// The cache key of a request: its subject and request id (none without an id).
pub fn request_key(incoming: &Incoming) -> Option<String> {
    incoming
        .headers
        .get(REQUEST_ID)
        .filter(|id| !id.is_empty())
        .map(|id| format!("{} {id}", incoming.subject))
}

impl RequestCache {
    pub fn new(capacity: usize, ttl: Duration) -> Self {
        Self {
            capacity,
            ttl,
            inner: Mutex::default(),
        }
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The remembered outcome of `key`, if still fresh.
    pub fn get(&self, key: &str) -> Option<Outcome> {
        let mut inner = self.inner();
        inner.evict(self.capacity, self.ttl);
        inner.outcomes.get(key).map(|(_, outcome)| outcome.clone())
    }

    /// Remembers the outcome of `key`.
    pub fn put(&self, key: String, outcome: Outcome) {
        let mut inner = self.inner();
        if inner
            .outcomes
            .insert(key.clone(), (Instant::now(), outcome))
            .is_none()
        {
            inner.order.push_back(key);
        }
        inner.evict(self.capacity, self.ttl);
    }
}

impl Inner {
    /// Drops the oldest entries beyond `capacity` and those older than `ttl`.
    fn evict(&mut self, capacity: usize, ttl: Duration) {
        while let Some(oldest) = self.order.front() {
            let expired = self
                .outcomes
                .get(oldest)
                .is_none_or(|(at, _)| at.elapsed() >= ttl);
            if !expired && self.order.len() <= capacity {
                break;
            }
            if let Some(key) = self.order.pop_front() {
                self.outcomes.remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use parley_contract::command::Reply;
    use parley_contract::error::ApiError;

    use super::*;

    #[test]
    fn remembers_outcomes_up_to_capacity() {
        let cache = RequestCache::new(2, Duration::from_secs(60));
        cache.put("a".into(), Ok(Reply::Done));
        cache.put("b".into(), Err(ApiError::conflict("already paired")));
        assert_eq!(cache.get("a"), Some(Ok(Reply::Done)));
        cache.put("c".into(), Ok(Reply::Done));
        assert_eq!(cache.get("a"), None, "oldest evicted");
        assert_eq!(
            cache.get("b"),
            Some(Err(ApiError::conflict("already paired")))
        );
        assert!(cache.get("c").is_some());
    }

    #[tokio::test]
    async fn forgets_outcomes_after_their_time() {
        let cache = RequestCache::new(10, Duration::from_millis(30));
        cache.put("a".into(), Ok(Reply::Done));
        assert!(cache.get("a").is_some());
        tokio::time::sleep(Duration::from_millis(40)).await;
        assert_eq!(cache.get("a"), None);
    }
}
