//! Asks the customer's `pollLookupUrl` for a poll's options: `POST {clientId,
//! chatRoomId, pollMessageId}` with the headers of every call to the customer
//! (the webhook token as bearer, `User-Agent: Parley-Messaging/1`, and
//! `X-SN-Event: vote_update`, the event being resolved), 8 s budget, through
//! the egress guard; the answer is `{options: [string]}`.
use std::time::Duration;

use parley_model::ids::ClientId;
use parley_shared::egress::{Egress, EgressError};
use serde::Deserialize;

/// The receiver answers within this.
pub const LOOKUP_BUDGET: Duration = Duration::from_secs(8);

pub struct PollLookup {
    client: reqwest::Client,
}

#[derive(Deserialize)]
struct Answer {
    options: Vec<String>,
}

impl PollLookup {
    pub fn new(egress: Egress, budget: Duration) -> Result<PollLookup, EgressError> {
        Ok(PollLookup {
            client: egress.client(budget, 0)?,
        })
    }

    /// The poll's options, or `None` when the lookup is unset, fails or answers nonsense.
    pub async fn options(
        &self,
        url: &str,
        token: &str,
        client_id: &ClientId,
        chat_room_id: &str,
        poll_message_id: &str,
    ) -> Option<Vec<String>> {
        if url.is_empty() {
            return None;
        }
        let body = serde_json::json!({
            "clientId": client_id,
            "chatRoomId": chat_room_id,
            "pollMessageId": poll_message_id,
        });
        let res = self
            .client
            .post(url)
            .bearer_auth(token)
            .header("user-agent", "Parley-Messaging/1")
            .header("x-sn-event", "vote_update")
            .json(&body)
            .send()
            .await;
        match res {
            Ok(res) if res.status().is_success() => match res.json::<Answer>().await {
                Ok(answer) => Some(answer.options),
                Err(e) => {
                    tracing::warn!(client_id = %client_id, error = %e, "poll lookup answered an unreadable body");
                    None
                }
            },
            Ok(res) => {
                tracing::warn!(
                    client_id = %client_id,
                    status = res.status().as_u16(),
                    "poll lookup refused"
                );
                None
            }
            Err(e) => {
                tracing::warn!(client_id = %client_id, error = %e, "poll lookup failed");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use parley_tests::receiver::{Behaviour, Receiver};

    use super::*;

    #[tokio::test]
    async fn asks_with_the_token_and_reads_the_options() {
        let mut rx = Receiver::start().await;
        rx.script([Behaviour::Json(200, r#"{"options":["Red","Blue"]}"#.into())]);
        let lookup = PollLookup::new(Egress::direct(true), Duration::from_secs(2)).unwrap();
        let c1 = ClientId::parse("c1").unwrap();
        let got = lookup.options(&rx.url, "tok", &c1, "c1-1-2", "P1").await;
        assert_eq!(got, Some(vec!["Red".to_string(), "Blue".to_string()]));
        let req = rx.next(Duration::from_secs(2)).await;
        assert_eq!(req.header("authorization"), Some("Bearer tok"));
        assert_eq!(req.header("user-agent"), Some("Parley-Messaging/1"));
        assert_eq!(req.header("x-sn-event"), Some("vote_update"));
        assert_eq!(
            req.json(),
            serde_json::json!({"clientId": "c1", "chatRoomId": "c1-1-2", "pollMessageId": "P1"})
        );
    }

    #[tokio::test]
    async fn failures_and_slow_answers_are_none() {
        let rx = Receiver::start().await;
        rx.script([Behaviour::Status(500), Behaviour::Hang]);
        let lookup = PollLookup::new(Egress::direct(true), Duration::from_millis(300)).unwrap();
        let c = ClientId::parse("c").unwrap();
        assert_eq!(lookup.options(&rx.url, "t", &c, "r", "p").await, None);
        assert_eq!(lookup.options(&rx.url, "t", &c, "r", "p").await, None);
        assert_eq!(lookup.options("", "t", &c, "r", "p").await, None);
        let guarded = PollLookup::new(Egress::direct(false), Duration::from_secs(1)).unwrap();
        assert_eq!(guarded.options(&rx.url, "t", &c, "r", "p").await, None);
    }
}
