//! What the event benchmarks share: the sessions they open and the message they feed.
use chrono::Utc;
use parley_model::inbound::{Content, InboundMessage};
use parley_worker::events::{EventPipeline, SessionEvents, SessionFacts, SessionSettings};
use parley_worker::network::{Jid, MessageId};
use parley_worker::webhook::Target;

/// Opens the benchmark's session `id` (owned under fence 1), delivering to `url`.
pub fn open_session(pipeline: &EventPipeline, id: &str, url: &str) -> SessionEvents {
    let target = Target {
        url: url.to_string(),
        token: "bench-webhook-token-0123456789abcdef".into(),
    };
    let client_id = parley_worker::network::ClientId::parse(id).expect("a clientId");
    let settings = SessionSettings {
        facts: SessionFacts {
            client_id: client_id.clone(),
            org_id: "org".into(),
            my_lid: "111111111111111".into(),
            enable_group_ai: false,
            events: Vec::new(),
        },
        poll_lookup_url: String::new(),
        webhook_types: Vec::new(),
    };
    pipeline.open(&client_id, 1, std::sync::Arc::new(|| {}), target, settings)
}

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
