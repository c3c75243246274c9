//! Sends that wait for the connection. A paired session is briefly offline
//! after a reconnect or when it starts on a new owner (handover, rebalance):
//! commands already on its subject then arrive before the network says it is
//! online. Such a send waits, up to `Timing::connect_hold`, instead of failing
//! at once; still offline by then, it is refused as before (502, nothing sent).
//! When the session ends, the sends still waiting are answered "moved", so
//! their callers ask the next owner with the same request id.

use parley_shared::bus::Incoming;
use tokio::time::Instant;

use super::actor::{Actor, answer_moved};
use super::held_queue::Waiting;
use super::in_flight::Job;
use super::respond;

impl Actor {
    /// Whether a send must wait: the session is paired but not online now.
    pub(super) fn must_wait(&self) -> bool {
        self.paired && self.online_link().is_none()
    }

    /// Holds `job` for `incoming` until the session is online or the hold ends.
    pub(super) fn hold(&mut self, key: Option<String>, incoming: Incoming, job: Job) {
        tracing::debug!(client_id = %self.id, "send waits for the connection");
        let until = Instant::now() + self.deps.timing.connect_hold;
        self.held.waiting().push_back(Waiting {
            key,
            callers: vec![incoming],
            job,
            until,
        });
    }

    /// When the oldest waiting send's hold ends, while the session is offline.
    pub(super) fn hold_ends(&mut self) -> Option<Instant> {
        self.held.next_due().filter(|_| self.must_wait())
    }

    /// Starts the waiting sends once the session is online (as the sends in
    /// flight leave room) or unpaired (they are refused), and refuses those
    /// whose hold ended offline.
    pub(super) async fn release_held(&mut self) {
        let now = Instant::now();
        // Launching a send does not change whether the session is online.
        let offline = self.must_wait();
        while let Some(due) = self.held.next_due() {
            if (offline && due > now) || (!offline && !self.in_flight.has_room()) {
                break;
            }
            let Some(waiting) = self.held.waiting().pop_front() else {
                break;
            };
            let mut callers = waiting.callers.into_iter();
            let Some(first) = callers.next() else {
                continue;
            };
            self.launch(waiting.key.clone(), first, waiting.job).await;
            if let Some(key) = waiting.key {
                for repeat in callers {
                    self.follow(&key, repeat).await;
                }
            }
        }
    }

    /// Answers every waiting send "moved"; the session is ending.
    pub(super) async fn refuse_held(&mut self) {
        let waiting: Vec<Waiting> = self.held.waiting().drain(..).collect();
        for waiting in waiting {
            for incoming in waiting.callers {
                answer_moved(incoming).await;
            }
        }
    }

    /// A repeat of the request `key`, whose send was just launched: it waits
    /// for the same outcome, or gets it from memory when already decided.
    async fn follow(&mut self, key: &str, repeat: Incoming) {
        if let Err(repeat) = self.in_flight.join(key, repeat) {
            let outcome = self.deps.requests.get(key).unwrap_or_else(|| {
                Err(parley_contract::error::ApiError::unavailable(
                    "the send's outcome is no longer known; retry",
                ))
            });
            respond(repeat, &outcome).await;
        }
    }
}
