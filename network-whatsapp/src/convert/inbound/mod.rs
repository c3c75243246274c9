//! Received messages to the port's [`InboundMessage`]: the message (wrappers such
//! as ephemeral, view-once, device-sent and document-with-caption unwrapped) plus
//! its [`Envelope`] become one inbound message, or nothing for messages that are
//! not user activity (protocol housekeeping, key distribution, unknown kinds).
mod context;
mod envelope;
mod location;
mod media;
mod poll;
mod reply;
mod update;

#[cfg(test)]
mod tests;

use whatsapp_rust::wacore::proto_helpers::MessageExt;
use whatsapp_rust::waproto::whatsapp as wa;

use super::ConvertError;
use parley_model::inbound::{Content, InboundMessage};

pub use envelope::{Envelope, revealed_phone};
pub use poll::{VoteAddressing, VoteKey, VoteTarget, vote_target};

/// The inbound message for `msg`, `None` when it carries no user activity.
///
/// `vote` is the secret and addressing of the poll a vote refers to (see
/// [`vote_target`]); a vote without it is an error, every other kind ignores it.
pub fn to_inbound(
    msg: &wa::Message,
    env: &Envelope,
    vote: Option<&VoteKey>,
) -> Result<Option<InboundMessage>, ConvertError> {
    let Some(content) = content(msg, vote)? else {
        return Ok(None);
    };
    let ctx = context::of(msg.get_base_message());
    Ok(Some(InboundMessage {
        id: env.id.clone(),
        chat: env.chat.clone(),
        chat_lid: env.chat_lid.clone(),
        sender: env.sender.clone(),
        sender_phone: env.sender_phone.clone(),
        from_me: env.from_me,
        push_name: env.push_name.clone(),
        group_subject: env.group_subject.clone(),
        timestamp: env.timestamp,
        content,
        quoted: ctx.and_then(context::quoted),
        mentions: ctx.map(context::mentions).unwrap_or_default(),
        is_forwarded: ctx.is_some_and(context::is_forwarded),
    }))
}

/// The content of a message, read inside its wrappers, first match wins
/// (updates before content, so an edit is never read as the text it carries).
/// Files read the wrapped message itself: a wrapper can say how to show them.
fn content(msg: &wa::Message, vote: Option<&VoteKey>) -> Result<Option<Content>, ConvertError> {
    let base = msg.get_base_message();
    if let Some(update) = update::content(base) {
        return Ok(Some(update));
    }
    if let Some(update) = base.poll_update_message.as_option() {
        return poll::vote(update, vote).map(Some);
    }
    Ok(text(base)
        .or_else(|| media::content(msg))
        .or_else(|| location::content(base))
        .or_else(|| poll::creation(base))
        .or_else(|| reply::content(base)))
}

fn text(base: &wa::Message) -> Option<Content> {
    let body = base
        .conversation
        .as_deref()
        .filter(|t| !t.is_empty())
        .or_else(|| {
            base.extended_text_message
                .as_option()
                .and_then(|m| m.text.as_deref())
        })?;
    Some(Content::Text { body: body.into() })
}
