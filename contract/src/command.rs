//! Command and Reply: what the API asks the worker that owns a session to do,
//! as JSON on the bus, with a request id (idempotency) and trace context in
//! headers (`parley_shared::bus::commands` carries them).
use serde::{Deserialize, Serialize};

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
    /// A test control's answer, which the control's route reads: opaque to
    /// the bus like its request (`Command::Control`).
    Controlled {
        answer: serde_json::Value,
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
    /// A status update: how many contacts it went to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<u64>,
}

impl SendResult {
    pub fn message(message_id: String) -> SendResult {
        SendResult {
            message_id,
            media_type: None,
            bytes: None,
            fallback: None,
            warning: None,
            audience: None,
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
                status: None,
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
                status: None,
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
    }
}
