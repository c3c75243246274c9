//! Outbound builder tests on real `waproto` structures: each send kind builds the
//! message the network expects, and round-trips through the inbound conversion.
mod interactive;
mod media;
mod messages;
mod poll;
mod updates;

use chrono::{TimeZone, Utc};
use whatsapp_rust::waproto::whatsapp as wa;

use super::{Context, Quote};
use crate::convert::inbound::{Envelope, VoteKey, to_inbound};
use parley_model::inbound::InboundMessage;
use parley_network::{Jid, MessageId};

pub(super) const CHAT: &str = "100000012345678@lid";

/// A reply to `3EB0Q` by `100000012345678@lid`, mentioning two people.
pub(super) fn reply_context() -> Context {
    Context {
        quoted: Some(Quote {
            message_id: "3EB0Q".into(),
            participant: Some(CHAT.into()),
            body: Some("lunch?".into()),
        }),
        mentions: vec!["4915100000002".into(), "100000000000003@lid".into()],
    }
}

pub(super) fn jid(raw: &str) -> Jid {
    Jid::parse(raw).expect("a JID")
}

pub(super) fn mid(raw: &str) -> MessageId {
    MessageId::new(raw).expect("a message id")
}

/// `msg` as this session's own message arriving back (fromMe) in `CHAT`.
pub(super) fn echo(msg: &wa::Message, vote: Option<&VoteKey>) -> InboundMessage {
    let env = Envelope {
        id: mid("3EB0SENT"),
        chat: jid(CHAT),
        chat_lid: "100000012345678".into(),
        sender: jid("100000099999999@lid"),
        sender_phone: None,
        from_me: true,
        push_name: String::new(),
        group_subject: None,
        timestamp: Utc.timestamp_opt(1_790_000_000, 0).single().expect("time"),
    };
    to_inbound(msg, &env, vote)
        .expect("converts")
        .expect("is user activity")
}
