//! `/sandbox/messages` on the test network: a contact's phone, or the
//! session's own phone (`from: "me"`), sends a real, encrypted message of the
//! requested kind; the session's companion receives it from the server.
use base64::Engine;
use parley_contract::wire::sandbox::{GeneratedFile, SandboxMessage};
use whatsapp_rust::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use super::outside::Outside;
use super::{Refusal, SessionRef, World, failed};
use crate::kinds::{File, FileKind};
use crate::{Received, TestDevice};

pub(super) fn invalid(why: impl Into<String>) -> Refusal {
    Refusal::Invalid(why.into())
}

fn required<'a>(value: &'a Option<String>, field: &str) -> Result<&'a str, Refusal> {
    value
        .as_deref()
        .filter(|v| !v.is_empty())
        .ok_or_else(|| invalid(format!("{field} is required")))
}

/// A phone number as the sandbox takes it: digits, perhaps after a `+`.
fn digits(raw: &str) -> Option<String> {
    let d = raw.trim().trim_start_matches('+');
    (d.len() >= 8 && d.len() <= 15 && d.bytes().all(|b| b.is_ascii_digit())).then(|| d.to_string())
}

/// Where a message goes.
enum Chat {
    /// A person's chat or a group, as a JID the sender addresses.
    Conversation(String),
    Outside(Outside),
}

fn chat_of(raw: &str) -> Result<Chat, Refusal> {
    let raw = raw.trim();
    let named = |suffix: &str| {
        raw.strip_suffix(suffix).is_some_and(|id| {
            !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
    };
    if raw == "status@broadcast" {
        return Ok(Chat::Outside(Outside::Status));
    }
    if named("@broadcast") {
        return Ok(Chat::Outside(Outside::List(raw.to_string())));
    }
    if named("@newsletter") {
        return Ok(Chat::Outside(Outside::Channel(raw.to_string())));
    }
    if named("@g.us") {
        return Ok(Chat::Conversation(raw.to_string()));
    }
    digits(raw)
        .map(|d| Chat::Conversation(format!("{d}@s.whatsapp.net")))
        .ok_or_else(|| {
            invalid("chat must be a phone number, a group, a broadcast list or a channel JID")
        })
}

impl World {
    /// Someone sends the session `m`; returns the message id.
    pub async fn message(
        &self,
        session: &SessionRef,
        m: SandboxMessage,
    ) -> Result<String, Refusal> {
        self.reachable(session).await?;
        let from_me = m.from.trim() == "me";
        let (sender, chat) = if from_me {
            let raw = required(&m.chat, "chat (for a message from \"me\")")?;
            (session.phone.clone(), chat_of(raw)?)
        } else {
            let sender =
                digits(&m.from).ok_or_else(|| invalid("from must be a phone number or \"me\""))?;
            let to = match m.chat.as_deref().filter(|c| !c.trim().is_empty()) {
                Some(raw) => chat_of(raw)?,
                None => Chat::Conversation(format!("{}@s.whatsapp.net", session.phone)),
            };
            (sender, to)
        };
        let to = match chat {
            Chat::Conversation(to) => to,
            Chat::Outside(outside) => {
                return self.outside_chats(session, &sender, outside, m).await;
            }
        };
        let device = self.phone(&sender).await?;
        if let Some(gid) = to.strip_suffix("@g.us") {
            // A message into a group presumes one with both in it.
            self.net
                .found_group_once(gid, &sender, std::slice::from_ref(&session.phone));
        }
        send(&device, &to, &session.phone, m).await
    }
}

/// Sends `m` from `device` to `to`; `session_phone` is the session's account
/// (the creator of the polls it votes on).
async fn send(
    device: &TestDevice,
    to: &str,
    session_phone: &str,
    m: SandboxMessage,
) -> Result<String, Refusal> {
    let id = m.message_id.as_deref().filter(|i| !i.trim().is_empty());
    let target = || required(&m.target_id, "targetId");
    let message = match plain(device, &m).await? {
        Some(message) => message,
        None => match m.kind.as_str() {
            "poll_creation" => {
                let name = required(&m.poll_name, "pollName")?;
                let options = m.poll_options.clone().unwrap_or_default();
                if options.len() < 2 {
                    return Err(invalid("pollOptions needs at least two options"));
                }
                let selectable = m.selectable_count.unwrap_or(1);
                return device
                    .send_poll(to, name, &options, selectable)
                    .await
                    .map_err(failed);
            }
            "vote_update" => {
                let poll_id = required(&m.poll_message_id, "pollMessageId")?;
                // A poll of the voter's own, or one the session sent it.
                let (poll, creator) = match device.own_poll(poll_id) {
                    Some(own) => (own, device.jid()),
                    None => (
                        received(device, poll_id).await?,
                        format!("{session_phone}@s.whatsapp.net"),
                    ),
                };
                let chosen = m.selected_options.clone().unwrap_or_default();
                let chosen: Vec<&str> = chosen.iter().map(String::as_str).collect();
                return device
                    .vote(to, &poll, &creator, &chosen)
                    .await
                    .map_err(failed);
            }
            "interactive_reply" => {
                let button = required(&m.button_id, "buttonId")?;
                let text = m.display_text.as_deref().unwrap_or_default();
                return device
                    .tap_button(to, target()?, button, text)
                    .await
                    .map_err(failed);
            }
            "reaction" => {
                let target = target()?;
                let emoji = m.emoji.clone().unwrap_or_default();
                // The session's message came to this device; any other is its own.
                let target_from_me = !device.received().iter().any(|r| r.id == target);
                return device
                    .react(to, target, target_from_me, &emoji)
                    .await
                    .map_err(failed);
            }
            "edit" => {
                let body = required(&m.body, "body")?;
                let new = wa::Message {
                    conversation: Some(body.to_string()),
                    ..Default::default()
                };
                // The library answers an edit with the edited message's id: the
                // edit's own is chosen here (or given as messageId).
                let own = id.map_or_else(|| device.client.generate_message_id(), str::to_string);
                let options =
                    whatsapp_rust::send::EditOptions::default().with_stanza_id(own.clone());
                let to = to.parse::<whatsapp_rust::Jid>().map_err(failed)?;
                device
                    .client
                    .edit_message_with_options(to, target()?, new, options)
                    .await
                    .map_err(failed)?;
                return Ok(own);
            }
            // The sender deletes its own message for everyone: built here (the
            // library's revoke does not say the revoke's own id).
            "revoke" => wa::Message {
                protocol_message: MessageField::some(wa::message::ProtocolMessage {
                    key: MessageField::some(wa::MessageKey {
                        remote_jid: Some(to.to_string()),
                        from_me: Some(true),
                        id: Some(target()?.to_string()),
                        ..Default::default()
                    }),
                    r#type: Some(wa::message::protocol_message::Type::REVOKE),
                    ..Default::default()
                }),
                ..Default::default()
            },
            other => return Err(invalid(format!("unknown type {other}"))),
        },
    };
    let message = with_context(message, &m);
    device.send_as(to, message, id).await.map_err(failed)
}

/// A message of a kind that is content alone (text, a file, a location, a
/// contact card), or `None` for the other kinds.
pub(super) async fn plain(
    device: &TestDevice,
    m: &SandboxMessage,
) -> Result<Option<wa::Message>, Refusal> {
    Ok(Some(match m.kind.as_str() {
        "text" => {
            let body = required(&m.body, "body")?;
            wa::Message {
                extended_text_message: MessageField::some(wa::message::ExtendedTextMessage {
                    text: Some(body.to_string()),
                    ..Default::default()
                }),
                ..Default::default()
            }
        }
        "image" | "video" | "audio" | "document" | "sticker" => media(device, m).await?,
        "location" => {
            let (Some(lat), Some(lon)) = (m.latitude, m.longitude) else {
                return Err(invalid("latitude and longitude are required"));
            };
            wa::Message {
                location_message: MessageField::some(wa::message::LocationMessage {
                    degrees_latitude: Some(lat),
                    degrees_longitude: Some(lon),
                    name: m.name.clone(),
                    address: m.address.clone(),
                    is_live: m.live,
                    ..Default::default()
                }),
                ..Default::default()
            }
        }
        "contact" => wa::Message {
            contact_message: MessageField::some(wa::message::ContactMessage {
                display_name: Some(required(&m.display_name, "displayName")?.to_string()),
                vcard: Some(required(&m.vcard, "vcard")?.to_string()),
                ..Default::default()
            }),
            ..Default::default()
        },
        _ => return Ok(None),
    }))
}

/// How long a vote waits for its poll to reach the voter.
const POLL_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The message `id` as `device` received it (waiting a while: the session's
/// send may still be on its way).
async fn received(device: &TestDevice, id: &str) -> Result<Received, Refusal> {
    device
        .wait_for(POLL_WAIT, |r| r.id == id)
        .await
        .ok_or_else(|| Refusal::NotFound(format!("{} never received message {id}", device.phone)))
}

/// A file message: `data` uploaded, encrypted, to the CDN.
async fn media(device: &TestDevice, m: &SandboxMessage) -> Result<wa::Message, Refusal> {
    let data = match &m.generate {
        Some(generate) => generated(generate)?,
        None => base64::engine::general_purpose::STANDARD
            .decode(required(&m.data, "data")?.trim())
            .map_err(|_| invalid("data must be base64"))?,
    };
    if data.is_empty() {
        return Err(invalid("data must not be empty"));
    }
    let kind = match m.kind.as_str() {
        "image" => FileKind::Image,
        "video" => FileKind::Video,
        "audio" if m.ptt == Some(true) => FileKind::Voice,
        "audio" => FileKind::Audio,
        "document" => FileKind::Document,
        _ => FileKind::Sticker,
    };
    let file = File {
        kind,
        data: &data,
        mime: m.mime_type.as_deref().unwrap_or("application/octet-stream"),
        caption: m.caption.as_deref(),
        file_name: m.file_name.as_deref(),
    };
    device.upload_file(&file).await.map_err(failed)
}

/// The largest file the test network generates: the sending device
/// encrypts and uploads it whole, as a phone does.
const GENERATED_MAX: u64 = 64 << 20;

/// The bytes of a `generate`d file, the same as the sandbox's for the seed.
fn generated(generate: &GeneratedFile) -> Result<Vec<u8>, Refusal> {
    let size = generate.size.unwrap_or(0);
    if size == 0 || size > GENERATED_MAX {
        return Err(invalid(format!(
            "generate.size must be 1 to {GENERATED_MAX} on the test network"
        )));
    }
    let seed = generate.seed.unwrap_or(0);
    Ok(parley_network_sandbox::store::generated::Generated::all(
        seed, size,
    ))
}

/// `message` with the quote, mentions and forwarded mark `m` asks for.
pub(super) fn with_context(mut message: wa::Message, m: &SandboxMessage) -> wa::Message {
    let quoted = m.quoted_message_id.clone().filter(|q| !q.is_empty());
    let mentions: Vec<String> = m
        .mentions
        .iter()
        .flatten()
        .map(|user| format!("{}@s.whatsapp.net", user.trim_start_matches('+')))
        .collect();
    let forwarded = m.is_forwarded == Some(true);
    if quoted.is_none() && mentions.is_empty() && !forwarded {
        return message;
    }
    let fill = |c: &mut wa::ContextInfo| {
        c.stanza_id = quoted.clone();
        c.mentioned_jid = mentions.clone();
        if forwarded {
            c.is_forwarded = Some(true);
            c.forwarding_score = Some(1);
        }
    };
    macro_rules! on {
        ($($field:ident),+) => {
            $(
                if let Some(inner) = message.$field.as_option_mut() {
                    fill(inner.context_info.get_or_insert_default());
                    return message;
                }
            )+
        };
    }
    on!(
        extended_text_message,
        image_message,
        video_message,
        audio_message,
        document_message,
        sticker_message,
        location_message,
        contact_message
    );
    message
}
