//! What a session's send tasks are: the commands they carry out, and the
//! tasks still running with the requests waiting for each.
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use parley_contract::command::Command;
use parley_contract::queries::Query;
use parley_model::inbound::CallRef;
use parley_model::outgoing::{ChatAction, OutgoingMessage};
use parley_shared::bus::Incoming;
use tokio::task::{Id, JoinError, JoinSet};

use crate::send::Done;

/// A command carried out by a send task.
pub(super) enum Job {
    Send(OutgoingMessage),
    Chat(ChatAction),
    Query(Query),
    /// Reject a call that rings, then send `reply` to the caller unless it
    /// is empty.
    RejectCall {
        call: CallRef,
        reply: String,
    },
}

/// Where a command is carried out.
pub(super) enum Route {
    /// By a send task.
    Task(Job),
    /// By the session's loop.
    Inline(Command),
}

impl Route {
    pub fn of(command: Command) -> Route {
        match command {
            Command::Send(message) => Route::Task(Job::Send(message)),
            Command::Chat(action) => Route::Task(Job::Chat(action)),
            Command::Query(query) => Route::Task(Job::Query(query)),
            other => Route::Inline(other),
        }
    }
}

/// Most sends one session runs at once; more commands wait on the bus.
const MAX_IN_FLIGHT: usize = 128;

/// Whether to remember a send's outcome, and the requests waiting for it.
pub(super) type Waiting = (bool, Vec<Incoming>);

/// The sends of one session that have not finished.
#[derive(Default)]
pub(super) struct InFlight {
    pub(super) tasks: JoinSet<Done>,
    /// Task -> its request key.
    pub(super) keys: HashMap<Id, String>,
    /// Request key -> whether to remember the outcome, and who waits for it.
    /// (A mutex only to make the actor `Sync`: replies are `Send`, not `Sync`;
    /// it is reached through `&mut` alone, so never locked.)
    callers: Mutex<HashMap<String, Waiting>>,
    /// Numbers keys of requests without a request id.
    pub(super) anonymous: u64,
}

impl InFlight {
    /// Adds `incoming` to the callers of the send of `key`, if one runs;
    /// otherwise hands it back.
    pub fn join(&mut self, key: &str, incoming: Incoming) -> Result<(), Incoming> {
        match self.callers().get_mut(key) {
            Some((_, callers)) => {
                callers.push(incoming);
                Ok(())
            }
            None => Err(incoming),
        }
    }

    pub(super) fn callers(&mut self) -> &mut HashMap<String, Waiting> {
        self.callers
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether another send may start.
    pub fn has_room(&self) -> bool {
        self.tasks.len() < MAX_IN_FLIGHT
    }

    /// The next finished send; pending while none runs.
    pub async fn next(&mut self) -> Result<(Id, Done), JoinError> {
        match self.tasks.join_next_with_id().await {
            Some(done) => done,
            None => std::future::pending().await,
        }
    }
}
