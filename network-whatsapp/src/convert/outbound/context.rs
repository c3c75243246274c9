//! The `ContextInfo` of a send: the quoted message (id, author, preview) and
//! the mentioned JIDs.
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use super::Context;

/// The context to attach, `None` when there is neither a quote nor a mention.
pub(super) fn context_info(ctx: &Context) -> Option<wa::ContextInfo> {
    if ctx.quoted.is_none() && ctx.mentions.is_empty() {
        return None;
    }
    let mut info = wa::ContextInfo {
        mentioned_jid: ctx.mentions.iter().map(|m| mention_jid(m)).collect(),
        ..Default::default()
    };
    if let Some(q) = &ctx.quoted {
        info.stanza_id = Some(q.message_id.clone());
        info.participant = q.participant.clone();
        info.quoted_message = match &q.body {
            Some(body) => MessageField::some(wa::Message {
                conversation: Some(body.clone()),
                ..Default::default()
            }),
            None => MessageField::none(),
        };
    }
    Some(info)
}

/// The context as a message field.
pub(super) fn field(ctx: &Context) -> MessageField<wa::ContextInfo> {
    context_info(ctx).map_or_else(MessageField::none, MessageField::some)
}

fn mention_jid(mention: &str) -> String {
    if mention.contains('@') {
        mention.to_string()
    } else {
        format!("{mention}@s.whatsapp.net")
    }
}
