//! History sync blobs read into the port's messages: chats by LID or by
//! phone, groups with their subject, the newest 200 of a chat, what is not
//! user activity left out, chunks of at most 500 messages, and the
//! contacts' push names.
use std::io::Write;

use whatsapp_rust::Jid;
use whatsapp_rust::buffa::{Message as _, MessageField};
use whatsapp_rust::waproto::whatsapp as wa;

use crate::live::history::{MESSAGES_PER_CHAT, read};
use parley_model::inbound::{Content, InboundMessage};
use parley_network::HISTORY_CHUNK;

const OWN: &str = "4915100000001@s.whatsapp.net";

fn text(
    id: &str,
    from_me: bool,
    participant: Option<&str>,
    at: u64,
    body: &str,
) -> wa::HistorySyncMsg {
    wa::HistorySyncMsg {
        message: MessageField::some(wa::WebMessageInfo {
            key: MessageField::some(wa::MessageKey {
                id: Some(id.into()),
                from_me: Some(from_me),
                participant: participant.map(str::to_string),
                ..Default::default()
            }),
            message: MessageField::some(wa::Message {
                conversation: Some(body.into()),
                ..Default::default()
            }),
            message_timestamp: Some(at),
            push_name: Some("Someone".into()),
            ..Default::default()
        }),
        msg_order_id: None,
    }
}

fn blob(conversations: Vec<wa::Conversation>) -> (Vec<u8>, usize) {
    compressed(&wa::HistorySync {
        sync_type: wa::history_sync::HistorySyncType::INITIAL_BOOTSTRAP,
        conversations,
        ..Default::default()
    })
}

fn compressed(sync: &wa::HistorySync) -> (Vec<u8>, usize) {
    let raw = sync.encode_to_vec();
    let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    zlib.write_all(&raw).expect("compress");
    (zlib.finish().expect("compress"), raw.len())
}

/// The chunks `read` hands over.
fn chunks(compressed: &[u8], size: usize, own: &Jid) -> Result<Vec<Vec<InboundMessage>>, String> {
    let mut out = Vec::new();
    let read = read(compressed, size, own, |chunk| {
        out.push(chunk);
        true
    })?;
    assert_eq!(read.handed, out.iter().map(Vec::len).sum::<usize>());
    Ok(out)
}

#[test]
fn a_blob_becomes_the_messages_of_its_chats_oldest_first() {
    let own: Jid = OWN.parse().unwrap();
    let by_phone = wa::Conversation {
        id: "4915100000002@s.whatsapp.net".into(),
        lid_jid: Some("100000000000002@lid".into()),
        messages: vec![
            text("B", true, None, 1_700_000_200, "the reply"),
            text("A", false, None, 1_700_000_100, "the question"),
            // A protocol message is no user activity.
            wa::HistorySyncMsg {
                message: MessageField::some(wa::WebMessageInfo {
                    key: MessageField::some(wa::MessageKey {
                        id: Some("P".into()),
                        ..Default::default()
                    }),
                    message: MessageField::some(wa::Message {
                        protocol_message: MessageField::some(
                            wa::message::ProtocolMessage::default(),
                        ),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                msg_order_id: None,
            },
        ],
        ..Default::default()
    };
    let group = wa::Conversation {
        id: "120363000000000001@g.us".into(),
        name: Some("Team".into()),
        messages: vec![text(
            "G",
            false,
            Some("4915100000003@s.whatsapp.net"),
            1_700_000_150,
            "hi all",
        )],
        ..Default::default()
    };
    let (compressed, size) = blob(vec![by_phone, group]);
    let chunks = chunks(&compressed, size, &own).expect("read");
    assert_eq!(chunks.len(), 1);
    let all = &chunks[0];
    let ids: Vec<&str> = all.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["A", "B", "G"], "each chat oldest first");
    let (question, reply, hi) = (&all[0], &all[1], &all[2]);
    assert_eq!(question.chat.as_str(), "4915100000002@s.whatsapp.net");
    assert_eq!(question.chat_lid, "100000000000002");
    assert_eq!(question.sender.as_str(), "4915100000002@s.whatsapp.net");
    assert_eq!(question.sender_phone.as_deref(), Some("4915100000002"));
    assert!(!question.from_me);
    assert_eq!(
        question.content,
        Content::Text {
            body: "the question".into()
        }
    );
    assert_eq!(question.timestamp.timestamp(), 1_700_000_100);
    assert!(reply.from_me);
    assert_eq!(reply.sender.as_str(), OWN);
    assert!(hi.is_group());
    assert_eq!(hi.sender.as_str(), "4915100000003@s.whatsapp.net");
    assert_eq!(hi.group_subject.as_deref(), Some("Team"));
    assert!(hi.chat_lid.is_empty());
}

#[test]
fn each_chat_keeps_its_newest_messages_and_chunks_stay_bounded() {
    let own: Jid = OWN.parse().unwrap();
    let chat = |n: u64| wa::Conversation {
        id: format!("10000000000000{n}@lid"),
        messages: (0..(MESSAGES_PER_CHAT as u64 + 5))
            .map(|i| text(&format!("M{n}-{i}"), false, None, 1_700_000_000 + i, "x"))
            .collect(),
        ..Default::default()
    };
    let (compressed, size) = blob(vec![chat(1), chat(2), chat(3)]);
    let chunks = chunks(&compressed, size, &own).expect("read");
    let sizes: Vec<usize> = chunks.iter().map(Vec::len).collect();
    assert_eq!(
        sizes,
        [HISTORY_CHUNK, 3 * MESSAGES_PER_CHAT - HISTORY_CHUNK]
    );
    let all: Vec<&InboundMessage> = chunks.iter().flatten().collect();
    // The five oldest of each chat are left out; a chat by LID names its LID.
    assert!(all.iter().all(|m| m.timestamp.timestamp() >= 1_700_000_005));
    assert!(
        all.iter()
            .all(|m| m.chat_lid.len() == 15 && m.sender_phone.is_none())
    );
    for chat in all.chunk_by(|a, b| a.chat == b.chat) {
        assert_eq!(chat.len(), MESSAGES_PER_CHAT);
        assert!(chat.windows(2).all(|w| w[0].timestamp <= w[1].timestamp));
    }
}

#[test]
fn reading_stops_when_nobody_listens() {
    let own: Jid = OWN.parse().unwrap();
    let chat = |n: u64| wa::Conversation {
        id: format!("10000000000000{n}@lid"),
        messages: (0..300)
            .map(|i| text(&format!("M{n}-{i}"), false, None, 1_700_000_000 + i, "x"))
            .collect(),
        ..Default::default()
    };
    let (compressed, size) = blob(vec![chat(1), chat(2), chat(3), chat(4)]);
    let mut calls = 0;
    let read = read(&compressed, size, &own, |_| {
        calls += 1;
        false
    })
    .expect("read");
    assert_eq!((calls, read.handed), (1, HISTORY_CHUNK));
}

/// A phone's `PUSH_NAME` chunk: no messages, the names its contacts gave
/// themselves by LID or phone JID; a blank name or an address that is no
/// user's is left out.
#[test]
fn the_push_names_of_a_blob_are_read() {
    let own: Jid = OWN.parse().unwrap();
    let name = |id: &str, name: &str| wa::Pushname {
        id: Some(id.into()),
        pushname: Some(name.into()),
    };
    let (compressed, size) = compressed(&wa::HistorySync {
        sync_type: wa::history_sync::HistorySyncType::PUSH_NAME,
        pushnames: vec![
            name("100000000000002@lid", "Ann"),
            name("4915100000003:2@s.whatsapp.net", " Bo "),
            name("100000000000004@lid", "  "),
            name("120363025246125486@g.us", "A group"),
            name("not a jid", "Nobody"),
        ],
        ..Default::default()
    });
    let mut calls = 0;
    let read = read(&compressed, size, &own, |_| {
        calls += 1;
        true
    })
    .expect("read");
    assert_eq!((calls, read.handed), (0, 0));
    let names: Vec<(String, &str)> = read
        .names
        .iter()
        .map(|(jid, name)| (jid.to_string(), name.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("100000000000002@lid".to_string(), "Ann"),
            ("4915100000003@s.whatsapp.net".to_string(), "Bo"),
        ]
    );
}

#[test]
fn a_blob_that_is_not_one_is_an_error() {
    let own: Jid = OWN.parse().unwrap();
    assert!(chunks(b"not zlib at all", 100, &own).is_err());
}
