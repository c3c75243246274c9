//! `/sandbox/outbox` on the test network: what a session put on the network,
//! read back from the devices it reached. Messages are the copies the
//! session's own phone received of them (a linked device sends its phone a
//! copy of every message, naming the chat as the session addressed it:
//! that also covers a message to a number nobody registered, which reaches
//! no one else), else what the contacts' (and group members') devices
//! received from the session's device and decrypted; files downloaded and
//! hashed. Typing and read receipts are what the contacts' devices saw;
//! the account's presence, and the calls it rejected, what the session's
//! device said to the server.
//! Each entry has the sandbox's kind and payload.
use std::collections::HashSet;

use chrono::{DateTime, Utc};
use parley_contract::wire::sandbox::OutboxEntry;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use whatsapp_rust::waproto::whatsapp as wa;

use super::{SessionRef, World};
use parley_model::outgoing::STATUS_FONTS;
use whatsapp_rust::buffa::Enumeration as _;

/// The chat of status updates.
const STATUS_CHAT: &str = "status@broadcast";
use crate::kinds::received_file;
use crate::{Received, Relayed, Seen, Signal, TestDevice, WireNetwork};

impl World {
    /// What `session` sent, oldest first: to chat `to` only when given (a
    /// JID, a user-part or a `+phone`), from `since` on when given.
    pub async fn outbox(
        &self,
        session: &SessionRef,
        to: Option<&str>,
        since: Option<DateTime<Utc>>,
    ) -> Vec<OutboxEntry> {
        self.settle(session).await;
        let own = Own::of(self, session);
        let mut entries = Vec::new();
        let mut seen_ids = HashSet::new();
        let devices = self.devices().await;
        // The phone's copies first: their chat is the one the session named.
        for device in devices.iter().filter(|d| d.phone == session.phone) {
            for r in device.received() {
                let copy = own.is(&r.sender) && r.sender_device == session.device && r.from_me;
                if !copy || !seen_ids.insert(r.id.clone()) {
                    continue;
                }
                let (kind, payload) = message(&self.net, device, &r).await;
                entries.push(OutboxEntry {
                    message_id: r.id.clone(),
                    to: r.chat.clone(),
                    kind: kind.to_string(),
                    payload,
                    at: r.at,
                });
            }
            // What the account's companions changed in its app state (kept by
            // the server, read with the key the phone shared with them).
            match device.app_state_changes(&self.net) {
                Ok(changes) => {
                    let own = device.jid();
                    entries.extend(changes.iter().filter_map(|c| app_state_entry(c, &own)));
                }
                Err(e) => tracing::warn!(phone = %device.phone, error = %e,
                    "the account's app-state patches do not decrypt"),
            }
        }
        for device in devices {
            if device.phone == session.phone {
                continue;
            }
            let own_chat = format!("{}@s.whatsapp.net", device.phone);
            for r in device.received() {
                let from_session =
                    own.is(&r.sender) && r.sender_device == session.device && !r.from_me;
                if !from_session || !seen_ids.insert(r.id.clone()) {
                    continue;
                }
                let to = if r.chat.ends_with("@g.us") || r.chat == STATUS_CHAT {
                    r.chat.clone()
                } else {
                    own_chat.clone()
                };
                let (kind, payload) = message(&self.net, &device, &r).await;
                entries.push(OutboxEntry {
                    message_id: r.id.clone(),
                    to,
                    kind: kind.to_string(),
                    payload,
                    at: r.at,
                });
            }
            for s in device.seen() {
                if let Some(entry) = signal(&own, &own_chat, s) {
                    entries.push(entry);
                }
            }
        }
        let own_chat = format!("{}@s.whatsapp.net", session.phone);
        for said in self.network().presence_from(&session.phone, session.device) {
            let state = if said.available {
                "available"
            } else {
                "unavailable"
            };
            entries.push(OutboxEntry {
                message_id: String::new(),
                to: own_chat.clone(),
                kind: "presence".into(),
                payload: json!({ "state": state }),
                at: said.at,
            });
        }
        for signal in self.network().calls_from(&session.phone, session.device) {
            if signal.action == "reject" {
                entries.push(OutboxEntry {
                    message_id: String::new(),
                    to: format!("{}@s.whatsapp.net", signal.to),
                    kind: "call_reject".into(),
                    payload: json!({ "callId": signal.call_id }),
                    at: signal.at,
                });
            }
        }
        self.status_audiences(session, &mut entries).await;
        entries.retain(|e| since.is_none_or(|t| e.at >= t));
        if let Some(to) = to {
            let wanted = self.chats(to);
            entries.retain(|e| wanted.contains(&e.to));
        }
        entries.sort_by_key(|e| e.at);
        entries
    }

    /// Names the audience of each status update in `entries`: the LID JIDs
    /// of the accounts whose phones received it, sorted.
    async fn status_audiences(&self, session: &SessionRef, entries: &mut [OutboxEntry]) {
        let devices = self.devices().await;
        for entry in entries.iter_mut().filter(|e| e.to == STATUS_CHAT) {
            let mut audience: Vec<String> = devices
                .iter()
                .filter(|d| d.phone != session.phone)
                .filter(|d| d.received().iter().any(|r| r.id == entry.message_id))
                .map(|d| format!("{}@lid", self.lid(&d.phone)))
                .collect();
            audience.sort_unstable();
            if let Some(p) = entry.payload.as_object_mut() {
                p.insert("audience".into(), json!(audience));
            }
        }
    }

    /// Waits (at most [`SETTLE`]) until what the session's device sent the
    /// world's devices through the server reached them: every message
    /// decrypted, every read receipt and typing indicator seen.
    async fn settle(&self, session: &SessionRef) {
        let until = tokio::time::Instant::now() + SETTLE;
        let own = Own::of(self, session);
        loop {
            let devices = self.devices().await;
            let sent = self.network().relayed_from(&session.phone, session.device);
            let pending = devices.iter().any(|d| {
                let to_device = |r: &&Relayed| r.to == (d.phone.clone(), 0);
                let received = d.received();
                let seen = d.seen();
                let messages = sent
                    .iter()
                    .filter(to_device)
                    .filter(|r| r.kind == "message")
                    .any(|r| !received.iter().any(|m| m.id == r.id));
                let reads = sent
                    .iter()
                    .filter(to_device)
                    .filter(|r| r.kind == "receipt:read")
                    .any(|r| {
                        !seen.iter().any(|s| {
                            matches!(&s.signal, Signal::Receipt { kind, ids } if kind == "read" && ids.contains(&r.id))
                        })
                    });
                let typing_sent = sent
                    .iter()
                    .filter(to_device)
                    .filter(|r| r.kind == "chatstate")
                    .count();
                let typing_seen = seen
                    .iter()
                    .filter(|s| matches!(&s.signal, Signal::Typing { sender, .. } if own.is(sender)))
                    .count();
                messages || reads || typing_seen < typing_sent
            });
            if !pending || tokio::time::Instant::now() >= until {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// The chat JIDs `to` names: a JID itself; a user-part as a phone, LID
    /// or group; a `+phone` as its phone JID. An account's phone JID and LID
    /// JID name the same chat (a message to either is in it).
    fn chats(&self, to: &str) -> Vec<String> {
        let to = to.trim();
        let net = self.network();
        let account = |phone: &str| {
            let mut both = vec![format!("{phone}@s.whatsapp.net")];
            if let Some(lid) = net.lid_of(phone) {
                both.push(format!("{lid}@lid"));
            }
            both
        };
        if to.contains('@') {
            let (user, server) = to.split_once('@').unwrap_or((to, ""));
            return match server {
                // The network's own map: a LID's phone is its account's.
                "lid" => net
                    .phone_of_lid(user)
                    .map(|p| account(&p))
                    .unwrap_or_else(|| vec![to.to_string()]),
                "s.whatsapp.net" => account(user),
                _ => vec![to.to_string()],
            };
        }
        let user = to.trim_start_matches('+');
        let mut chats = account(user);
        chats.extend([format!("{user}@g.us"), format!("{user}@lid")]);
        if let Some(phone) = net.phone_of_lid(user) {
            chats.extend(account(&phone));
        }
        chats
    }
}

/// How long an outbox read waits for what the session sent to arrive.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(5);

/// The session's account as others see it: by phone number or by LID.
struct Own {
    phone: String,
    lid: String,
}

impl Own {
    fn of(world: &World, session: &SessionRef) -> Own {
        Own {
            phone: session.phone.clone(),
            lid: world.lid(&session.phone),
        }
    }

    /// Whether `jid` (a user JID, without device) is the session's account.
    fn is(&self, jid: &str) -> bool {
        let user = jid.split('@').next().unwrap_or(jid);
        user == self.phone || user == self.lid
    }
}

/// The outbox entry of an app-state change: a chat marked unread, a message
/// deleted for the account only, a label saved or deleted (to `own`, the
/// account's phone JID) or put on a chat or taken off (`None` for any other
/// change).
fn app_state_entry(change: &crate::app_state::Change, own: &str) -> Option<OutboxEntry> {
    let value = change.value.as_ref();
    let at = value
        .and_then(|v| v.timestamp)
        .and_then(DateTime::<Utc>::from_timestamp_millis)
        .unwrap_or_else(Utc::now);
    let (kind, chat, payload) = match change.index.as_slice() {
        [action, chat, ..] if action == "markChatAsRead" => {
            let read = value
                .and_then(|v| v.mark_chat_as_read_action.as_option())
                .and_then(|a| a.read);
            if read != Some(false) {
                return None;
            }
            ("unread", chat, json!({}))
        }
        [action, chat, id, from_me, ..] if action == "deleteMessageForMe" => (
            "delete_for_me",
            chat,
            json!({ "targetId": id, "fromMe": from_me == "1" }),
        ),
        [action, id] if action == "label_edit" => {
            let edit = value.and_then(|v| v.label_edit_action.as_option())?;
            let payload = if edit.deleted == Some(true) {
                json!({ "labelId": id, "deleted": true })
            } else {
                json!({ "labelId": id, "name": edit.name, "color": edit.color, "deleted": false })
            };
            ("label", &own.to_string(), payload)
        }
        [action, id, chat, ..] if action == "label_jid" => {
            let labeled = value
                .and_then(|v| v.label_association_action.as_option())
                .and_then(|a| a.labeled)?;
            (
                "chat_label",
                chat,
                json!({ "labelId": id, "labeled": labeled }),
            )
        }
        _ => return None,
    };
    Some(OutboxEntry {
        message_id: String::new(),
        to: chat.clone(),
        kind: kind.into(),
        payload,
        at,
    })
}

/// A typing indicator or read receipt the session's device sent, as `device`
/// (whose own chat is `own_chat`) saw it.
fn signal(own: &Own, own_chat: &str, s: Seen) -> Option<OutboxEntry> {
    let to = if s.chat.ends_with("@g.us") {
        s.chat.clone()
    } else {
        own_chat.to_string()
    };
    let (kind, payload) = match s.signal {
        Signal::Typing { sender, state } if own.is(&sender) => {
            ("typing", json!({ "composing": state == "composing" }))
        }
        Signal::Receipt { kind, ids } if kind == "read" && own.is(&s.chat) => {
            ("read", json!({ "messageIds": ids }))
        }
        _ => return None,
    };
    Some(OutboxEntry {
        message_id: String::new(),
        to,
        kind: kind.into(),
        payload,
        at: s.at,
    })
}

/// The outbox kind and payload of a message `device` received.
async fn message(net: &WireNetwork, device: &TestDevice, r: &Received) -> (&'static str, Value) {
    let m = &r.message;
    let (kind, mut payload) = if let Some(text) = m.conversation.as_deref() {
        ("text", json!({ "body": text }))
    } else if let Some(t) = m.extended_text_message.as_option() {
        let mut p = json!({ "body": t.text.clone().unwrap_or_default() });
        // A text status's look.
        if let Some(argb) = t.background_argb {
            p["backgroundColor"] = json!(format!("#{argb:08X}"));
        }
        let font = t.font.map(|f| f.to_i32()).and_then(|f| {
            STATUS_FONTS
                .iter()
                .find(|(_, n)| i64::from(*n) == i64::from(f))
        });
        if let Some((name, _)) = font {
            p["font"] = json!(name);
        }
        ("text", p)
    } else if received_file(r).is_some() {
        media(device, r).await
    } else if let Some(l) = m.location_message.as_option() {
        let mut p = json!({
            "latitude": l.degrees_latitude.unwrap_or_default(),
            "longitude": l.degrees_longitude.unwrap_or_default(),
        });
        put(&mut p, "name", l.name.as_deref());
        put(&mut p, "address", l.address.as_deref());
        ("location", p)
    } else if let Some(c) = m.contact_message.as_option() {
        (
            "contact",
            json!({ "displayName": c.display_name, "vcard": c.vcard }),
        )
    } else if let Some(p) = [
        &m.poll_creation_message,
        &m.poll_creation_message_v2,
        &m.poll_creation_message_v3,
    ]
    .into_iter()
    .find_map(|p| p.as_option())
    {
        let options: Vec<&str> = p
            .options
            .iter()
            .filter_map(|o| o.option_name.as_deref())
            .collect();
        (
            "poll",
            json!({ "name": p.name, "options": options, "selectableCount": p.selectable_options_count }),
        )
    } else if let Some(i) = m.interactive_message.as_option() {
        ("interactive", interactive(i))
    } else if let Some(reaction) = m.reaction_message.as_option() {
        let key = reaction.key.as_option();
        (
            "reaction",
            json!({
                "targetId": key.and_then(|k| k.id.clone()),
                "emoji": reaction.text.clone().unwrap_or_default(),
                "targetFromMe": key.and_then(|k| k.from_me).unwrap_or(false),
            }),
        )
    } else if let Some(p) = m.protocol_message.as_option() {
        protocol(p)
    } else {
        ("unknown", json!({}))
    };
    let context = context(m);
    if let Some(c) = context {
        put(&mut payload, "quotedMessageId", c.stanza_id.as_deref());
        if !c.mentioned_jid.is_empty()
            && let Some(map) = payload.as_object_mut()
        {
            // Mentioned accounts by phone number, as the sandbox lists
            // them (on the network a mention in a LID chat names a LID).
            let users: Vec<String> = c
                .mentioned_jid
                .iter()
                .map(|j| match j.split_once('@') {
                    Some((lid, "lid")) => net.phone_of_lid(lid).unwrap_or_else(|| lid.to_string()),
                    Some((user, _)) => user.to_string(),
                    None => j.clone(),
                })
                .collect();
            map.insert("mentions".into(), json!(users));
        }
    }
    (kind, payload)
}

/// Edits and revokes.
fn protocol(p: &wa::message::ProtocolMessage) -> (&'static str, Value) {
    use wa::message::protocol_message::Type;
    let key = p.key.as_option();
    let target = key.and_then(|k| k.id.clone());
    match p.r#type {
        Some(Type::MESSAGE_EDIT) => {
            let edited = p.edited_message.as_option();
            let body = edited.and_then(|e| {
                e.conversation
                    .clone()
                    .or_else(|| e.extended_text_message.as_option()?.text.clone())
            });
            ("edit", json!({ "targetId": target, "body": body }))
        }
        Some(Type::REVOKE) => (
            "revoke",
            json!({ "targetId": target, "fromMe": key.and_then(|k| k.from_me).unwrap_or(false) }),
        ),
        _ => ("unknown", json!({})),
    }
}

/// A file message: the decrypted download's size and SHA-256, never the bytes.
async fn media(device: &TestDevice, r: &Received) -> (&'static str, Value) {
    let m = &r.message;
    let (kind, mime, caption, file_name, ptt) = if let Some(x) = m.image_message.as_option() {
        ("image", x.mimetype.clone(), x.caption.clone(), None, None)
    } else if let Some(x) = m.video_message.as_option() {
        ("video", x.mimetype.clone(), x.caption.clone(), None, None)
    } else if let Some(x) = m.audio_message.as_option() {
        (
            "audio",
            x.mimetype.clone(),
            None,
            None,
            Some(x.ptt.unwrap_or(false)),
        )
    } else if let Some(x) = m.document_message.as_option() {
        (
            "document",
            x.mimetype.clone(),
            x.caption.clone(),
            x.file_name.clone(),
            None,
        )
    } else {
        let x = m.sticker_message.as_option();
        (
            "sticker",
            x.and_then(|x| x.mimetype.clone()),
            None,
            None,
            None,
        )
    };
    let mut p = match device.download(r).await {
        Ok(bytes) => json!({
            "mimeType": mime,
            "bytes": bytes.len(),
            "sha256": hex::encode(Sha256::digest(&bytes)),
        }),
        Err(e) => json!({ "mimeType": mime, "downloadError": e.to_string() }),
    };
    put(&mut p, "fileName", file_name.as_deref());
    put(&mut p, "caption", caption.as_deref());
    if let (Some(ptt), Some(map)) = (ptt, p.as_object_mut()) {
        map.insert("ptt".into(), Value::Bool(ptt));
    }
    (kind, p)
}

/// An interactive message's body, footer and buttons, as the API took them.
fn interactive(i: &wa::message::InteractiveMessage) -> Value {
    use wa::message::interactive_message::InteractiveMessage as Kind;
    let buttons: Vec<Value> = match &i.interactive_message {
        Some(Kind::NativeFlowMessage(flow)) => flow
            .buttons
            .iter()
            .map(|b| {
                let params: Value = b
                    .button_params_json
                    .as_deref()
                    .and_then(|j| serde_json::from_str(j).ok())
                    .unwrap_or_default();
                let mut button = Map::new();
                button.insert("type".into(), json!(b.name));
                button.insert("displayText".into(), params["display_text"].clone());
                for (from, to) in [
                    ("id", "id"),
                    ("url", "url"),
                    ("phone_number", "phoneNumber"),
                    ("copy_code", "copyCode"),
                ] {
                    if !params[from].is_null() {
                        button.insert(to.into(), params[from].clone());
                    }
                }
                Value::Object(button)
            })
            .collect(),
        _ => Vec::new(),
    };
    let mut p = json!({
        "body": i.body.as_option().and_then(|b| b.text.clone()),
        "buttons": buttons,
    });
    put(
        &mut p,
        "footer",
        i.footer.as_option().and_then(|f| f.text.as_deref()),
    );
    p
}

/// The context (quote, mentions) of a message's content.
fn context(m: &wa::Message) -> Option<&wa::ContextInfo> {
    macro_rules! first {
        ($($field:ident),+) => {
            None$(.or_else(|| m.$field.as_option()?.context_info.as_option()))+
        };
    }
    first!(
        extended_text_message,
        image_message,
        video_message,
        audio_message,
        document_message,
        sticker_message,
        location_message,
        contact_message,
        interactive_message
    )
}

/// Adds `key` when `value` is present.
fn put(payload: &mut Value, key: &str, value: Option<&str>) {
    if let (Some(map), Some(value)) = (payload.as_object_mut(), value) {
        map.insert(key.into(), Value::String(value.into()));
    }
}
