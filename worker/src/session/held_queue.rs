//! The sends of a session waiting for its connection (see `held`), oldest
//! first, with everyone asking for each.
use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use parley_shared::bus::Incoming;
use tokio::time::Instant;

use super::in_flight::Job;

/// Most sends one session holds; past it, commands wait on the bus.
const MAX_HELD: usize = 1024;

/// One waiting send and everyone asking for it (repeats of its request id).
pub(super) struct Waiting {
    pub(super) key: Option<String>,
    pub(super) callers: Vec<Incoming>,
    pub(super) job: Job,
    pub(super) until: Instant,
}

/// The sends of one session waiting for its connection, oldest first. All
/// wait equally long, so the oldest is the first due.
/// (A mutex only to make the actor `Sync`: requests are `Send`, not `Sync`;
/// it is reached through `&mut` alone, so never locked.)
#[derive(Default)]
pub(super) struct Held {
    waiting: Mutex<VecDeque<Waiting>>,
}

impl Held {
    pub(super) fn waiting(&mut self) -> &mut VecDeque<Waiting> {
        self.waiting
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether another send may wait.
    pub fn has_room(&mut self) -> bool {
        self.waiting().len() < MAX_HELD
    }

    /// When the oldest waiting send is due, if any waits.
    pub fn next_due(&mut self) -> Option<Instant> {
        self.waiting().front().map(|w| w.until)
    }

    /// Adds `incoming` to the callers of the waiting send of `key`, if one
    /// waits; otherwise hands it back.
    pub fn join(&mut self, key: &str, incoming: Incoming) -> Result<(), Incoming> {
        match self
            .waiting()
            .iter_mut()
            .find(|w| w.key.as_deref() == Some(key))
        {
            Some(waiting) => {
                waiting.callers.push(incoming);
                Ok(())
            }
            None => Err(incoming),
        }
    }
}
