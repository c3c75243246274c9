//! The privacy tokens a session read lately, in memory: whatsapp-rust reads
//! a contact's token at every send to them (to attach it), and that read
//! was a statement of its own each time. Shared by the session's stores of
//! this process (`OpenStores`), so that every write of a token, whichever
//! store makes it, drops the contact's entry once it committed; valid under
//! one fence only, as another owner may have written tokens meanwhile.
//!
//! A read that misses notes the cache's generation before it queries the
//! database and keeps its answer only if no write dropped anything since: an
//! answer read before a write committed is never kept after it.
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use whatsapp_rust::wacore::store::traits::TcTokenEntry;

/// Contacts kept at most per session (then it starts again, empty).
const MOST: usize = 1_024;

/// One session's cached tokens (clones share them).
#[derive(Clone, Debug, Default)]
pub(crate) struct TcCache(Arc<Mutex<Cached>>);

#[derive(Debug, Default)]
struct Cached {
    /// The fence the entries were read under.
    fence: i64,
    /// Moves at every drop: a read that began before it keeps nothing.
    generation: u64,
    /// By contact: its token, or that it has none.
    entries: HashMap<String, Option<TcTokenEntry>>,
}

impl TcCache {
    fn cached(&self) -> MutexGuard<'_, Cached> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps the entries only if they were read under `fence`.
    pub(crate) fn under(&self, fence: i64) {
        let mut cached = self.cached();
        if cached.fence != fence {
            cached.fence = fence;
            cached.generation += 1;
            cached.entries.clear();
        }
    }

    /// `jid`'s entry read under `fence`, if kept.
    pub(super) fn get(&self, fence: i64, jid: &str) -> Option<Option<TcTokenEntry>> {
        let cached = self.cached();
        (cached.fence == fence)
            .then(|| cached.entries.get(jid).cloned())
            .flatten()
    }

    /// Where a read that misses begins (see [`TcCache::keep`]).
    pub(super) fn generation(&self) -> u64 {
        self.cached().generation
    }

    /// Keeps what a read under `fence` that began at `generation` found.
    pub(super) fn keep(&self, fence: i64, generation: u64, jid: &str, entry: Option<TcTokenEntry>) {
        let mut cached = self.cached();
        if cached.generation != generation || cached.fence != fence {
            return;
        }
        if cached.entries.len() >= MOST {
            cached.entries.clear();
        }
        cached.entries.insert(jid.to_string(), entry);
    }

    /// Drops `jid`'s entry (all of them: `None`) after a write.
    pub(super) fn drop_entry(&self, jid: Option<&str>) {
        let mut cached = self.cached();
        cached.generation += 1;
        match jid {
            Some(jid) => {
                cached.entries.remove(jid);
            }
            None => cached.entries.clear(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(byte: u8) -> Option<TcTokenEntry> {
        Some(TcTokenEntry {
            token: vec![byte],
            token_timestamp: i64::from(byte),
            sender_timestamp: None,
        })
    }

    #[test]
    fn a_read_that_began_before_a_write_keeps_nothing() {
        let cache = TcCache::default();
        cache.under(3);
        let began = cache.generation();
        cache.drop_entry(Some("a"));
        cache.keep(3, began, "a", token(1));
        assert!(cache.get(3, "a").is_none());

        let began = cache.generation();
        cache.keep(3, began, "a", token(2));
        assert_eq!(cache.get(3, "a").flatten().map(|e| e.token), Some(vec![2]));
        cache.drop_entry(Some("a"));
        assert!(cache.get(3, "a").is_none());
    }

    #[test]
    fn entries_hold_under_their_fence_only() {
        let cache = TcCache::default();
        cache.under(3);
        let began = cache.generation();
        cache.keep(3, began, "a", None);
        assert_eq!(cache.get(3, "a").map(|e| e.is_none()), Some(true));
        assert!(cache.get(4, "a").is_none(), "another owner's store");
        cache.under(4);
        assert!(cache.get(4, "a").is_none(), "read under the older fence");
        assert!(cache.get(3, "a").is_none());
    }
}
