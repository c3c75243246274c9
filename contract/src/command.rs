//! Command and Reply: what the API asks the worker that owns a session to do,
//! as JSON on the bus, with a request id (idempotency) and trace context in headers.
use std::time::Duration;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::bus::{Bus, BusError, Headers, Message};
use crate::error::ApiError;
use crate::queries::{Answer, Query};
use parley_model::address::PhoneNumber;
use parley_model::outgoing::{ChatAction, OutgoingMessage};

/// Header carrying a unique id per logical request (retries reuse it).
pub const REQUEST_ID: &str = "parley-request-id";
/// Reply header: the session is changing owner and did not act; ask again.
pub const MOVED: &str = "parley-moved";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "kebab-case")]
pub enum Command {
    /// Make sure the session runs. On the start queue group: claim it when unowned.
    Start { client_id: String },
    /// On one worker's own start subject: take up a session another worker
    /// just handed over to spread load, if it still should run (unlike
    /// `start`, never a session logged out or deleted meanwhile).
    TakeOver { client_id: String },
    /// The current status and QR code.
    Qr,
    /// The session's status and owner (`/check-state`), nothing more.
    State,
    /// Pair by phone code instead of QR.
    PairPhone { phone: PhoneNumber },
    /// Settings changed in the database: apply them now.
    Reload,
    /// Events after `after` were made pending again in the log
    /// (`/events/redeliver`): deliver them.
    DeliverPending { after: u64 },
    /// Log out on the network side and delete the session.
    Disconnect,
    /// A test control of the network adapter (the sandbox's: link, unlink,
    /// a contact's message...), which the adapter reads: opaque to the bus
    /// and the worker (`parley_network::NetworkControl`).
    Control { request: serde_json::Value },
    /// Put a message on the network (idempotent per request id).
    Send(OutgoingMessage),
    /// Typing, deletes and receipts.
    Chat(ChatAction),
    /// Contact lookups, profile pictures and groups.
    Query(Query),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "kebab-case")]
pub enum Reply {
    /// The session's status (`initializing`, `qr`, `connected`) and owner.
    Status {
        status: String,
        pod_name: String,
    },
    Qr {
        status: String,
        qr: String,
    },
    PairCode {
        code: String,
    },
    Disconnected {
        warning: Option<String>,
    },
    /// The session is linked as this identity.
    Linked {
        jid: String,
        lid: String,
    },
    /// A message went out.
    Sent(SendResult),
    /// The network carried a message with this id.
    MessageId {
        message_id: String,
    },
    /// The answer of a contact or group query.
    Answer(Answer),
    /// A sandbox group was created.
    SandboxGroup {
        jid: String,
        subject: String,
    },
    Done,
}

/// What the owner answered: a reply or an error for the HTTP caller.
pub type Outcome = Result<Reply, ApiError>;

/// Why a command did not get an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// No worker owns the session (or none runs, for `start`).
    #[error("no owner")]
    NoOwner,
    #[error("the session owner did not answer in time")]
    Timeout,
    #[error("bus: {0}")]
    Bus(String),
}

impl From<CallError> for ApiError {
    fn from(e: CallError) -> Self {
        match e {
            CallError::NoOwner => ApiError::not_found("unknown or unpaired clientId"),
            CallError::Timeout => ApiError::gateway_timeout("the session did not answer in time"),
            CallError::Bus(e) => {
                // The bus's own words go to the log, never to the caller.
                tracing::error!(error = %e, "bus");
                ApiError::unavailable("bus unavailable")
            }
        }
    }
}

/// Sends `command` to `subject` and decodes the owner's outcome.
#[tracing::instrument(name = "bus.request", skip_all, fields(subject = %subject))]
pub async fn call(
    bus: &dyn Bus,
    subject: &str,
    command: &Command,
    request_id: &str,
    timeout: Duration,
) -> Result<Outcome, CallError> {
    let mut headers = Headers::new();
    headers.insert(REQUEST_ID.into(), request_id.into());
    crate::telemetry::inject_context(&mut headers);
    let payload = serde_json::to_vec(command).map_err(|e| CallError::Bus(e.to_string()))?;
    let started = std::time::Instant::now();
    let request = Message {
        headers,
        payload: Bytes::from(payload),
    };
    let sent = bus.request(subject, request, timeout).await;
    let m = crate::metrics::metrics();
    let outcome = match &sent {
        Ok(_) => "ok",
        Err(BusError::NoResponders(_)) => {
            m.bus_no_responders.inc();
            "no_responders"
        }
        Err(BusError::Timeout(_)) => {
            m.bus_timeouts.inc();
            "timeout"
        }
        Err(BusError::Unavailable(_)) => "unavailable",
    };
    let kind = match subject.split_once('.') {
        Some(("session", _)) => "session",
        Some(("start", _)) => "start",
        _ => subject,
    };
    m.bus_duration
        .with_label_values(&[kind, outcome])
        .observe(started.elapsed().as_secs_f64());
    let reply = sent.map_err(|e| match e {
        BusError::NoResponders(_) => CallError::NoOwner,
        BusError::Timeout(_) => CallError::Timeout,
        BusError::Unavailable(e) => CallError::Bus(e),
    })?;
    if reply.headers.contains_key(MOVED) {
        return Err(CallError::NoOwner);
    }
    serde_json::from_slice::<Outcome>(&reply.payload)
        .map_err(|e| CallError::Bus(format!("undecodable reply: {e}")))
}

/// Encodes an outcome as a reply message.
pub fn encode(outcome: &Outcome) -> Message {
    let payload = serde_json::to_vec(outcome)
        .unwrap_or_else(|_| b"{\"Err\":{\"status\":500,\"message\":\"internal error\"}}".to_vec());
    Message {
        headers: Headers::new(),
        payload: Bytes::from(payload),
    }
}

/// The reply of a session that is going away without acting on the request.
pub fn moved() -> Message {
    let mut msg = encode(&Err(ApiError::unavailable(
        "the session is changing owner; retry",
    )));
    msg.headers.insert(MOVED.into(), "1".into());
    msg
}

/// Decodes a command from a request payload.
pub fn decode(payload: &[u8]) -> Result<Command, ApiError> {
    serde_json::from_slice(payload)
        .map_err(|e| ApiError::bad_request(format!("undecodable command: {e}")))
}

/// The owner's answer to a send.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendResult {
    /// The network's id of the message (or of the reaction or edit itself).
    pub message_id: String,
    /// Media sends: `image`, `video`, `audio`, `document` or `sticker`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// Media sends: the file's size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// `text` when a file too large to attach went out as a link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// Sent, but something after the send failed (the hosted-history write).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

impl SendResult {
    pub fn message(message_id: String) -> SendResult {
        SendResult {
            message_id,
            media_type: None,
            bytes: None,
            fallback: None,
            warning: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parley_model::address::MessageId;
    use parley_model::media::MediaInfo;
    use parley_model::outgoing::{Content, DeleteMode, MediaRequest, MediaSource};
    use parley_model::recipients::Recipient;

    #[test]
    fn commands_and_outcomes_round_trip_as_json() {
        let cmds = [
            Command::Start {
                client_id: "a1".into(),
            },
            Command::TakeOver {
                client_id: "a1".into(),
            },
            Command::Control {
                request: serde_json::json!({"sandbox": "fault", "op": "drop", "count": 1}),
            },
            Command::Send(OutgoingMessage {
                to: Recipient::Phone(PhoneNumber::from_digits("4915112345678").unwrap()),
                content: Content::Location {
                    latitude: 52.5,
                    longitude: 13.4,
                    name: None,
                    address: Some("Berlin".into()),
                },
                quoted_message_id: MessageId::new("3EB0AA"),
                mentions: vec!["123456789012345".into()],
                meta: Some(serde_json::json!({"fromAI": true})),
            }),
            Command::Send(OutgoingMessage {
                to: Recipient::Group("120363025246125486".into()),
                content: Content::Media(MediaRequest {
                    source: MediaSource::Upload {
                        key: "tmp/ab".into(),
                    },
                    info: MediaInfo {
                        mime_type: "image/png".into(),
                        ..MediaInfo::default()
                    },
                    sticker: false,
                }),
                quoted_message_id: None,
                mentions: vec![],
                meta: None,
            }),
            Command::Chat(ChatAction::Delete {
                to: Recipient::Lid("123456789012345".into()),
                message_id: MessageId::new("3EB0AA").unwrap(),
                from_me: true,
                mode: DeleteMode::Everyone,
            }),
        ];
        for c in cmds {
            let bytes = serde_json::to_vec(&c).unwrap();
            assert_eq!(decode(&bytes).unwrap(), c);
        }
        let sent: Outcome = Ok(Reply::Sent(SendResult::message("3EB0AA".into())));
        assert_eq!(
            serde_json::from_slice::<Outcome>(&encode(&sent).payload).unwrap(),
            sent
        );
        let err: Outcome = Err(ApiError::conflict("already paired"));
        let msg = encode(&err);
        assert_eq!(
            serde_json::from_slice::<Outcome>(&msg.payload).unwrap(),
            err
        );
    }
}
