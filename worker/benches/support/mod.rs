//! What the event benchmarks share: the message they feed.
use chrono::Utc;
use parley_worker::network::inbound::{Content, InboundMessage};
use parley_worker::network::{Jid, MessageId};

/// A contact's text, the `n`th of the run (each with its own id).
pub fn message(n: u64) -> InboundMessage {
    InboundMessage {
        id: MessageId::new(format!("3EB0{n:016X}")).expect("an id"),
        chat: Jid::parse("222222222222222@lid").expect("a JID"),
        chat_lid: "222222222222222".into(),
        sender: Jid::parse("222222222222222@lid").expect("a JID"),
        sender_phone: Some("4915100000001".into()),
        from_me: false,
        push_name: "Ana".into(),
        group_subject: None,
        timestamp: Utc::now(),
        content: Content::Text {
            body: "Hello, is the order on its way? I ordered it last Tuesday.".into(),
        },
        quoted: None,
        mentions: Vec::new(),
        is_forwarded: false,
    }
}
