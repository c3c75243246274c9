//! The server's answers to this connection's message stanzas. The library
//! sends a message and returns before the server answers; the answer (an
//! ack, or an ack with an error code: a nack) comes later as a `ServerAck`
//! event. A send waits here for its answer, so that a message the network
//! refused is an error for the customer, not a `200` for a message nobody
//! receives.
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::oneshot;

use parley_network::NetworkError;

/// How long a send waits for the server's answer.
pub const ANSWER_WAIT: Duration = Duration::from_secs(20);

/// Answers no send waited for yet, kept for the send that has not started
/// waiting (the answer may come while the library is still returning).
const EARLY_KEPT: usize = 512;

/// Pending and early answers of one connection.
#[derive(Clone, Default)]
pub(super) struct ServerAcks(Arc<Mutex<State>>);

#[derive(Default)]
struct State {
    waiting: HashMap<String, oneshot::Sender<Option<String>>>,
    early: VecDeque<(String, Option<String>)>,
}

impl ServerAcks {
    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The server answered message `id` (`error`: the nack's code).
    pub fn arrived(&self, id: &str, error: Option<String>) {
        let mut state = self.state();
        if let Some(waiter) = state.waiting.remove(id) {
            let _ = waiter.send(error);
            return;
        }
        if state.early.len() == EARLY_KEPT {
            state.early.pop_front();
        }
        state.early.push_back((id.to_string(), error));
    }

    /// The connection ended: no answer will come to the sends waiting.
    pub fn ended(&self) {
        let mut state = self.state();
        state.waiting.clear();
        state.early.clear();
    }

    /// Waits up to `wait` for the server's answer to message `id`, sent to a
    /// group when `to_group` (a refusal there names its cause).
    pub async fn confirmed(
        &self,
        id: &str,
        to_group: bool,
        wait: Duration,
    ) -> Result<(), NetworkError> {
        let error = self.answer(id, wait).await?;
        verdict(error, to_group)
    }

    /// Waits up to `wait` for the server's answer to message `id`: `None`
    /// for an ack, the error code of a nack.
    pub async fn answer(&self, id: &str, wait: Duration) -> Result<Option<String>, NetworkError> {
        let answer = {
            let mut state = self.state();
            if let Some(at) = state.early.iter().position(|(early, _)| early == id) {
                return Ok(state.early.remove(at).and_then(|(_, error)| error));
            }
            let (tx, rx) = oneshot::channel();
            state.waiting.insert(id.to_string(), tx);
            rx
        };
        match tokio::time::timeout(wait, answer).await {
            Ok(Ok(error)) => Ok(error),
            Ok(Err(_)) => Err(NetworkError::Unreachable(
                "the connection ended before the network confirmed the message".into(),
            )),
            Err(_) => {
                self.state().waiting.remove(id);
                Err(NetworkError::Unreachable(format!(
                    "the network did not confirm the message within {} s",
                    wait.as_secs()
                )))
            }
        }
    }
}

pub(super) fn verdict(error: Option<String>, to_group: bool) -> Result<(), NetworkError> {
    match error {
        None => Ok(()),
        Some(code) => Err(NetworkError::Rejected(refusal(&code, to_group))),
    }
}

/// What the network's error code on a message means, for the customer. In
/// a group, 403 is a sender who is not (or no longer) a member, 401 one who
/// is not an admin of a group in announcement mode.
fn refusal(code: &str, to_group: bool) -> String {
    let why = match code {
        "403" if to_group => parley_network::NOT_A_MEMBER,
        "401" if to_group => parley_network::ADMINS_ONLY,
        "463" => return parley_network::NO_PRIVACY_TOKEN.to_string(),
        "479" => "the message's format was refused",
        "403" | "401" => "this account may not send to that chat",
        "404" => "the recipient was not found",
        "406" | "400" => "the message was malformed",
        "503" | "500" => "the network could not take it now",
        _ => return format!("the network refused the message (error {code})"),
    };
    format!("the network refused the message (error {code}: {why})")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHORT: Duration = Duration::from_millis(50);

    #[tokio::test]
    async fn an_ack_confirms_and_a_nack_names_its_code() {
        let acks = ServerAcks::default();
        let waiting = {
            let acks = acks.clone();
            tokio::spawn(async move { acks.confirmed("m1", false, ANSWER_WAIT).await })
        };
        // The waiter registers before the answer comes, or the answer is kept.
        tokio::task::yield_now().await;
        acks.arrived("m1", None);
        assert!(waiting.await.unwrap().is_ok());

        acks.arrived("m2", Some("463".into()));
        match acks.confirmed("m2", false, SHORT).await {
            Err(NetworkError::Rejected(why)) => {
                assert!(why.contains("error 463"), "{why}");
                assert!(why.contains("privacy token"), "{why}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn an_answer_before_the_wait_is_kept_for_it_and_used_once() {
        let acks = ServerAcks::default();
        acks.arrived("early", None);
        assert!(acks.confirmed("early", false, SHORT).await.is_ok());
        assert!(
            matches!(
                acks.confirmed("early", false, SHORT).await,
                Err(NetworkError::Unreachable(_))
            ),
            "an answer confirms one send"
        );
    }

    #[tokio::test]
    async fn no_answer_or_an_ended_connection_is_unreachable() {
        let acks = ServerAcks::default();
        match acks.confirmed("silent", false, SHORT).await {
            Err(NetworkError::Unreachable(why)) => {
                assert!(why.contains("did not confirm"), "{why}")
            }
            other => panic!("{other:?}"),
        }
        assert!(
            acks.state().waiting.is_empty(),
            "a timed-out wait is forgotten"
        );
        let waiting = {
            let acks = acks.clone();
            tokio::spawn(async move { acks.confirmed("cut", false, ANSWER_WAIT).await })
        };
        while acks.state().waiting.is_empty() {
            tokio::task::yield_now().await;
        }
        acks.ended();
        match waiting.await.unwrap() {
            Err(NetworkError::Unreachable(why)) => assert!(why.contains("ended"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn early_answers_are_bounded() {
        let acks = ServerAcks::default();
        for i in 0..(EARLY_KEPT + 10) {
            acks.arrived(&format!("m{i}"), None);
        }
        let state = acks.state();
        assert_eq!(state.early.len(), EARLY_KEPT);
        assert_eq!(state.early.front().map(|e| e.0.as_str()), Some("m10"));
    }
}
