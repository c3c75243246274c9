//! The envelope from the library's `MessageInfo`: LID and phone forms of chats
//! and senders in direct chats, groups and messages sent from the phone.
use chrono::{TimeZone, Utc};
use whatsapp_rust::Jid;
use whatsapp_rust::wacore::types::message::{MessageInfo, MessageSource};

use super::super::Envelope;

fn jid(s: &str) -> Jid {
    s.parse().expect("jid")
}

fn info(source: MessageSource) -> MessageInfo {
    MessageInfo {
        source,
        id: "3EB0ENV".into(),
        push_name: "Ana".into(),
        timestamp: Utc.timestamp_opt(1_790_000_000, 0).single().expect("time"),
        ..Default::default()
    }
}

#[test]
fn direct_message_from_a_phone_addressed_peer_reveals_both_forms() {
    let e = Envelope::from_info(
        &info(MessageSource {
            chat: jid("4915100000001@s.whatsapp.net"),
            sender: jid("4915100000001:3@s.whatsapp.net"),
            sender_alt: Some(jid("100000012345678@lid")),
            ..Default::default()
        }),
        Some("ignored outside groups".into()),
    )
    .expect("envelope");
    assert_eq!(e.id, "3EB0ENV");
    assert_eq!(e.chat, "4915100000001@s.whatsapp.net");
    assert_eq!(e.chat_lid, "100000012345678");
    assert_eq!(e.sender, "4915100000001@s.whatsapp.net", "device dropped");
    assert_eq!(e.sender_phone.as_deref(), Some("4915100000001"));
    assert!(!e.from_me);
    assert_eq!(e.push_name, "Ana");
    assert_eq!(e.group_subject, None);
    assert_eq!(e.timestamp.timestamp(), 1_790_000_000);
}

#[test]
fn direct_message_from_a_lid_peer_without_phone() {
    let e = Envelope::from_info(
        &info(MessageSource {
            chat: jid("100000012345678@lid"),
            sender: jid("100000012345678:2@lid"),
            ..Default::default()
        }),
        None,
    )
    .expect("envelope");
    assert_eq!(e.chat_lid, "100000012345678");
    assert_eq!(e.sender, "100000012345678@lid");
    assert_eq!(e.sender_phone, None);
}

#[test]
fn message_sent_from_the_linked_phone_names_the_recipient() {
    let e = Envelope::from_info(
        &info(MessageSource {
            chat: jid("4915100000001@s.whatsapp.net"),
            sender: jid("4917000000009:0@s.whatsapp.net"),
            is_from_me: true,
            recipient: Some(jid("4915100000001@s.whatsapp.net")),
            recipient_alt: Some(jid("100000012345678@lid")),
            sender_alt: Some(jid("100000099999999@lid")),
            ..Default::default()
        }),
        None,
    )
    .expect("envelope");
    assert!(e.from_me);
    assert_eq!(e.chat_lid, "100000012345678", "the peer, not this account");
    assert_eq!(e.sender_phone.as_deref(), Some("4917000000009"));
}

#[test]
fn group_message_names_the_participant_and_keeps_the_subject() {
    let e = Envelope::from_info(
        &info(MessageSource {
            chat: jid("120363000000000001@g.us"),
            sender: jid("100000012345678:4@lid"),
            is_group: true,
            sender_alt: Some(jid("4915100000001@s.whatsapp.net")),
            ..Default::default()
        }),
        Some("Team".into()),
    )
    .expect("envelope");
    assert_eq!(e.chat, "120363000000000001@g.us");
    assert_eq!(e.chat_lid, "");
    assert_eq!(e.sender, "100000012345678@lid");
    assert_eq!(e.sender_phone.as_deref(), Some("4915100000001"));
    assert_eq!(e.group_subject.as_deref(), Some("Team"));
}

#[test]
fn a_message_without_an_id_is_unreadable() {
    let mut without_id = info(MessageSource {
        chat: jid("100000012345678@lid"),
        sender: jid("100000012345678@lid"),
        ..Default::default()
    });
    without_id.id.clear();
    assert_eq!(
        Envelope::from_info(&without_id, None),
        Err(crate::convert::ConvertError::Malformed {
            field: "message id",
            value: String::new(),
        })
    );
}
