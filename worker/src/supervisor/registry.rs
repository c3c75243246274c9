//! The sessions one worker runs, by clientId; closed for good at shutdown.
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use parley_model::ids::ClientId;

use crate::session::SessionHandle;

/// Running sessions. Entries whose task ended are dropped when next seen.
#[derive(Default)]
pub struct Registry {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    next_epoch: u64,
    closed: bool,
    sessions: HashMap<ClientId, SessionHandle>,
}

impl Inner {
    fn prune(&mut self) {
        self.sessions.retain(|_, handle| !handle.is_finished());
    }
}

impl Registry {
    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A number no other run of a session in this registry has.
    pub fn next_epoch(&self) -> u64 {
        let mut inner = self.inner();
        inner.next_epoch += 1;
        inner.next_epoch
    }

    /// Adds a running session; gives it back when closed or when one runs already.
    pub fn insert(&self, handle: SessionHandle) -> Result<(), SessionHandle> {
        let mut inner = self.inner();
        inner.prune();
        if inner.closed || inner.sessions.contains_key(handle.client_id()) {
            return Err(handle);
        }
        inner.sessions.insert(handle.client_id().clone(), handle);
        Ok(())
    }

    /// Forgets the run `epoch` of `client_id` (called when its task ends).
    pub fn remove(&self, client_id: &ClientId, epoch: u64) {
        let mut inner = self.inner();
        if inner
            .sessions
            .get(client_id)
            .is_some_and(|h| h.epoch() == epoch)
        {
            inner.sessions.remove(client_id);
        }
    }

    /// Takes a running session out (to hand it over).
    pub fn take(&self, client_id: &ClientId) -> Option<SessionHandle> {
        let mut inner = self.inner();
        inner.prune();
        inner.sessions.remove(client_id)
    }

    /// Takes every session out and refuses new ones from now on.
    pub fn close(&self) -> Vec<SessionHandle> {
        let mut inner = self.inner();
        inner.closed = true;
        inner.sessions.drain().map(|(_, handle)| handle).collect()
    }

    /// Tells every running session it lost its lease (each closes at once
    /// and leaves); how many were told.
    pub fn signal_lease_lost(&self) -> usize {
        let mut inner = self.inner();
        inner.prune();
        for handle in inner.sessions.values() {
            handle.signal_lease_lost();
        }
        inner.sessions.len()
    }

    pub fn is_closed(&self) -> bool {
        self.inner().closed
    }

    /// The status of a running session.
    pub fn status(&self, client_id: &ClientId) -> Option<String> {
        let mut inner = self.inner();
        inner.prune();
        inner.sessions.get(client_id).map(SessionHandle::status)
    }

    /// How many sessions run.
    pub fn len(&self) -> usize {
        let mut inner = self.inner();
        inner.prune();
        inner.sessions.len()
    }

    /// Every running session and its status, by clientId.
    pub fn snapshot(&self) -> Vec<(ClientId, String)> {
        let mut inner = self.inner();
        inner.prune();
        let mut all: Vec<_> = inner
            .sessions
            .iter()
            .map(|(id, handle)| (id.clone(), handle.status()))
            .collect();
        all.sort();
        all
    }
}
