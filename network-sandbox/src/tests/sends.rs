//! Sends on the simulated network: the outbox, faults, the rules the real
//! network enforces (edit window, revoking others' messages), unpaired sessions.
use crate::store::NewOutboxEntry;
use chrono::Utc;
use parley_contract::spool::FileBody;
use serde_json::json;

use super::*;
use parley_model::outgoing::Content;
use parley_network::{
    Jid, MediaFile, MediaInfo, MediaKind, MessageId, MessageRef, Outgoing, PhoneNumber,
};

const CHAT_JID: &str = "123456789012345@lid";

fn jid(raw: &str) -> Jid {
    Jid::parse(raw).expect("a JID")
}

fn id(raw: &str) -> MessageId {
    MessageId::new(raw).expect("a message id")
}

fn phone(digits: &str) -> PhoneNumber {
    PhoneNumber::from_digits(digits).expect("a phone number")
}

/// An edit of `target_id` in `chat`.
fn edit_of(chat: &str, target_id: &MessageId, body: &str) -> Outgoing {
    Outgoing {
        to: jid(chat),
        content: Content::Edit {
            target_id: target_id.clone(),
            body: body.into(),
        },
        ..text("")
    }
}

fn text(body: &str) -> Outgoing {
    Outgoing {
        to: jid(CHAT_JID),
        content: Content::Text { body: body.into() },
        quoted_id: None,
        mentions: vec![],
        status: None,
    }
}

/// A linked connection of `c1`.
async fn linked_connection(f: &Fixture) -> Box<dyn Connection> {
    let (conn, mut events) = connect(f, "c1", 1).await;
    next_qr(&mut events).await;
    linked(f, "c1", &mut events).await;
    conn
}

async fn outbox(f: &Fixture) -> Vec<crate::store::OutboxEntry> {
    f.db.outbox("c1", None, None, 1000).await.expect("outbox")
}

fn rejected(r: Result<impl std::fmt::Debug, NetworkError>) -> String {
    match r {
        Err(NetworkError::Rejected(why)) => why,
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[tokio::test]
async fn sends_land_in_the_outbox_with_network_ids() {
    let f = steady().await;
    let conn = linked_connection(&f).await;
    let sent = conn.send(text("hello")).await.expect("send");
    let sent_id = sent.message_id.as_str();
    assert!(sent_id.starts_with("3EB0") && sent_id.len() == 22);
    assert_eq!((sent.to.as_str(), sent.kind), (CHAT_JID, "text"));
    let file = MediaFile {
        kind: MediaKind::Image,
        data: FileBody::from_bytes(&b"png"[..]),
        info: MediaInfo {
            mime_type: "image/png".into(),
            caption: "cap".into(),
            ..MediaInfo::default()
        },
    };
    let media = Outgoing {
        content: Content::Media(file),
        ..text("")
    };
    assert_eq!(conn.send(media).await.expect("media").kind, "image");
    let chat = jid(CHAT_JID);
    conn.typing(&chat, true).await.expect("typing");
    conn.mark_read(&chat, &[id("3EB0X")]).await.expect("read");
    conn.mark_unread(&chat).await.expect("unread");
    let rows = outbox(&f).await;
    let kinds: Vec<_> = rows.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(kinds, ["text", "image", "typing", "read", "unread"]);
    assert_eq!(rows[0].message_id, sent.message_id.as_str());
    assert_eq!(rows[0].payload, json!({"body": "hello"}));
    assert_eq!(rows[1].payload["caption"], "cap");
    assert_eq!(rows[1].payload["bytes"], 3);
    assert_eq!(rows[2].message_id, "", "typing has no message id");
    assert_eq!(rows[3].payload, json!({"messageIds": ["3EB0X"]}));
}

/// Arms `count` failures of `op` for `c1` the way the `/sandbox/faults` route does.
async fn arm(f: &Fixture, op: &str, count: u32) {
    let fault = SandboxOp::Fault {
        op: op.into(),
        count,
    };
    assert_eq!(f.network.control("c1", fault).await, Ok(Reply::Done));
}

#[tokio::test]
async fn faults_reject_sends_and_receipts_separately() {
    let f = steady().await;
    let conn = linked_connection(&f).await;
    arm(&f, "send", 1).await;
    assert_eq!(rejected(conn.send(text("x")).await), "sandbox fault");
    conn.send(text("y")).await.expect("only one send failed");
    arm(&f, "receipt", 2).await;
    rejected(conn.mark_read(&jid(CHAT_JID), &[id("a")]).await);
    conn.typing(&jid(CHAT_JID), true)
        .await
        .expect("typing is not a receipt");
    rejected(conn.mark_unread(&jid(CHAT_JID)).await);
    let kinds: Vec<_> = outbox(&f).await.into_iter().map(|r| r.kind).collect();
    assert_eq!(kinds, ["text", "typing"], "nothing rejected was recorded");
}

#[tokio::test]
async fn edits_need_an_own_recent_message_with_text() {
    let f = steady().await;
    let conn = linked_connection(&f).await;
    let original = conn.send(text("first")).await.expect("send");
    let edit = conn
        .send(edit_of(CHAT_JID, &original.message_id, "second"))
        .await
        .expect("edit");
    assert_eq!(edit.kind, "edit");
    assert_ne!(edit.message_id, original.message_id);
    let last = outbox(&f).await.pop().expect("edit recorded");
    assert_eq!(
        last.payload,
        json!({"body": "second", "targetId": original.message_id.as_str()})
    );

    assert!(
        rejected(conn.send(edit_of(CHAT_JID, &id("3EB0UNKNOWN"), "x")).await)
            .contains("not sent by this session")
    );
    assert!(
        rejected(
            conn.send(edit_of("999999999999999@lid", &original.message_id, "x"))
                .await
        )
        .contains("not sent by this session")
    );
    f.db.record_outbox(NewOutboxEntry {
        client_id: "c1".into(),
        message_id: "3EB0OLD".into(),
        to_jid: CHAT_JID.into(),
        kind: "text".into(),
        payload: json!({"body": "old"}),
        at: Utc::now() - chrono::Duration::minutes(16),
    })
    .await
    .expect("seed");
    assert!(
        rejected(conn.send(edit_of(CHAT_JID, &id("3EB0OLD"), "late")).await).contains("15 minutes")
    );
    let poll = Outgoing {
        content: Content::Poll {
            name: "q".into(),
            options: vec!["a".into(), "b".into()],
            selectable_count: 1,
        },
        ..text("")
    };
    let poll = conn.send(poll).await.expect("poll");
    assert!(
        rejected(conn.send(edit_of(CHAT_JID, &poll.message_id, "x")).await)
            .contains("cannot be edited")
    );
}

#[tokio::test]
async fn revoking_others_messages_works_in_groups_only() {
    let f = steady().await;
    let conn = linked_connection(&f).await;
    let theirs = MessageRef {
        id: id("3EB0THEIRS"),
        from_me: false,
    };
    let chat = jid(CHAT_JID);
    assert!(rejected(conn.revoke(&chat, &theirs).await).contains("own messages"));
    let group = jid("120363025246125486@g.us");
    assert_eq!(
        conn.revoke(&group, &theirs)
            .await
            .expect("admin revoke")
            .kind,
        "revoke"
    );
    let mine = MessageRef {
        id: id("3EB0MINE"),
        from_me: true,
    };
    conn.revoke(&chat, &mine).await.expect("own revoke");
    conn.delete_for_me(&chat, &theirs)
        .await
        .expect("delete for me");
    let rows = outbox(&f).await;
    let last = rows.last().expect("recorded");
    assert_eq!(last.kind, "delete_for_me");
    assert_eq!(
        last.payload,
        json!({"fromMe": false, "targetId": "3EB0THEIRS"})
    );
    let reaction = Outgoing {
        content: Content::Reaction {
            target_id: theirs.id.clone(),
            emoji: "👍".into(),
            target_from_me: false,
        },
        ..text("")
    };
    let reaction = conn.send(reaction).await.expect("react");
    assert_eq!(reaction.kind, "reaction");
}

#[tokio::test]
async fn unpaired_and_closed_connections_do_not_send() {
    let f = steady().await;
    let (conn, mut events) = connect(&f, "c1", 1).await;
    next_qr(&mut events).await;
    assert_eq!(conn.send(text("x")).await, Err(NetworkError::NotPaired));
    linked(&f, "c1", &mut events).await;
    conn.close().await;
    assert!(matches!(
        conn.send(text("x")).await,
        Err(NetworkError::Unreachable(_))
    ));
    assert!(outbox(&f).await.is_empty());
}

#[tokio::test]
async fn phones_resolve_to_their_lid_when_on_the_network() {
    let f = steady().await;
    let conn = linked_connection(&f).await;
    let known =
        f.db.upsert_phone("4917600000009", PhonePatch::default())
            .await
            .expect("phone");
    assert_eq!(
        conn.lid_for_phone(&phone("4917600000009")).await,
        Ok(Some(known.lid))
    );
    assert_eq!(conn.lid_for_phone(&phone("4917600000008")).await, Ok(None));
    let away = PhonePatch {
        on_network: Some(false),
        ..PhonePatch::default()
    };
    f.db.upsert_phone("4917600000009", away)
        .await
        .expect("phone");
    assert_eq!(conn.lid_for_phone(&phone("4917600000009")).await, Ok(None));
}

#[tokio::test]
async fn concurrent_sends_use_each_armed_fault_once_and_write_the_rest() {
    let f = steady().await;
    let conn: std::sync::Arc<dyn Connection> = linked_connection(&f).await.into();
    let fault = SandboxOp::Fault {
        op: "send".into(),
        count: 3,
    };
    assert_eq!(f.network.control("c1", fault).await, Ok(Reply::Done));
    let sends = (0..60).map(|i| {
        let conn = std::sync::Arc::clone(&conn);
        tokio::spawn(async move { conn.send(text(&format!("m{i}"))).await })
    });
    let mut faulted = 0;
    let mut ids = std::collections::HashSet::new();
    for send in futures::future::join_all(sends).await {
        match send.expect("send task") {
            Ok(sent) => assert!(ids.insert(sent.message_id.into_string())),
            Err(NetworkError::Rejected(why)) => {
                assert_eq!(why, "sandbox fault");
                faulted += 1;
            }
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(faulted, 3);
    let written = outbox(&f).await;
    assert_eq!(written.len(), 57);
    let stored: std::collections::HashSet<String> =
        written.into_iter().map(|e| e.message_id).collect();
    assert_eq!(stored, ids);
    assert!(!f.db.consume_fault("c1", "send").await.expect("db"));
}

#[tokio::test]
async fn a_fault_armed_under_an_earlier_owner_fails_the_first_send_here() {
    let f = steady().await;
    f.db.arm_fault("c1", "send", 1)
        .await
        .expect("armed before this process");
    let conn = linked_connection(&f).await;
    assert_eq!(rejected(conn.send(text("x")).await), "sandbox fault");
    conn.send(text("y")).await.expect("the fault was used up");
    arm(&f, "send", 1).await;
    assert_eq!(rejected(conn.send(text("z")).await), "sandbox fault");
    let bodies: Vec<_> = outbox(&f)
        .await
        .into_iter()
        .map(|r| r.payload["body"].clone())
        .collect();
    assert_eq!(bodies, [json!("y")]);
}
