//! Which sessions may have faults armed, so sends of the others skip the
//! fault query. Faults are armed through the session's owner (the
//! `/sandbox/faults` route reaches the worker that owns the session), so this
//! process hears of every fault armed while it owns a session; a connection
//! made here suspects its session until the database shows nothing armed (a
//! fault armed under an earlier owner is found that way).
//!
//! Each suspicion has a stamp: clearing names the stamp it read before asking
//! the database, so a fault armed during the question is never forgotten.
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

#[derive(Default)]
pub(super) struct Suspects {
    inner: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// clientId -> stamp of its latest suspicion.
    suspected: HashMap<String, u64>,
    next: u64,
}

impl Suspects {
    fn state(&self) -> MutexGuard<'_, State> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `client_id` may have faults armed from now on.
    pub fn suspect(&self, client_id: &str) {
        let mut state = self.state();
        state.next += 1;
        let stamp = state.next;
        state.suspected.insert(client_id.to_string(), stamp);
    }

    /// The stamp of `client_id`'s suspicion, when it is suspected.
    pub fn stamp(&self, client_id: &str) -> Option<u64> {
        self.state().suspected.get(client_id).copied()
    }

    /// Clears the suspicion of `client_id` if it is still the one stamped `stamp`.
    pub fn clear(&self, client_id: &str, stamp: u64) {
        let mut state = self.state();
        if state.suspected.get(client_id) == Some(&stamp) {
            state.suspected.remove(client_id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suspicion_raised_while_asking_survives_the_clear() {
        let s = Suspects::default();
        assert_eq!(s.stamp("c1"), None);
        s.suspect("c1");
        let asked = s.stamp("c1").expect("suspected");
        s.suspect("c1");
        s.clear("c1", asked);
        assert!(s.stamp("c1").is_some(), "armed during the question");
        let again = s.stamp("c1").expect("suspected");
        s.clear("c1", again);
        assert_eq!(s.stamp("c1"), None);
    }
}
