//! Pure conversion of a normalized event into hosted-history writes: which
//! `messageType` it is stored as, what goes into `extras`, and which stored
//! message a reaction, edit, revoke or vote changes.
use chrono::{DateTime, Utc};
use parley_contract::event::Envelope;
use parley_shared::db::history::{
    Change, MessageMedia, NewMediaFile, NewMessage, RoomFacts, Target, Write,
};
use serde_json::{Map, Value, json};

/// How an event type is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A new row of this `messageType`.
    Message(&'static str),
    /// A change of an earlier row.
    Update,
}

/// The spec's `messageType` of an event type, or that it updates an earlier message.
pub fn kind(event_type: &str) -> Option<Kind> {
    Some(match event_type {
        "text" => Kind::Message("chat"),
        "image" => Kind::Message("image"),
        "video" => Kind::Message("video"),
        "audio" => Kind::Message("audio"),
        "document" => Kind::Message("document"),
        "sticker" => Kind::Message("sticker"),
        "contact" => Kind::Message("contact"),
        "location" => Kind::Message("location"),
        "poll_creation" => Kind::Message("poll"),
        "vote_update" => Kind::Message("vote_update"),
        "interactive" => Kind::Message("interactive"),
        "interactive_reply" => Kind::Message("interactive_reply"),
        "reaction" | "edit" | "revoke" => Kind::Update,
        _ => return None,
    })
}

/// The event type a stored `messageType` came from (for quoted previews).
pub fn event_type(message_type: &str) -> &str {
    match message_type {
        "chat" => "text",
        "poll" => "poll_creation",
        other => other,
    }
}

/// The event's time, or now when it is not RFC 3339.
pub fn sent_at(e: &Envelope) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(&e.timestamp)
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|_| Utc::now())
}

/// The user-part of a JID (`123@lid` -> `123`, `123:4@s.whatsapp.net` -> `123`).
fn user_part(jid: &str) -> &str {
    let user = jid.split('@').next().unwrap_or(jid);
    user.split(':').next().unwrap_or(user)
}

/// Who sent the event, as a JID: this session, the group participant, or the contact.
pub fn sender(e: &Envelope) -> String {
    if e.from_me {
        if e.my_lid.is_empty() {
            String::new()
        } else {
            format!("{}@lid", e.my_lid)
        }
    } else if let Some(g) = e.group.as_ref().filter(|g| !g.participant.is_empty()) {
        g.participant.clone()
    } else {
        e.remote_jid.clone()
    }
}

/// The user-part that reacted or voted.
fn actor(e: &Envelope) -> String {
    if e.from_me {
        return e.my_lid.clone();
    }
    match e.group.as_ref().filter(|g| !g.participant.is_empty()) {
        Some(g) => user_part(&g.participant).to_string(),
        None => e.client_lid.clone(),
    }
}

fn target(e: &Envelope, message_id: &str) -> Target {
    Target {
        client_id: e.client_id.clone(),
        chat_room_id: e.chat_room_id.clone(),
        message_id: message_id.to_string(),
    }
}

/// `extras`: the webhook's per-type objects (without media download secrets),
/// `forwarded`, `mentions`, `group`, `quoted` and `meta`.
pub fn extras(e: &Envelope) -> Value {
    let mut x = Map::new();
    let mut put = |key: &str, v: Option<Value>| {
        if let Some(v) = v.filter(|v| !v.is_null()) {
            x.insert(key.to_string(), v);
        }
    };
    put("poll", e.poll.as_ref().map(to_value));
    put("pollVote", e.poll_vote.as_ref().map(to_value));
    put("interactive", e.interactive.as_ref().map(to_value));
    put("contact", e.contact.as_ref().map(to_value));
    put("location", e.location.as_ref().map(to_value));
    put("group", e.group.as_ref().map(to_value));
    put("quoted", e.quoted.as_ref().map(to_value));
    put("meta", e.meta.as_ref().map(to_value));
    if let Some(m) = &e.media {
        put(
            "media",
            Some(json!({"caption": m.info.caption, "ptt": m.info.ptt, "mediaType": m.media_type})),
        );
    }
    x.insert("forwarded".into(), Value::Bool(e.is_forwarded));
    x.insert("mentions".into(), json!(e.mentions));
    Value::Object(x)
}

/// A message stored without its file says why in `extras.media.notStored`.
pub fn not_stored(writes: &mut [Write], why: &str) {
    for write in writes {
        if let Write::Message(m) = write
            && let Some(extras) = m.extras.as_object_mut()
        {
            let media = extras.entry("media").or_insert_with(|| json!({}));
            if let Some(media) = media.as_object_mut() {
                media.insert("notStored".into(), Value::String(why.to_string()));
            }
        }
    }
}

/// A per-type object as JSON.
fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// The writes of a message event (`media_file`: the stored file, when there is one).
pub fn message_writes(
    e: &Envelope,
    message_type: &'static str,
    media_file: Option<NewMediaFile>,
) -> Vec<Write> {
    let media = e.media.as_ref().map(|m| MessageMedia {
        mime_type: m.info.mime_type.clone(),
        media_type: m.media_type.clone(),
        file_name: m.info.file_name.clone(),
        file_size: if m.file_size > 0 {
            m.file_size
        } else {
            media_file.as_ref().map_or(0, |f| f.file_size)
        },
    });
    let download_url = media_file
        .as_ref()
        .map(|f| f.url.clone())
        .unwrap_or_else(|| {
            e.media
                .as_ref()
                .map(|m| m.download_url.clone())
                .unwrap_or_default()
        });
    let row = NewMessage {
        client_id: e.client_id.clone(),
        org_id: e.org_id.clone(),
        chat_room_id: e.chat_room_id.clone(),
        message_id: e.message_id.clone(),
        room: RoomFacts {
            name: if e.is_group {
                e.group
                    .as_ref()
                    .map(|g| g.subject.clone())
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| e.remote_name.clone())
            } else if !e.remote_name.is_empty() {
                e.remote_name.clone()
            } else if !e.from_me {
                e.push_name.clone()
            } else {
                String::new()
            },
            my_lid: e.my_lid.clone(),
            client_lid: e.client_lid.clone(),
            is_group: e.is_group,
            remote_jid: e.remote_jid.clone(),
            remote_phone: e.remote_phone.clone(),
            avatar_url: e.avatar_url.clone(),
        },
        body: e.body.clone(),
        message_type: message_type.to_string(),
        from_me: e.from_me,
        pushname: e.push_name.clone(),
        sender: sender(e),
        sent_at: sent_at(e),
        from_ai: e.meta.as_ref().is_some_and(|m| m.from_ai),
        media,
        download_url,
        extras: extras(e),
        media_file,
        activity: message_type != "vote_update",
        unread: !e.from_history,
    };
    let mut writes = vec![Write::Message(Box::new(row))];
    if let Some(v) = &e.poll_vote
        && !v.poll_message_id.is_empty()
    {
        writes.push(Write::Update {
            target: target(e, &v.poll_message_id),
            change: Change::Vote {
                voter: actor(e),
                selected_options: v.selected_options.clone(),
                selected_hashes: v.selected_hashes.clone(),
            },
        });
    }
    writes
}

/// The write of a reaction, edit or revoke; `None` when the event names no target.
pub fn update_write(e: &Envelope) -> Option<Write> {
    let (target_id, change) = match e.kind.as_str() {
        "reaction" => {
            let r = e.reaction.as_ref()?;
            (
                r.target_id.as_str(),
                Change::React {
                    reactor: actor(e),
                    emoji: r.emoji.clone(),
                },
            )
        }
        "edit" => {
            let ed = e.edit.as_ref()?;
            (
                ed.target_id.as_str(),
                Change::Edit {
                    edit_id: e.message_id.clone(),
                    body: ed.body.clone(),
                    at: sent_at(e),
                },
            )
        }
        "revoke" => (
            e.revoke.as_ref()?.target_id.as_str(),
            Change::Revoke { at: sent_at(e) },
        ),
        _ => return None,
    };
    (!target_id.is_empty()).then(|| Write::Update {
        target: target(e, target_id),
        change,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use parley_contract::event::{Group, Media, Meta, PollVote, Reaction};
    use parley_model::media::{MediaDownload, MediaInfo};

    fn envelope(kind: &str) -> Envelope {
        Envelope {
            kind: kind.into(),
            client_id: "shop".into(),
            org_id: "org1".into(),
            timestamp: "2026-01-02T03:04:05Z".into(),
            chat_room_id: "shop-111-222".into(),
            my_lid: "111".into(),
            client_lid: "222".into(),
            remote_jid: "222@lid".into(),
            push_name: "Ann".into(),
            message_id: "3EB0A".into(),
            body: "hi".into(),
            ..Default::default()
        }
    }

    #[test]
    fn every_event_type_has_a_spec_message_type() {
        for t in parley_contract::event::TYPES {
            assert!(kind(t).is_some(), "{t}");
        }
        assert_eq!(kind("text"), Some(Kind::Message("chat")));
        assert_eq!(kind("poll_creation"), Some(Kind::Message("poll")));
        assert_eq!(kind("reaction"), Some(Kind::Update));
        assert_eq!(kind("nonsense"), None);
        assert_eq!(event_type("chat"), "text");
    }

    #[test]
    fn a_text_becomes_one_row_with_room_facts() {
        let mut e = envelope("text");
        e.from_me = true;
        e.meta = Some(Meta {
            from_ai: true,
            ..Default::default()
        });
        let writes = message_writes(&e, "chat", None);
        let [Write::Message(m)] = writes.as_slice() else {
            panic!("{writes:?}")
        };
        assert_eq!(m.message_type, "chat");
        assert!(m.from_ai && m.from_me && m.activity);
        assert_eq!(m.sender, "111@lid");
        assert_eq!(m.sent_at.to_rfc3339(), "2026-01-02T03:04:05+00:00");
        assert_eq!(m.extras["meta"]["fromAI"], true);
        assert_eq!(m.extras["forwarded"], false);
        assert_eq!(m.room.client_lid, "222");
    }

    #[test]
    fn media_secrets_stay_out_of_history() {
        let mut e = envelope("image");
        e.media = Some(Media {
            media_type: "image".into(),
            info: MediaInfo {
                mime_type: "image/png".into(),
                file_name: "a.png".into(),
                ..Default::default()
            },
            file_size: 3,
            download: MediaDownload {
                media_key: "SECRETKEY".into(),
                ..Default::default()
            },
            ..Default::default()
        });
        let writes = message_writes(&e, "image", None);
        let Write::Message(m) = &writes[0] else {
            panic!()
        };
        assert!(!format!("{:?}", m.extras).contains("SECRETKEY"));
        assert_eq!(m.media.as_ref().map(|x| x.file_size), Some(3));
    }

    #[test]
    fn reactions_in_groups_name_the_participant() {
        let mut e = envelope("reaction");
        e.is_group = true;
        e.group = Some(Group {
            participant: "333@lid".into(),
            ..Default::default()
        });
        e.reaction = Some(Reaction {
            target_id: "3EB0T".into(),
            emoji: "👍".into(),
        });
        let Some(Write::Update { target, change }) = update_write(&e) else {
            panic!()
        };
        assert_eq!(target.message_id, "3EB0T");
        assert_eq!(
            change,
            Change::React {
                reactor: "333".into(),
                emoji: "👍".into()
            }
        );
        e.reaction = None;
        assert!(update_write(&e).is_none());
    }

    #[test]
    fn a_vote_is_stored_and_updates_its_poll() {
        let mut e = envelope("vote_update");
        e.poll_vote = Some(PollVote {
            poll_message_id: "3EB0P".into(),
            resolved: true,
            selected_options: vec!["Pizza".into()],
            selected_hashes: vec!["ab".into()],
        });
        let writes = message_writes(&e, "vote_update", None);
        assert_eq!(writes.len(), 2);
        let Write::Message(m) = &writes[0] else {
            panic!()
        };
        assert!(!m.activity);
        assert!(matches!(&writes[1], Write::Update { target, .. } if target.message_id == "3EB0P"));
    }
}
