//! Inbound conversion tests on real `waproto` structures.
mod content;
mod envelope;
mod poll;
mod updates;

use chrono::{TimeZone, Utc};
use whatsapp_rust::waproto::whatsapp as wa;

use super::{Envelope, VoteKey, to_inbound};
use parley_model::inbound::{Content, InboundMessage};
use parley_network::{Jid, MessageId};

pub(super) const PEER_LID: &str = "100000012345678@lid";
pub(super) const GROUP: &str = "120363000000000001@g.us";

/// A direct chat with `PEER_LID` (or a group when `chat` is one).
pub(super) fn env(chat: &str, from_me: bool) -> Envelope {
    Envelope {
        id: mid("3EB0MSG"),
        chat: jid(chat),
        chat_lid: if chat.ends_with("@g.us") {
            String::new()
        } else {
            "100000012345678".into()
        },
        sender: jid(PEER_LID),
        sender_phone: Some("4915100000001".into()),
        from_me,
        push_name: "Ana".into(),
        group_subject: None,
        timestamp: Utc
            .with_ymd_and_hms(2026, 11, 22, 10, 0, 0)
            .single()
            .expect("time"),
    }
}

pub(super) fn jid(raw: &str) -> Jid {
    Jid::parse(raw).expect("a JID")
}

pub(super) fn mid(raw: &str) -> MessageId {
    MessageId::new(raw).expect("a message id")
}

/// The inbound message of `msg` in a direct chat, which must exist.
pub(super) fn inbound(msg: &wa::Message) -> InboundMessage {
    inbound_with(msg, None)
}

pub(super) fn inbound_with(msg: &wa::Message, vote: Option<&VoteKey>) -> InboundMessage {
    to_inbound(msg, &env(PEER_LID, false), vote)
        .expect("converts")
        .expect("is user activity")
}

pub(super) fn content(msg: &wa::Message) -> Content {
    inbound(msg).content
}
