//! A message's `ContextInfo`: the quoted message, mentions, the forwarded flag,
//! and the event kind of a quoted message.
use whatsapp_rust::wacore::proto_helpers::MessageExt;
use whatsapp_rust::waproto::whatsapp as wa;

use parley_model::inbound::QuotedRef;
use parley_network::{Jid, MessageId};

/// The context of the first content field of `base` that carries one.
pub(super) fn of(base: &wa::Message) -> Option<&wa::ContextInfo> {
    macro_rules! first {
        ($($field:ident),+ $(,)?) => {
            None$(.or_else(|| base.$field.as_option().and_then(|m| m.context_info.as_option())))+
        };
    }
    first!(
        extended_text_message,
        image_message,
        video_message,
        ptv_message,
        audio_message,
        document_message,
        sticker_message,
        location_message,
        live_location_message,
        contact_message,
        contacts_array_message,
        poll_creation_message,
        poll_creation_message_v2,
        poll_creation_message_v3,
        poll_creation_message_v5,
        poll_creation_message_v6,
        buttons_response_message,
        template_button_reply_message,
        list_response_message,
        interactive_response_message,
        interactive_message,
        buttons_message,
    )
}

/// The replied-to message, when the context quotes one.
pub(super) fn quoted(ctx: &wa::ContextInfo) -> Option<QuotedRef> {
    let message_id = MessageId::new(ctx.stanza_id.clone()?)?;
    let quoted = ctx.quoted_message.as_option();
    Some(QuotedRef {
        message_id,
        participant: ctx.participant.as_deref().and_then(Jid::parse),
        body: quoted.map(body_of).unwrap_or_default(),
        kind: quoted.map_or("text", kind_of).into(),
    })
}

/// Mentioned user-parts.
pub(super) fn mentions(ctx: &wa::ContextInfo) -> Vec<String> {
    ctx.mentioned_jid
        .iter()
        .filter_map(|jid| Jid::parse(jid))
        .map(|jid| jid.bare_user().to_string())
        .filter(|user| !user.is_empty())
        .collect()
}

pub(super) fn is_forwarded(ctx: &wa::ContextInfo) -> bool {
    ctx.is_forwarded.unwrap_or(false) || ctx.forwarding_score.is_some_and(|s| s > 0)
}

/// The text a message shows: its text, a caption, a poll question, a name.
pub(super) fn body_of(msg: &wa::Message) -> String {
    let base = msg.get_base_message();
    if let Some(text) = base.text_content().or_else(|| base.get_caption()) {
        return text.into();
    }
    let poll = [
        &base.poll_creation_message,
        &base.poll_creation_message_v2,
        &base.poll_creation_message_v3,
    ]
    .into_iter()
    .find_map(|p| p.as_option().and_then(|p| p.name.clone()));
    poll.or_else(|| {
        base.contact_message
            .as_option()
            .and_then(|c| c.display_name.clone())
    })
    .or_else(|| {
        base.location_message
            .as_option()
            .and_then(|l| l.name.clone())
    })
    .unwrap_or_default()
}

/// The event type a message would have (`text`, `image`, ..., `poll_creation`).
pub(super) fn kind_of(msg: &wa::Message) -> &'static str {
    let m = msg.get_base_message();
    if m.image_message.is_set() {
        "image"
    } else if m.video_message.is_set() || m.ptv_message.is_set() {
        "video"
    } else if m.audio_message.is_set() {
        "audio"
    } else if m.document_message.is_set() {
        "document"
    } else if m.sticker_message.is_set() {
        "sticker"
    } else if m.location_message.is_set() || m.live_location_message.is_set() {
        "location"
    } else if m.contact_message.is_set() || m.contacts_array_message.is_set() {
        "contact"
    } else if m.poll_creation_message.is_set()
        || m.poll_creation_message_v2.is_set()
        || m.poll_creation_message_v3.is_set()
    {
        "poll_creation"
    } else if m.interactive_message.is_set() || m.buttons_message.is_set() {
        "interactive"
    } else {
        "text"
    }
}
