//! Handing a session over to a chosen worker. The worker that sheds a session
//! to spread load asks the least loaded other worker to take it up at once,
//! and for `orphan_grace` passes on the start requests for it that the queue
//! brings back to it: otherwise it would often take back what it just shed
//! (the API's claim after a handover goes to any worker), shed it again, and
//! so on, each round another gap in the session's service.
use std::collections::HashMap;
use std::sync::MutexGuard;
use std::time::Duration;

use parley_contract::command::{Command, Outcome};
use parley_model::ids::ClientId;
use parley_shared::bus::commands;
use parley_shared::bus::worker_start_subject;
use tokio::time::Instant;

use super::Supervisor;

/// How long a pass-on waits for the chosen worker before claiming here.
const ASK_TIMEOUT: Duration = Duration::from_secs(3);

/// Sessions this worker handed over: to whom, and when.
#[derive(Debug, Default)]
pub struct PassedOn(HashMap<String, (String, Instant)>);

impl PassedOn {
    /// Remembers that `id` went to `to` at `now`, forgetting what is older than `memory`.
    pub fn record(&mut self, id: &str, to: &str, memory: Duration, now: Instant) {
        self.0
            .retain(|_, (_, at)| now.saturating_duration_since(*at) < memory);
        self.0.insert(id.to_owned(), (to.to_owned(), now));
    }

    /// The worker `id` went to, if that was less than `memory` before `now`.
    pub fn to(&self, id: &str, memory: Duration, now: Instant) -> Option<String> {
        self.0
            .get(id)
            .filter(|(_, at)| now.saturating_duration_since(*at) < memory)
            .map(|(to, _)| to.clone())
    }
}

impl Supervisor {
    fn passed_on(&self) -> MutexGuard<'_, PassedOn> {
        self.inner
            .passed_on
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Stops `id` here and asks `to` to take it up (only if it still should
    /// run). Returns whether this worker ran it. When `to` does not take it,
    /// sweeps will.
    pub(super) async fn hand_over_to(&self, id: &ClientId, to: &str) -> bool {
        // Remembered first: a start that arrives while the session stops is passed on too.
        let memory = self.deps().timing.orphan_grace;
        self.passed_on()
            .record(id.as_str(), to, memory, Instant::now());
        if !self.hand_over(id).await {
            return false;
        }
        let take_over = Command::TakeOver {
            client_id: id.to_string(),
        };
        let request_id = uuid::Uuid::new_v4().to_string();
        match self.ask(to, &take_over, &request_id).await {
            Some(Ok(_)) => tracing::info!(client_id = %id, to, "handed a session over"),
            Some(Err(e)) => {
                tracing::info!(client_id = %id, to, error = %e.message, "the chosen worker did not take the session; sweeps will");
            }
            None => {
                tracing::info!(client_id = %id, to, "the chosen worker did not answer; sweeps will take the session")
            }
        }
        true
    }

    /// A start from the queue for a session this worker handed over less than
    /// `orphan_grace` ago is answered by the worker it went to. `None`: claim
    /// it here (that worker is gone, or did not take it).
    pub(super) async fn pass_on(
        &self,
        id: &ClientId,
        request_id: Option<String>,
    ) -> Option<Outcome> {
        let memory = self.deps().timing.orphan_grace;
        let to = self.passed_on().to(id.as_str(), memory, Instant::now())?;
        let request_id = request_id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let start = Command::Start {
            client_id: id.to_string(),
        };
        match self.ask(&to, &start, &request_id).await {
            Some(Ok(reply)) => Some(Ok(reply)),
            _ => {
                tracing::info!(client_id = %id, to, "the worker a session was handed to did not take it; claiming it here");
                None
            }
        }
    }

    /// Sends `command` to worker `to` alone; `None` when it did not answer.
    async fn ask(&self, to: &str, command: &Command, request_id: &str) -> Option<Outcome> {
        let subject = worker_start_subject(to);
        let bus = self.deps().bus.as_ref();
        commands::call(bus, &subject, command, request_id, ASK_TIMEOUT)
            .await
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_where_a_session_went_for_a_while() {
        let memory = Duration::from_secs(10);
        let start = Instant::now();
        let at = |secs| start + Duration::from_secs(secs);
        let mut passed = PassedOn::default();
        passed.record("s1", "b", memory, at(0));
        assert_eq!(passed.to("s1", memory, at(9)).as_deref(), Some("b"));
        assert_eq!(passed.to("s2", memory, at(9)), None);
        passed.record("s2", "c", memory, at(6));
        assert_eq!(
            passed.to("s1", memory, at(11)),
            None,
            "older than the memory"
        );
        assert_eq!(passed.to("s2", memory, at(11)).as_deref(), Some("c"));
        passed.record("s3", "b", memory, at(12));
        assert_eq!(
            passed.0.len(),
            2,
            "the expired entry is dropped on the next record"
        );
    }
}
