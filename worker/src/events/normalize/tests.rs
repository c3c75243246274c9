//! Every event type, inbound and `fromMe`, direct and group.
use chrono::TimeZone;
use parley_model::media::{MediaDownload, MediaInfo};
use serde_json::json;

use super::*;
use crate::events::option_hash;
use crate::network::{Jid, MessageId};
use parley_model::ids::ClientId;
use parley_model::inbound::QuotedRef;
use parley_model::media::MediaKind;

const ME: &str = "111111111111111";
const THEM: &str = "222222222222222";
const GROUP: &str = "120363000000000001@g.us";

fn shop1() -> ClientId {
    ClientId::parse("shop1").expect("a clientId")
}

fn facts(groups: bool) -> SessionFacts {
    SessionFacts {
        client_id: shop1(),
        org_id: "org-1".into(),
        my_lid: ME.into(),
        enable_group_ai: groups,
        events: Vec::new(),
    }
}

fn jid(raw: &str) -> Jid {
    Jid::parse(raw).expect("a JID")
}

fn mid(raw: &str) -> MessageId {
    MessageId::new(raw).expect("a message id")
}

fn message(content: Content, from_me: bool, chat: &str) -> InboundMessage {
    let group = chat.ends_with("@g.us");
    InboundMessage {
        id: mid("3EB0AAAA"),
        chat: jid(chat),
        chat_lid: if group { String::new() } else { THEM.into() },
        sender: jid(&format!("{}@lid", if from_me { ME } else { THEM })),
        sender_phone: Some("4915100000001".into()),
        from_me,
        push_name: "Ana".into(),
        group_subject: group.then(|| "Team".to_string()),
        timestamp: chrono::Utc
            .with_ymd_and_hms(2026, 11, 22, 10, 0, 0)
            .unwrap(),
        content,
        quoted: None,
        mentions: vec![],
        is_forwarded: false,
    }
}

fn contents() -> Vec<(&'static str, Content, &'static str)> {
    let download = MediaDownload {
        direct_path: "/v/t62/abc".into(),
        media_key: "a2V5".into(),
        file_sha256: "aa".into(),
        file_enc_sha256: "bb".into(),
        file_length: 42,
    };
    let media = |kind| Content::Media {
        kind,
        info: MediaInfo {
            mime_type: "image/jpeg".into(),
            file_name: "f".into(),
            caption: "look".into(),
            ptt: false,
            view_once: false,
        },
        download: download.clone(),
    };
    vec![
        ("text", Content::Text { body: "hi".into() }, "hi"),
        ("image", media(MediaKind::Image), "look"),
        ("video", media(MediaKind::Video), "look"),
        ("audio", media(MediaKind::Audio), "look"),
        ("document", media(MediaKind::Document), "look"),
        ("sticker", media(MediaKind::Sticker), "look"),
        (
            "poll_creation",
            Content::Poll {
                name: "Lunch?".into(),
                options: vec!["A".into(), "B".into()],
                selectable_count: 1,
            },
            "Lunch?",
        ),
        (
            "vote_update",
            Content::Vote {
                poll_message_id: mid("P1"),
                selected_hashes: vec![option_hash("B")],
            },
            "B",
        ),
        (
            "interactive_reply",
            Content::InteractiveReply {
                target_id: Some(mid("M1")),
                button_id: "yes".into(),
                display_text: "Yes".into(),
            },
            "Yes",
        ),
        (
            "contact",
            Content::Contact {
                display_name: "Bo".into(),
                vcard: "BEGIN:VCARD".into(),
            },
            "Bo",
        ),
        (
            "location",
            Content::Location {
                latitude: 52.5,
                longitude: 13.4,
                name: "Office".into(),
                address: "Street 1".into(),
                live: false,
            },
            "Office",
        ),
        (
            "reaction",
            Content::Reaction {
                target_id: mid("M1"),
                emoji: "👍".into(),
            },
            "👍",
        ),
        (
            "edit",
            Content::Edit {
                target_id: mid("M1"),
                body: "fixed".into(),
            },
            "fixed",
        ),
        (
            "revoke",
            Content::Revoke {
                target_id: mid("M1"),
            },
            "",
        ),
    ]
}

/// The per-type object of each type, and none of the others.
fn per_type_object(kind: &str) -> Option<&'static str> {
    match kind {
        "image" | "video" | "audio" | "document" | "sticker" => Some("media"),
        "poll_creation" => Some("poll"),
        "vote_update" => Some("pollVote"),
        "interactive_reply" => Some("interactive"),
        "contact" | "location" | "reaction" | "edit" | "revoke" => Some(match kind {
            "contact" => "contact",
            "location" => "location",
            "reaction" => "reaction",
            "edit" => "edit",
            _ => "revoke",
        }),
        _ => None,
    }
}

const OBJECTS: &[&str] = &[
    "media",
    "poll",
    "pollVote",
    "interactive",
    "contact",
    "location",
    "reaction",
    "edit",
    "revoke",
];

#[test]
fn every_type_inbound_and_from_me_direct_and_group() {
    let extras = Extras {
        poll_options: Some(vec!["A".into(), "B".into()]),
        meta: Some(json!({"fromAI": true, "userId": "u1"})),
        ..Extras::default()
    };
    for (kind, content, body) in contents() {
        for from_me in [false, true] {
            for chat in [format!("{THEM}@lid"), GROUP.to_string()] {
                let msg = message(content.clone(), from_me, &chat);
                let e = normalize(&facts(true), &msg, &extras).expect("delivered");
                let v = serde_json::to_value(&e).unwrap();
                let case = format!("{kind} fromMe={from_me} chat={chat}");
                assert_eq!(v["type"], kind, "{case}");
                assert_eq!(v["event"], "message.received", "{case}");
                assert_eq!(v["body"], body, "{case}");
                assert_eq!(v["fromMe"], from_me, "{case}");
                assert_eq!(v["clientId"], "shop1");
                assert_eq!(v["orgId"], "org-1");
                assert_eq!(v["myLid"], ME);
                assert_eq!(v["timestamp"], "2026-11-22T10:00:00Z");
                assert_eq!(v["messageId"], "3EB0AAAA");
                for object in OBJECTS {
                    assert_eq!(
                        v.get(*object).is_some(),
                        per_type_object(kind) == Some(*object),
                        "{case}: {object}"
                    );
                }
                if chat == GROUP {
                    assert_eq!(v["isGroup"], true);
                    assert_eq!(v["remoteJid"], GROUP);
                    assert_eq!(v["chatRoomId"], format!("shop1-{ME}-120363000000000001"));
                    assert_eq!(v["group"]["subject"], "Team");
                    assert_eq!(v["group"]["participant"], msg.sender.as_str());
                } else {
                    assert_eq!(v["isGroup"], false);
                    assert_eq!(v["remoteJid"], format!("{THEM}@lid"));
                    assert_eq!(v["clientLid"], THEM);
                    assert_eq!(v["chatRoomId"], format!("shop1-{ME}-{THEM}"));
                    assert!(v.get("group").is_none());
                }
                assert_eq!(
                    v.get("meta").is_some(),
                    from_me,
                    "{case}: meta only on fromMe"
                );
                if from_me {
                    assert_eq!(v["meta"]["fromAI"], true);
                    assert_eq!(v["meta"]["raw"]["userId"], "u1");
                }
                if matches!(kind, "reaction" | "edit" | "revoke") {
                    let object = per_type_object(kind).unwrap();
                    assert_eq!(v[object]["targetId"], "M1", "{case}");
                }
            }
        }
    }
}

#[test]
fn media_carries_download_parameters_never_bytes() {
    let (_, content, _) = contents()
        .into_iter()
        .find(|(k, _, _)| *k == "image")
        .unwrap();
    let e = normalize(
        &facts(false),
        &message(content, false, &format!("{THEM}@lid")),
        &Extras::default(),
    )
    .unwrap();
    let media = serde_json::to_value(e.media.unwrap()).unwrap();
    assert_eq!(media["download"]["directPath"], "/v/t62/abc");
    assert_eq!(media["download"]["mediaKey"], "a2V5");
    assert_eq!(media["fileSize"], 42);
}

#[test]
fn votes_resolve_or_carry_hashes() {
    let vote = Content::Vote {
        poll_message_id: mid("P1"),
        selected_hashes: vec![option_hash("B")],
    };
    let msg = message(vote, false, &format!("{THEM}@lid"));
    let unresolved = normalize(&facts(false), &msg, &Extras::default())
        .unwrap()
        .poll_vote
        .unwrap();
    assert!(!unresolved.resolved);
    assert!(unresolved.selected_options.is_empty());
    assert_eq!(
        unresolved.selected_hashes,
        vec![hex::encode(option_hash("B"))]
    );
    let extras = Extras {
        poll_options: Some(vec!["A".into(), "B".into()]),
        ..Extras::default()
    };
    let resolved = normalize(&facts(false), &msg, &extras)
        .unwrap()
        .poll_vote
        .unwrap();
    assert!(resolved.resolved);
    assert_eq!(resolved.selected_options, vec!["B".to_string()]);
}

#[test]
fn groups_only_when_enabled_and_broadcasts_never() {
    let text = Content::Text { body: "hi".into() };
    assert!(
        normalize(
            &facts(false),
            &message(text.clone(), false, GROUP),
            &Extras::default()
        )
        .is_none()
    );
    for chat in ["status@broadcast", "12345@broadcast", "999@newsletter"] {
        assert!(
            normalize(
                &facts(true),
                &message(text.clone(), false, chat),
                &Extras::default()
            )
            .is_none(),
            "{chat}"
        );
    }
}

#[test]
fn a_status_is_an_event_of_its_author_only_when_turned_on() {
    let mut msg = message(
        Content::Text {
            body: "new arrivals".into(),
        },
        false,
        "status@broadcast",
    );
    msg.chat_lid = String::new();
    let mut on = facts(false);
    on.events = vec!["status".into()];
    let e = normalize(&on, &msg, &Extras::default()).expect("a status event");
    assert_eq!(
        (e.event.as_str(), e.kind.as_str()),
        ("status.received", "status")
    );
    assert_eq!(e.status.as_ref().map(|s| s.kind.as_str()), Some("text"));
    assert_eq!(e.body, "new arrivals");
    assert_eq!(e.remote_jid, format!("{THEM}@lid"));
    assert_eq!(e.client_lid, THEM);
    assert!(!e.is_group);
    assert_eq!(event_id(&shop1(), &msg), "sts_shop1_3EB0AAAA");
    // Group messages stay off: a status is not one.
    assert!(normalize(&facts(true), &msg, &Extras::default()).is_none());
}

#[test]
fn quoted_mentions_and_forwarding_are_carried() {
    let mut msg = message(
        Content::Text {
            body: "@222 yes".into(),
        },
        false,
        &format!("{THEM}@lid"),
    );
    msg.quoted = Some(QuotedRef {
        message_id: mid("Q1"),
        participant: None,
        body: "lunch?".into(),
        kind: "text".into(),
    });
    msg.mentions = vec![THEM.into()];
    msg.is_forwarded = true;
    let v =
        serde_json::to_value(normalize(&facts(false), &msg, &Extras::default()).unwrap()).unwrap();
    assert_eq!(
        v["quoted"],
        json!({"messageId": "Q1", "body": "lunch?", "type": "text"})
    );
    assert_eq!(v["mentions"], json!([THEM]));
    assert_eq!(v["isForwarded"], true);
}

#[test]
fn a_delete_sent_under_its_targets_id_has_an_event_id_of_its_own() {
    let text = message(
        Content::Text { body: "hi".into() },
        true,
        "222222222222222@lid",
    );
    assert_eq!(event_id(&shop1(), &text), "msg_shop1_3EB0AAAA");
    let delete = Content::Revoke {
        target_id: mid("3EB0AAAA"),
    };
    let mine = message(delete.clone(), true, "222222222222222@lid");
    assert_eq!(event_id(&shop1(), &mine), "msg_shop1_3EB0AAAA_revoke");
    // A delete with an id of its own (the sandbox's, or a contact's) keeps
    // the usual one.
    let theirs = message(delete, false, "222222222222222@lid");
    assert_eq!(event_id(&shop1(), &theirs), "msg_shop1_3EB0AAAA");
    let other = message(
        Content::Revoke {
            target_id: mid("3EB0BBBB"),
        },
        true,
        "222222222222222@lid",
    );
    assert_eq!(event_id(&shop1(), &other), "msg_shop1_3EB0AAAA");
}

#[test]
fn a_groups_member_change_is_an_event_of_its_own_only_when_turned_on() {
    let change = Content::GroupChange {
        action: parley_model::inbound::GroupAction::Promote,
        participants: vec![jid("100000000000009@lid")],
    };
    let msg = message(change, false, GROUP);
    // Off by default, whether group messages are delivered or not.
    for groups in [false, true] {
        assert!(normalize(&facts(groups), &msg, &Extras::default()).is_none());
    }
    // On: delivered also while group messages are not.
    let mut on = facts(false);
    on.events = vec!["group_participants".into()];
    let e = normalize(&on, &msg, &Extras::default()).expect("an event");
    assert_eq!(
        (e.event.as_str(), e.kind.as_str(), e.body.as_str()),
        ("group.participants", "group_participants", "")
    );
    let v = serde_json::to_value(&e).unwrap();
    assert_eq!(
        v["groupChange"],
        serde_json::json!({"action": "promote", "participants": ["100000000000009@lid"]})
    );
    assert_eq!(v["group"]["jid"], GROUP);
    assert_eq!(
        v["group"]["participant"],
        format!("{THEM}@lid"),
        "who made it"
    );
    assert!(e.is_group);
    // Its id is never a message's.
    assert_eq!(event_id(&shop1(), &msg), "grp_shop1_3EB0AAAA");
}

#[test]
fn a_groups_settings_change_is_an_event_of_its_own_only_when_turned_on() {
    use parley_model::inbound::GroupSetting;
    let msg = message(
        Content::GroupUpdate(GroupSetting::Subject("Team B".into())),
        false,
        GROUP,
    );
    for groups in [false, true] {
        assert!(normalize(&facts(groups), &msg, &Extras::default()).is_none());
    }
    // Another opt-in event is not this one.
    let mut members_only = facts(true);
    members_only.events = vec!["group_participants".into()];
    assert!(normalize(&members_only, &msg, &Extras::default()).is_none());
    let mut on = facts(false);
    on.events = vec!["group_update".into()];
    let e = normalize(&on, &msg, &Extras::default()).expect("an event");
    assert_eq!(
        (e.event.as_str(), e.kind.as_str(), e.body.as_str()),
        ("group.update", "group_update", "")
    );
    assert_eq!(event_id(&shop1(), &msg), "grpu_shop1_3EB0AAAA");
    // Exactly the setting that changed, by its own name and type.
    for (setting, want) in [
        (
            GroupSetting::Subject("Team B".into()),
            json!({"subject": "Team B"}),
        ),
        (
            GroupSetting::Description(String::new()),
            json!({"description": ""}),
        ),
        (GroupSetting::Announce(true), json!({"announce": true})),
        (GroupSetting::Locked(false), json!({"locked": false})),
        (
            GroupSetting::Ephemeral(86_400),
            json!({"ephemeralSeconds": 86400}),
        ),
    ] {
        let msg = message(Content::GroupUpdate(setting), false, GROUP);
        let e = normalize(&on, &msg, &Extras::default()).expect("an event");
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["groupUpdate"], want);
        assert_eq!(
            v["group"]["participant"],
            format!("{THEM}@lid"),
            "who made it"
        );
    }
}

#[test]
fn a_receipt_is_an_event_of_its_own_only_when_turned_on() {
    let receipt = Content::Receipt {
        status: parley_model::inbound::ReceiptStatus::Read,
        message_ids: vec![mid("3EB0AAAA"), mid("3EB0BBBB")],
    };
    let msg = message(receipt, false, &format!("{THEM}@lid"));
    assert!(normalize(&facts(true), &msg, &Extras::default()).is_none());
    let mut on = facts(false);
    on.events = vec!["receipt".into()];
    let e = normalize(&on, &msg, &Extras::default()).expect("an event");
    assert_eq!(
        (e.event.as_str(), e.kind.as_str()),
        ("message.receipt", "receipt")
    );
    let v = serde_json::to_value(&e).unwrap();
    assert_eq!(
        v["receipt"],
        json!({"status": "read", "messageIds": ["3EB0AAAA", "3EB0BBBB"]})
    );
    assert_eq!(v["clientLid"], THEM);
    // One per reader, status and message; never the message's own.
    assert_eq!(
        event_id(&shop1(), &msg),
        format!("rcpt_shop1_read_{THEM}_3EB0AAAA")
    );
}

#[test]
fn typing_is_an_event_of_its_own_only_when_turned_on_even_in_a_group() {
    let typing = Content::Typing {
        state: parley_model::inbound::TypingState::Recording,
    };
    let msg = message(typing, false, GROUP);
    // Group messages on do not bring chat states.
    assert!(normalize(&facts(true), &msg, &Extras::default()).is_none());
    let mut on = facts(false);
    on.events = vec!["typing".into()];
    let e = normalize(&on, &msg, &Extras::default()).expect("an event");
    assert_eq!(
        (e.event.as_str(), e.kind.as_str()),
        ("chat.typing", "typing")
    );
    let v = serde_json::to_value(&e).unwrap();
    assert_eq!(v["typing"], json!({"state": "recording"}));
    assert_eq!(v["body"], "");
    assert_eq!(
        v["group"]["participant"],
        format!("{THEM}@lid"),
        "who types"
    );
    assert_eq!(event_id(&shop1(), &msg), "typ_shop1_3EB0AAAA");
}

#[test]
fn presence_is_an_event_of_its_own_only_when_turned_on() {
    let seen = chrono::DateTime::parse_from_rfc3339("2026-11-29T18:04:23.5Z")
        .unwrap()
        .with_timezone(&chrono::Utc);
    let offline = Content::Presence {
        available: false,
        last_seen: Some(seen),
    };
    let msg = message(offline, false, &format!("{THEM}@lid"));
    assert!(normalize(&facts(true), &msg, &Extras::default()).is_none());
    let mut on = facts(false);
    on.events = vec!["presence".into()];
    let e = normalize(&on, &msg, &Extras::default()).expect("an event");
    assert_eq!(
        (e.event.as_str(), e.kind.as_str()),
        ("contact.presence", "presence")
    );
    let v = serde_json::to_value(&e).unwrap();
    assert_eq!(
        v["presence"],
        json!({"state": "unavailable", "lastSeen": "2026-11-29T18:04:23Z"})
    );
    assert_eq!(v["body"], "");
    assert_eq!(event_id(&shop1(), &msg), "prs_shop1_3EB0AAAA");
    let online = Content::Presence {
        available: true,
        last_seen: None,
    };
    let e = normalize(
        &on,
        &message(online, false, &format!("{THEM}@lid")),
        &Extras::default(),
    )
    .expect("an event");
    let v = serde_json::to_value(&e).unwrap();
    assert_eq!(v["presence"], json!({"state": "available"}), "no lastSeen");
}
