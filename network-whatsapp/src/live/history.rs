//! History sync: the chats the phone sends a newly linked device. The
//! library downloads and decrypts each blob and keeps what it carries for
//! itself (privacy tokens, the privacy-token salt, LID mappings, the push
//! name) before it hands the compressed conversations over; here they are
//! read one conversation at a time, off the runtime, into the port's
//! messages: at most [`MESSAGES_PER_CHAT`] per chat (the newest), sent on in
//! chunks of [`HISTORY_CHUNK`] as they fill. Messages that carry no user activity, or
//! that cannot be read (a vote, whose poll's secret history does not give),
//! are left out.
use chrono::{DateTime, Utc};
use whatsapp_rust::Jid;
use whatsapp_rust::wacore::history_sync::HistorySyncStream;
use whatsapp_rust::wacore_binary::JidExt;
use whatsapp_rust::waproto::whatsapp as wa;

use crate::convert::inbound::{Envelope, to_inbound};
use parley_model::inbound::InboundMessage;
use parley_network::{HISTORY_CHUNK, MessageId};

/// The most messages of one chat a sync gives the session: the hosted
/// inbox's chat history answers the last 200.
pub const MESSAGES_PER_CHAT: usize = 200;

/// What a history blob held besides the messages handed over.
#[derive(Debug, Default, PartialEq)]
pub struct Read {
    /// Messages handed over.
    pub handed: usize,
    /// The contacts' names (push names) it carries: a JID as the blob
    /// writes it (a LID or a phone JID) and the name.
    pub names: Vec<(Jid, String)>,
}

/// Reads a history blob (`compressed`, inflating to `size` bytes) into the
/// port's messages, handing each chunk of [`HISTORY_CHUNK`] to `emit` as it
/// fills (so a phone's whole past is never held at once), each chat's
/// oldest first; `emit` answers whether anyone still listens. `own` is the
/// account's phone JID (the author of its own messages). Blocking: call it
/// off the runtime.
pub fn read(
    compressed: &[u8],
    size: usize,
    own: &Jid,
    mut emit: impl FnMut(Vec<InboundMessage>) -> bool,
) -> Result<Read, String> {
    let mut stream = HistorySyncStream::new(compressed, size as u64);
    let mut pending: Vec<InboundMessage> = Vec::new();
    let mut read = Read::default();
    while let Some(conversation) = stream.next_conversation().map_err(|e| e.to_string())? {
        pending.extend(chat(&conversation, own));
        while pending.len() >= HISTORY_CHUNK {
            let rest = pending.split_off(HISTORY_CHUNK);
            read.handed += pending.len();
            if !emit(std::mem::replace(&mut pending, rest)) {
                return Ok(read);
            }
        }
    }
    if !pending.is_empty() {
        read.handed += pending.len();
        if !emit(pending) {
            return Ok(read);
        }
    }
    // What follows the conversations: the push names (a phone sends them
    // in a chunk of their own, `PUSH_NAME`).
    let rest = stream.remainder().map_err(|e| e.to_string())?;
    read.names = rest
        .pushnames
        .iter()
        .filter_map(|p| {
            let name = p
                .pushname
                .as_deref()
                .map(str::trim)
                .filter(|n| !n.is_empty())?;
            let jid = p.id.as_deref()?.parse::<Jid>().ok()?.to_non_ad();
            (jid.is_lid() || jid.is_pn()).then(|| (jid, name.to_string()))
        })
        .collect();
    Ok(read)
}

/// The newest messages of one conversation.
fn chat(conversation: &wa::Conversation, own: &Jid) -> Vec<InboundMessage> {
    let Ok(chat) = conversation.id.parse::<Jid>() else {
        return Vec::new();
    };
    let chat = chat.to_non_ad();
    // The chat's LID, when the chat is named by phone and history says it.
    let chat_lid = if chat.is_lid() {
        chat.user.to_string()
    } else {
        conversation
            .lid_jid
            .as_deref()
            .and_then(|l| l.parse::<Jid>().ok())
            .filter(|l| l.is_lid())
            .map(|l| l.user.to_string())
            .unwrap_or_default()
    };
    let subject = conversation.name.clone().filter(|n| !n.is_empty());
    let mut out: Vec<InboundMessage> = conversation
        .messages
        .iter()
        .filter_map(|m| m.message.as_option())
        .filter_map(|info| message(info, &chat, &chat_lid, subject.as_ref(), own))
        .collect();
    out.sort_by_key(|m| m.timestamp);
    let keep = out.len().saturating_sub(MESSAGES_PER_CHAT);
    out.drain(..keep);
    out
}

fn message(
    info: &wa::WebMessageInfo,
    chat: &Jid,
    chat_lid: &str,
    subject: Option<&String>,
    own: &Jid,
) -> Option<InboundMessage> {
    let key = info.key.as_option()?;
    let body = info.message.as_option()?;
    let from_me = key.from_me.unwrap_or(false);
    let is_group = chat.is_group();
    let sender = if from_me {
        own.clone()
    } else if is_group {
        key.participant
            .as_deref()
            .or(info.participant.as_deref())?
            .parse::<Jid>()
            .ok()?
            .to_non_ad()
    } else {
        chat.clone()
    };
    let envelope = Envelope {
        id: MessageId::new(key.id.clone()?)?,
        chat: port_jid(chat)?,
        chat_lid: if is_group {
            String::new()
        } else {
            chat_lid.to_string()
        },
        sender_phone: sender.is_pn().then(|| sender.user.to_string()),
        sender: port_jid(&sender)?,
        from_me,
        push_name: info.push_name.clone().unwrap_or_default(),
        group_subject: if is_group { subject.cloned() } else { None },
        timestamp: info
            .message_timestamp
            .and_then(|t| DateTime::<Utc>::from_timestamp(i64::try_from(t).ok()?, 0))
            .unwrap_or_else(Utc::now),
    };
    to_inbound(body, &envelope, None).ok().flatten()
}

/// `jid` (without device) as the port names it.
fn port_jid(jid: &Jid) -> Option<parley_network::Jid> {
    super::errors::port_jid(&jid.to_non_ad()).ok()
}
