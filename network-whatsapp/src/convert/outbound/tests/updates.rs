//! Reaction, edit and revoke sends.
use wa::message::protocol_message::Type;
use whatsapp_rust::waproto::whatsapp as wa;

use crate::convert::outbound::{
    EditRequest, ReactionRequest, RevokeRequest, edit, edit_content, reaction, revoke,
};
use parley_model::inbound::Content;

use super::{CHAT, echo, mid};

const GROUP: &str = "120363000000000001@g.us";

fn key_of(msg: &wa::Message) -> wa::MessageKey {
    msg.protocol_message
        .as_option()
        .and_then(|p| p.key.as_option())
        .or_else(|| {
            msg.reaction_message
                .as_option()
                .and_then(|r| r.key.as_option())
        })
        .cloned()
        .expect("key")
}

#[test]
fn reaction_keys_the_target() {
    let own = reaction(&ReactionRequest {
        chat: CHAT.into(),
        target_id: "3EB0T".into(),
        target_from_me: true,
        target_sender: Some("ignored@lid".into()),
        emoji: "❤️".into(),
        sender_timestamp_ms: 1_790_000_000_000,
    })
    .expect("build");
    let r = own.reaction_message.as_option().expect("reaction");
    assert_eq!(r.text.as_deref(), Some("❤️"));
    assert_eq!(r.sender_timestamp_ms, Some(1_790_000_000_000));
    assert_eq!(
        key_of(&own),
        wa::MessageKey {
            remote_jid: Some(CHAT.into()),
            from_me: Some(true),
            id: Some("3EB0T".into()),
            participant: None,
        }
    );
    assert_eq!(
        echo(&own, None).content,
        Content::Reaction {
            target_id: mid("3EB0T"),
            emoji: "❤️".into(),
        }
    );

    let removal_in_group = reaction(&ReactionRequest {
        chat: GROUP.into(),
        target_id: "3EB0G".into(),
        target_from_me: false,
        target_sender: Some("100000012345678@lid".into()),
        emoji: String::new(),
        sender_timestamp_ms: 1,
    })
    .expect("build");
    let key = key_of(&removal_in_group);
    assert_eq!(key.participant.as_deref(), Some("100000012345678@lid"));
    assert_eq!(key.from_me, Some(false));
    assert_eq!(
        removal_in_group
            .reaction_message
            .as_option()
            .and_then(|r| r.text.as_deref()),
        Some(""),
        "an empty emoji removes the reaction"
    );
    assert!(reaction(&ReactionRequest::default()).is_err());
}

#[test]
fn edit_replaces_the_text_of_an_own_message() {
    let msg = edit(&EditRequest {
        chat: GROUP.into(),
        target_id: "3EB0MINE".into(),
        body: "corrected".into(),
        own_participant: Some("100000099999999@lid".into()),
        timestamp_ms: 1_790_000_000_000,
    })
    .expect("build");
    let p = msg.protocol_message.as_option().expect("protocol");
    assert_eq!(p.r#type, Some(Type::MESSAGE_EDIT));
    assert_eq!(p.timestamp_ms, Some(1_790_000_000_000));
    assert_eq!(
        p.edited_message
            .as_option()
            .and_then(|m| m.conversation.as_deref()),
        Some("corrected")
    );
    assert_eq!(
        key_of(&msg),
        wa::MessageKey {
            remote_jid: Some(GROUP.into()),
            from_me: Some(true),
            id: Some("3EB0MINE".into()),
            participant: Some("100000099999999@lid".into()),
        }
    );
    assert_eq!(
        echo(&msg, None).content,
        Content::Edit {
            target_id: mid("3EB0MINE"),
            body: "corrected".into(),
        }
    );
    assert_eq!(
        edit_content("corrected")
            .expect("content")
            .conversation
            .as_deref(),
        Some("corrected")
    );
    assert!(edit_content(" ").is_err());
}

#[test]
fn revoke_own_and_as_group_admin() {
    let own = revoke(&RevokeRequest {
        chat: CHAT.into(),
        target_id: "3EB0OOPS".into(),
        from_me: true,
        participant: None,
    })
    .expect("build");
    let p = own.protocol_message.as_option().expect("protocol");
    assert_eq!(p.r#type, Some(Type::REVOKE));
    assert_eq!(
        key_of(&own),
        wa::MessageKey {
            remote_jid: Some(CHAT.into()),
            from_me: Some(true),
            id: Some("3EB0OOPS".into()),
            participant: None,
        }
    );
    assert_eq!(
        echo(&own, None).content,
        Content::Revoke {
            target_id: mid("3EB0OOPS"),
        }
    );

    let admin = revoke(&RevokeRequest {
        chat: GROUP.into(),
        target_id: "3EB0SPAM".into(),
        from_me: false,
        participant: Some("100000012345678@lid".into()),
    })
    .expect("build");
    let key = key_of(&admin);
    assert_eq!(key.from_me, Some(false));
    assert_eq!(key.participant.as_deref(), Some("100000012345678@lid"));

    let anonymous = RevokeRequest {
        chat: GROUP.into(),
        target_id: "3EB0SPAM".into(),
        from_me: false,
        participant: None,
    };
    assert!(revoke(&anonymous).is_err());
}
