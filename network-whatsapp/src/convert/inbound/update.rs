//! Updates of earlier messages: reactions (an empty emoji removes one), edits
//! (`protocolMessage` MESSAGE_EDIT; an encrypted edit is decrypted and rewrapped
//! into this form by the adapter with the library's `message_edit` functions)
//! and revokes (`protocolMessage` REVOKE). Other protocol messages are no
//! user activity.
use wa::message::protocol_message::Type;
use whatsapp_rust::waproto::whatsapp as wa;

use super::context::body_of;
use parley_model::inbound::Content;
use parley_network::MessageId;

/// The update `base` carries, `None` for anything else.
pub(super) fn content(base: &wa::Message) -> Option<Content> {
    if let Some(r) = base.reaction_message.as_option() {
        return Some(Content::Reaction {
            target_id: target(&r.key)?,
            emoji: r.text.clone().unwrap_or_default(),
        });
    }
    let p = base.protocol_message.as_option()?;
    match p.r#type {
        Some(Type::MESSAGE_EDIT) => Some(Content::Edit {
            target_id: target(&p.key)?,
            body: p
                .edited_message
                .as_option()
                .map(body_of)
                .unwrap_or_default(),
        }),
        Some(Type::REVOKE) => Some(Content::Revoke {
            target_id: target(&p.key)?,
        }),
        // Key shares, history sync, settings: handled by the library, not events.
        _ => None,
    }
}

fn target(key: &whatsapp_rust::waproto::buffa::MessageField<wa::MessageKey>) -> Option<MessageId> {
    key.as_option()
        .and_then(|k| k.id.clone())
        .and_then(MessageId::new)
}
