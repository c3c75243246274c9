//! A phone answers its companions' placeholder resend requests. A companion
//! that could not open a message asks its phone for it: a peer-data
//! operation (`PeerDataOperationRequestMessage` of type
//! `PLACEHOLDER_MESSAGE_RESEND`, naming the message's key), which
//! whatsapp-rust sends when a decryption fails (`pdo.rs`,
//! `send_pdo_placeholder_resend_request`). The phone opened its own copy,
//! and answers with the message as a `WebMessageInfo`, its key naming a
//! contact's chat by phone number, in a `PeerDataOperationRequestResponseMessage`
//! carrying the request's id (`stanzaId`); whatsapp-rust takes it from
//! device 0 only (`handle_pdo_response`) and delivers the message as if it
//! had opened it. A message the phone does not hold is answered without
//! one, as the real phone answers one it could not open either.
//!
//! The answer goes to the account's devices as a message to itself:
//! whatsapp-rust offers no peer send of its own to a client, where the
//! real phone sends it to the asking device as a peer message.
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use whatsapp_rust::buffa::{Message as _, MessageField};
use whatsapp_rust::waproto::whatsapp as wa;
use whatsapp_rust::{Client, Jid};

use crate::devices::Received;

use wa::message::PeerDataOperationRequestType::PLACEHOLDER_MESSAGE_RESEND;
use wa::message::peer_data_operation_request_response_message::PeerDataOperationResult;
use wa::message::peer_data_operation_request_response_message::peer_data_operation_result::PlaceholderMessageResendResponse;

/// A placeholder resend request the phone received: the id of the message
/// that carried it, and the keys of the messages asked for.
#[derive(Debug)]
pub(crate) struct Asked {
    id: String,
    keys: Vec<wa::MessageKey>,
}

/// The request `message` (with id `id`) carries, when it is one and came
/// from the account itself.
pub(crate) fn asked(id: &str, from_me: bool, message: &wa::Message) -> Option<Asked> {
    let request = message
        .protocol_message
        .as_option()?
        .peer_data_operation_request_message
        .as_option()?;
    if !from_me || request.peer_data_operation_request_type != Some(PLACEHOLDER_MESSAGE_RESEND) {
        return None;
    }
    let keys = request
        .placeholder_message_resend_request
        .iter()
        .filter_map(|r| r.message_key.as_option().cloned())
        .collect();
    Some(Asked {
        id: id.to_string(),
        keys,
    })
}

/// What the phone holds of the messages it received, by id.
pub(crate) type Held = Arc<dyn Fn(&str) -> Option<Received> + Send + Sync>;

/// Answers each request that comes on `requests`, as `phone`'s `client`,
/// with what `held` finds; notes in `answered` the ids it answered with the
/// message.
pub(crate) fn answer_all(
    client: Arc<Client>,
    phone: String,
    held: Held,
    answered: Arc<Mutex<Vec<String>>>,
    mut requests: mpsc::UnboundedReceiver<Asked>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        while let Some(request) = requests.recv().await {
            let mut results = Vec::with_capacity(request.keys.len());
            for key in &request.keys {
                let found = key.id.as_deref().and_then(|id| held(id));
                if let Some(m) = &found {
                    answered
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(m.id.clone());
                }
                results.push(result(&client, key, found).await);
            }
            let response = wa::message::PeerDataOperationRequestResponseMessage {
                peer_data_operation_request_type: Some(PLACEHOLDER_MESSAGE_RESEND),
                stanza_id: Some(request.id.clone()),
                peer_data_operation_result: results,
            };
            let protocol = wa::message::ProtocolMessage {
                r#type: Some(
                    wa::message::protocol_message::Type::PEER_DATA_OPERATION_REQUEST_RESPONSE_MESSAGE,
                ),
                peer_data_operation_request_response_message: MessageField::some(response),
                ..Default::default()
            };
            if let Err(e) = crate::devices::to_own_devices(&client, &phone, protocol).await {
                tracing::warn!(%phone, request = %request.id, error = %e,
                    "the phone could not answer a placeholder resend request");
            }
        }
    })
}

/// The answer for one message: its `WebMessageInfo` when the phone holds
/// it (without the message otherwise).
async fn result(
    client: &Client,
    key: &wa::MessageKey,
    found: Option<Received>,
) -> PeerDataOperationResult {
    let chat = key.remote_jid.as_deref().unwrap_or_default();
    let info = wa::WebMessageInfo {
        key: MessageField::some(wa::MessageKey {
            remote_jid: Some(by_phone(client, chat).await),
            ..key.clone()
        }),
        message_timestamp: found.as_ref().map(|m| m.at.timestamp().max(0) as u64),
        message: match found {
            Some(m) => MessageField::some(*m.message),
            None => MessageField::none(),
        },
        ..Default::default()
    };
    PeerDataOperationResult {
        placeholder_message_resend_response: MessageField::some(PlaceholderMessageResendResponse {
            web_message_info_bytes: Some(info.encode_to_vec()),
        }),
        ..Default::default()
    }
}

/// A contact's chat by its phone number when the phone knows the LID's
/// number (groups and unknown LIDs as they are).
async fn by_phone(client: &Client, chat: &str) -> String {
    let Ok(jid) = chat.parse::<Jid>() else {
        return chat.to_string();
    };
    if !jid.is_lid() {
        return chat.to_string();
    }
    match client.get_lid_pn_entry(&jid).await {
        Ok(Some(entry)) => Jid::pn(entry.phone_number.to_string()).to_string(),
        _ => chat.to_string(),
    }
}
