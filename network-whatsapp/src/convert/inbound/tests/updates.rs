//! Updates of earlier messages: reactions, edits, revokes.
use wa::message::{self as m, protocol_message::Type};
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use super::{PEER_LID, content, mid};
use parley_model::inbound::Content;

fn key(id: &str) -> MessageField<wa::MessageKey> {
    MessageField::some(wa::MessageKey {
        remote_jid: Some(PEER_LID.into()),
        from_me: Some(true),
        id: Some(id.into()),
        participant: None,
    })
}

#[test]
fn reactions_add_and_remove() {
    let react = |emoji: &str| wa::Message {
        reaction_message: MessageField::some(m::ReactionMessage {
            key: key("3EB0TARGET"),
            text: Some(emoji.into()),
            sender_timestamp_ms: Some(1_790_000_000_000),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(
        content(&react("👍")),
        Content::Reaction {
            target_id: mid("3EB0TARGET"),
            emoji: "👍".into(),
        }
    );
    assert_eq!(
        content(&react("")),
        Content::Reaction {
            target_id: mid("3EB0TARGET"),
            emoji: String::new(),
        }
    );
}

fn edit(new_text: wa::Message) -> m::ProtocolMessage {
    m::ProtocolMessage {
        key: key("3EB0ORIGINAL"),
        r#type: Some(Type::MESSAGE_EDIT),
        edited_message: MessageField::some(new_text),
        timestamp_ms: Some(1_790_000_000_000),
        ..Default::default()
    }
}

#[test]
fn edits_of_text_and_captions() {
    let plain = wa::Message {
        protocol_message: MessageField::some(edit(wa::Message {
            conversation: Some("fixed typo".into()),
            ..Default::default()
        })),
        ..Default::default()
    };
    // As phones send it: the protocol message inside an `editedMessage` wrapper,
    // the new text an extended text.
    let wrapped = wa::Message {
        edited_message: MessageField::some(m::FutureProofMessage {
            message: MessageField::some(wa::Message {
                protocol_message: MessageField::some(edit(wa::Message {
                    extended_text_message: MessageField::some(m::ExtendedTextMessage {
                        text: Some("fixed again".into()),
                        ..Default::default()
                    }),
                    ..Default::default()
                })),
                ..Default::default()
            }),
        }),
        ..Default::default()
    };
    let caption = wa::Message {
        protocol_message: MessageField::some(edit(wa::Message {
            image_message: MessageField::some(m::ImageMessage {
                caption: Some("new caption".into()),
                ..Default::default()
            }),
            ..Default::default()
        })),
        ..Default::default()
    };
    let expect = |body: &str| Content::Edit {
        target_id: mid("3EB0ORIGINAL"),
        body: body.into(),
    };
    assert_eq!(content(&plain), expect("fixed typo"));
    assert_eq!(content(&wrapped), expect("fixed again"));
    assert_eq!(content(&caption), expect("new caption"));
}

#[test]
fn revokes() {
    let msg = wa::Message {
        protocol_message: MessageField::some(m::ProtocolMessage {
            key: key("3EB0GONE"),
            r#type: Some(Type::REVOKE),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(
        content(&msg),
        Content::Revoke {
            target_id: mid("3EB0GONE"),
        }
    );
}
