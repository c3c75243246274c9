//! History sync from the phone. A phone whose past was set
//! (`/sandbox/history`) sends it to each companion it links, once it has
//! shared its app-state key, as a phone does: first a `HistorySync` of type
//! `INITIAL_BOOTSTRAP` with the newest messages of each chat (and each
//! chat's privacy token the contact issued the account, the account's
//! privacy-token salt, the phone-to-LID mappings of its contacts), then a
//! `PUSH_NAME` chunk with the names its contacts gave themselves (when any
//! did), then, when a chat has more, a `RECENT` chunk with the older ones.
//! A file of the past is uploaded to the CDN as the phone uploaded it when
//! it sent it, and its message carries what a live one does (the media
//! key, the hashes, the direct path).
//! Each is zlib-compressed, encrypted and uploaded to the CDN as
//! `md-msg-hist`, and announced to the account's own devices by a
//! `HISTORY_SYNC_NOTIFICATION` protocol message naming its type and order
//! (whatsapp-rust `src/history_sync.rs` and wacore `src/history_sync.rs` for
//! what a companion reads of it; the `HistorySync`, `Conversation` and
//! `Message.HistorySyncNotification` protos). How many messages the first
//! chunk takes is ours ([`BOOTSTRAP_MESSAGES`]): the sources give no
//! number, only that the bootstrap comes first and the rest after.
use std::collections::BTreeMap;
use std::io::Write;

use anyhow::{Context, anyhow};
use parley_contract::wire::sandbox::SandboxPastMessage;
use whatsapp_rust::buffa::{Message as _, MessageField};
use whatsapp_rust::download::MediaType;
use whatsapp_rust::waproto::whatsapp as wa;
use whatsapp_rust::{Client, UploadOptions};

/// The newest messages of each chat the first chunk carries.
pub const BOOTSTRAP_MESSAGES: usize = 2;

/// One chunk of a phone's history: its type (as the blob names it and as
/// its announcement does) and its messages, by chat.
struct Chunk<'a> {
    kind: wa::history_sync::HistorySyncType,
    announced: wa::message::HistorySyncType,
    chats: BTreeMap<&'a str, Vec<&'a SandboxPastMessage>>,
}

/// What a phone knows of its contacts: their LIDs and the names they gave
/// themselves, by phone.
#[derive(Debug, Default, Clone)]
pub struct Contacts {
    pub lids: BTreeMap<String, String>,
    pub names: BTreeMap<String, String>,
    /// The phone's own account's name.
    pub own_name: Option<String>,
}

impl Contacts {
    /// A contact's address as the phone names it now: its LID JID when
    /// known, its phone JID otherwise.
    fn jid(&self, phone: &str) -> String {
        match self.lids.get(phone) {
            Some(lid) => format!("{lid}@lid"),
            None => format!("{phone}@s.whatsapp.net"),
        }
    }
}

/// A phone's chats as it sends them: a chat with a contact of known LID is
/// named by it, as the network names chats now, with the phone beside it.
pub async fn send(
    client: &Client,
    phone: &str,
    past: &[SandboxPastMessage],
    contacts: &Contacts,
) -> anyhow::Result<()> {
    let mut syncs = Vec::new();
    for (i, chunk) in chunks(past)?.iter().enumerate() {
        let sync = history_sync(client, chunk, contacts, i == 0).await?;
        syncs.push((sync, chunk.announced));
    }
    // The names come right after the bootstrap.
    if let Some(names) = push_names(contacts) {
        syncs.insert(1, names);
    }
    for (order, (mut sync, announced)) in syncs.into_iter().enumerate() {
        let order = order as u32;
        sync.chunk_order = Some(order);
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        zlib.write_all(&sync.encode_to_vec())?;
        let blob = zlib.finish()?;
        let up = client
            .upload(blob, MediaType::History, UploadOptions::default())
            .await
            .map_err(|e| anyhow!("history upload: {e}"))?;
        let notification = wa::message::HistorySyncNotification {
            file_sha256: Some(up.file_sha256.to_vec()),
            file_length: Some(up.file_length),
            media_key: Some(up.media_key.to_vec()),
            file_enc_sha256: Some(up.file_enc_sha256.to_vec()),
            direct_path: Some(up.direct_path),
            sync_type: Some(announced),
            chunk_order: Some(order),
            progress: Some(100),
            ..Default::default()
        };
        let announce = wa::message::ProtocolMessage {
            r#type: Some(wa::message::protocol_message::Type::HISTORY_SYNC_NOTIFICATION),
            history_sync_notification: MessageField::some(notification),
            ..Default::default()
        };
        crate::devices::to_own_devices(client, phone, announce)
            .await
            .context("history notification")?;
    }
    Ok(())
}

/// The bootstrap (each chat's newest [`BOOTSTRAP_MESSAGES`]) and, when a
/// chat has more, the recent chunk with the rest.
fn chunks(past: &[SandboxPastMessage]) -> anyhow::Result<Vec<Chunk<'_>>> {
    let mut chats: BTreeMap<&str, Vec<(i64, &SandboxPastMessage)>> = BTreeMap::new();
    for m in past {
        chats
            .entry(m.chat.as_str())
            .or_default()
            .push((sent_at(m)?, m));
    }
    let (mut newest, mut older) = (BTreeMap::new(), BTreeMap::new());
    for (chat, mut messages) in chats {
        messages.sort_by_key(|(at, _)| *at);
        let split = messages.len().saturating_sub(BOOTSTRAP_MESSAGES);
        let recent = messages.split_off(split);
        if !messages.is_empty() {
            older.insert(chat, messages.into_iter().map(|(_, m)| m).collect());
        }
        newest.insert(chat, recent.into_iter().map(|(_, m)| m).collect());
    }
    let mut chunks = vec![Chunk {
        kind: wa::history_sync::HistorySyncType::INITIAL_BOOTSTRAP,
        announced: wa::message::HistorySyncType::INITIAL_BOOTSTRAP,
        chats: newest,
    }];
    if !older.is_empty() {
        chunks.push(Chunk {
            kind: wa::history_sync::HistorySyncType::RECENT,
            announced: wa::message::HistorySyncType::RECENT,
            chats: older,
        });
    }
    Ok(chunks)
}

/// When the message was sent (its `at`, or now).
fn sent_at(m: &SandboxPastMessage) -> anyhow::Result<i64> {
    Ok(m.at
        .as_deref()
        .map(chrono::DateTime::parse_from_rfc3339)
        .transpose()
        .context("at")?
        .map_or_else(|| chrono::Utc::now().timestamp(), |t| t.timestamp()))
}

/// The `PUSH_NAME` chunk: the names the phone's contacts gave themselves
/// (none when none did), each by the address the phone names it by.
fn push_names(contacts: &Contacts) -> Option<(wa::HistorySync, wa::message::HistorySyncType)> {
    let pushnames: Vec<wa::Pushname> = contacts
        .names
        .iter()
        .filter(|(_, name)| !name.is_empty())
        .map(|(phone, name)| wa::Pushname {
            id: Some(contacts.jid(phone)),
            pushname: Some(name.clone()),
        })
        .collect();
    (!pushnames.is_empty()).then(|| {
        let sync = wa::HistorySync {
            sync_type: wa::history_sync::HistorySyncType::PUSH_NAME,
            pushnames,
            progress: Some(100),
            ..Default::default()
        };
        (sync, wa::message::HistorySyncType::PUSH_NAME)
    })
}

/// The chunk as a `HistorySync`; the `first` carries the privacy tokens
/// and the salt.
async fn history_sync(
    client: &Client,
    chunk: &Chunk<'_>,
    contacts: &Contacts,
    first: bool,
) -> anyhow::Result<wa::HistorySync> {
    let lids = &contacts.lids;
    let backend = client.persistence_manager().backend();
    let mut conversations = Vec::new();
    let mut mappings = Vec::new();
    for (chat, messages) in &chunk.chats {
        let pn = chat.strip_suffix("@s.whatsapp.net");
        let lid = pn.and_then(|p| lids.get(p));
        let id = match lid {
            Some(lid) => format!("{lid}@lid"),
            None => chat.to_string(),
        };
        let mut held = Vec::with_capacity(messages.len());
        for (i, m) in messages.iter().enumerate() {
            let content = content(client, m).await?;
            let name = author_name(contacts, pn, m);
            held.push(history_message(&id, m, content, i as u64, name)?);
        }
        let mut conversation = wa::Conversation {
            id: id.clone(),
            messages: held,
            ..Default::default()
        };
        if let (Some(_), Some(lid)) = (pn, lid) {
            conversation.pn_jid = Some(chat.to_string());
            conversation.lid_jid = Some(id.clone());
            mappings.push(wa::PhoneNumberToLIDMapping {
                pn_jid: Some(chat.to_string()),
                lid_jid: Some(id.clone()),
            });
            // The token the contact issued this account, as the phone holds it.
            if first
                && let Ok(Some(token)) = backend.get_tc_token(lid).await
                && !token.token.is_empty()
            {
                conversation.tc_token = Some(token.token);
                conversation.tc_token_timestamp = Some(token.token_timestamp as u64);
            }
        }
        conversations.push(conversation);
    }
    let salt = first
        .then(|| {
            client
                .persistence_manager()
                .get_device_snapshot()
                .nct_salt
                .clone()
        })
        .flatten();
    Ok(wa::HistorySync {
        sync_type: chunk.kind,
        conversations,
        progress: Some(100),
        phone_number_to_lid_mappings: mappings,
        nct_salt: salt,
        ..Default::default()
    })
}

/// The name the author of `m` (in the chat with the contact `pn`, or a
/// group) gave itself, as the phone knows it.
fn author_name(contacts: &Contacts, pn: Option<&str>, m: &SandboxPastMessage) -> Option<String> {
    if m.from_me {
        return contacts.own_name.clone();
    }
    let author = pn.or(m.from.as_deref())?;
    contacts.names.get(author).cloned()
}

/// What a message of the past holds: its text, or its file, which the
/// phone uploaded to the CDN when it sent it (and uploads here).
async fn content(client: &Client, m: &SandboxPastMessage) -> anyhow::Result<wa::Message> {
    let kind = m.kind.as_deref().unwrap_or("text");
    let Some(file_kind) = crate::kinds::FileKind::of_type(kind) else {
        return Ok(wa::Message {
            conversation: Some(m.body.clone()),
            ..Default::default()
        });
    };
    use base64::Engine;
    let data = base64::engine::general_purpose::STANDARD
        .decode(m.data.as_deref().unwrap_or_default().trim())
        .context("a file of history: data")?;
    let file = crate::kinds::File {
        kind: file_kind,
        data: &data,
        mime: m.mime_type.as_deref().unwrap_or_default(),
        caption: Some(m.body.as_str()).filter(|c| !c.is_empty()),
        file_name: m.file_name.as_deref(),
    };
    crate::kinds::upload(client, &file)
        .await
        .context("a file of history")
}

/// A message of history holding `content`, with its author's name
/// (`pushName`) when known.
fn history_message(
    chat: &str,
    m: &SandboxPastMessage,
    content: wa::Message,
    order: u64,
    push_name: Option<String>,
) -> anyhow::Result<wa::HistorySyncMsg> {
    let at = sent_at(m)?;
    let participant = m
        .from
        .as_ref()
        .filter(|_| !m.from_me && chat.ends_with("@g.us"))
        .map(|p| format!("{p}@s.whatsapp.net"));
    let info = wa::WebMessageInfo {
        key: MessageField::some(wa::MessageKey {
            remote_jid: Some(chat.to_string()),
            from_me: Some(m.from_me),
            id: m.message_id.clone(),
            participant: participant.clone(),
        }),
        message: MessageField::some(content),
        message_timestamp: Some(u64::try_from(at).unwrap_or(0)),
        participant,
        push_name,
        ..Default::default()
    };
    Ok(wa::HistorySyncMsg {
        message: MessageField::some(info),
        msg_order_id: Some(order),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn past(chat: &str, body: &str, at: &str) -> SandboxPastMessage {
        SandboxPastMessage {
            chat: chat.into(),
            from_me: false,
            from: None,
            kind: None,
            body: body.into(),
            at: Some(at.into()),
            ..SandboxPastMessage::default()
        }
    }

    fn bodies(chunk: &Chunk<'_>) -> Vec<String> {
        chunk
            .chats
            .values()
            .flatten()
            .map(|m| m.body.clone())
            .collect()
    }

    #[test]
    fn push_names_name_a_contact_by_its_lid_when_known() {
        let contacts = Contacts {
            lids: BTreeMap::from([("4915100000002".into(), "100000000000002".into())]),
            names: BTreeMap::from([
                ("4915100000002".into(), "Ann".into()),
                ("4915100000003".into(), "Bo".into()),
                ("4915100000004".into(), String::new()),
            ]),
            own_name: None,
        };
        let (sync, announced) = push_names(&contacts).expect("names");
        assert_eq!(announced, wa::message::HistorySyncType::PUSH_NAME);
        assert_eq!(sync.sync_type, wa::history_sync::HistorySyncType::PUSH_NAME);
        let names: Vec<(&str, &str)> = sync
            .pushnames
            .iter()
            .map(|p| (p.id.as_deref().unwrap(), p.pushname.as_deref().unwrap()))
            .collect();
        assert_eq!(
            names,
            [
                ("100000000000002@lid", "Ann"),
                ("4915100000003@s.whatsapp.net", "Bo")
            ]
        );
        assert!(push_names(&Contacts::default()).is_none());
    }

    #[test]
    fn the_bootstrap_has_each_chats_newest_and_the_recent_chunk_the_rest() {
        let (a, b) = (
            "4915100000721@s.whatsapp.net",
            "4915100000722@s.whatsapp.net",
        );
        let messages = [
            past(a, "a3", "2026-11-01T10:03:00Z"),
            past(a, "a1", "2026-11-01T10:01:00Z"),
            past(b, "b1", "2026-11-01T09:00:00Z"),
            past(a, "a2", "2026-11-01T10:02:00Z"),
        ];
        let chunks = chunks(&messages).expect("chunks");
        assert_eq!(chunks.len(), 2);
        assert_eq!(
            chunks[0].kind,
            wa::history_sync::HistorySyncType::INITIAL_BOOTSTRAP
        );
        assert_eq!(bodies(&chunks[0]), ["a2", "a3", "b1"]);
        assert_eq!(chunks[1].kind, wa::history_sync::HistorySyncType::RECENT);
        assert_eq!(chunks[1].announced, wa::message::HistorySyncType::RECENT);
        assert_eq!(bodies(&chunks[1]), ["a1"]);

        // A past the bootstrap holds whole is one chunk.
        let chunks = chunks_of(&messages[..2]);
        assert_eq!(chunks, 1);
    }

    fn chunks_of(past: &[SandboxPastMessage]) -> usize {
        chunks(past).expect("chunks").len()
    }
}
