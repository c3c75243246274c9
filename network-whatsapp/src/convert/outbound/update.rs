//! Updates of earlier messages: a reaction (the library's own builder), an edit
//! and a revoke (`protocolMessage` MESSAGE_EDIT / REVOKE keyed by the target).
//!
//! The adapter sends edits and revokes through the library's `edit_message`
//! (with [`edit_content`]) and `revoke_message`, which add the stanza's `edit`
//! attribute; [`edit`] and [`revoke`] are the protocol messages those put on the
//! wire, for sends that go through `send_message` and for tests.
use wa::message::protocol_message::Type;
use whatsapp_rust::wacore::proto_helpers::build_reaction_message;
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use super::{EditRequest, ReactionRequest, RevokeRequest};
use crate::convert::ConvertError;

pub fn reaction(req: &ReactionRequest) -> Result<wa::Message, ConvertError> {
    require("messageId", &req.target_id)?;
    require("to", &req.chat)?;
    let key = wa::MessageKey {
        remote_jid: Some(req.chat.clone()),
        from_me: Some(req.target_from_me),
        id: Some(req.target_id.clone()),
        participant: if req.target_from_me {
            None
        } else {
            req.target_sender.clone()
        },
    };
    Ok(build_reaction_message(
        key,
        req.emoji.clone(),
        req.sender_timestamp_ms,
    ))
}

/// The new content of an edit: the text as a bare `conversation`.
pub fn edit_content(body: &str) -> Result<wa::Message, ConvertError> {
    require("body", body)?;
    Ok(wa::Message {
        conversation: Some(body.to_string()),
        ..Default::default()
    })
}

pub fn edit(req: &EditRequest) -> Result<wa::Message, ConvertError> {
    require("messageId", &req.target_id)?;
    require("to", &req.chat)?;
    Ok(protocol(wa::message::ProtocolMessage {
        key: MessageField::some(wa::MessageKey {
            remote_jid: Some(req.chat.clone()),
            from_me: Some(true),
            id: Some(req.target_id.clone()),
            participant: req.own_participant.clone(),
        }),
        r#type: Some(Type::MESSAGE_EDIT),
        edited_message: MessageField::some(edit_content(&req.body)?),
        timestamp_ms: Some(req.timestamp_ms),
        ..Default::default()
    }))
}

pub fn revoke(req: &RevokeRequest) -> Result<wa::Message, ConvertError> {
    require("messageId", &req.target_id)?;
    require("to", &req.chat)?;
    if !req.from_me && req.participant.is_none() {
        return Err(ConvertError::invalid(
            "fromMe",
            "revoking another's message needs its author",
        ));
    }
    Ok(protocol(wa::message::ProtocolMessage {
        key: MessageField::some(wa::MessageKey {
            remote_jid: Some(req.chat.clone()),
            from_me: Some(req.from_me),
            id: Some(req.target_id.clone()),
            participant: if req.from_me {
                None
            } else {
                req.participant.clone()
            },
        }),
        r#type: Some(Type::REVOKE),
        ..Default::default()
    }))
}

fn protocol(p: wa::message::ProtocolMessage) -> wa::Message {
    wa::Message {
        protocol_message: MessageField::some(p),
        ..Default::default()
    }
}

fn require(field: &'static str, value: &str) -> Result<(), ConvertError> {
    if value.trim().is_empty() {
        return Err(ConvertError::invalid(field, "empty"));
    }
    Ok(())
}
