//! History sync from the phone. A phone whose past was set
//! (`/sandbox/history`) sends it to each companion it links, once it has
//! shared its app-state key, as a phone does: a `HistorySync` of type
//! `INITIAL_BOOTSTRAP` (its chats, each with the privacy token the contact
//! issued the account; the account's privacy-token salt; the phone-to-LID
//! mappings of its contacts), zlib-compressed, encrypted and uploaded to the
//! CDN as `md-msg-hist`, and announced to its own devices by a
//! `HISTORY_SYNC_NOTIFICATION` protocol message (whatsapp-rust
//! `src/history_sync.rs` and wacore `src/history_sync.rs` for what a
//! companion reads of it; the `HistorySync`, `Conversation` and
//! `Message.HistorySyncNotification` protos).
use std::collections::BTreeMap;
use std::io::Write;

use anyhow::{Context, anyhow};
use parley_contract::wire::sandbox::SandboxPastMessage;
use whatsapp_rust::buffa::{Message as _, MessageField};
use whatsapp_rust::download::MediaType;
use whatsapp_rust::waproto::whatsapp as wa;
use whatsapp_rust::{Client, UploadOptions};

/// A phone's chats as it sends them: `lids` maps its contacts' phones to
/// their LIDs (a chat with a contact of known LID is named by it, as the
/// network names chats now, with the phone beside it).
pub async fn send(
    client: &Client,
    phone: &str,
    past: &[SandboxPastMessage],
    lids: &BTreeMap<String, String>,
) -> anyhow::Result<()> {
    let sync = history_sync(client, past, lids).await?;
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
        sync_type: Some(wa::message::HistorySyncType::INITIAL_BOOTSTRAP),
        chunk_order: Some(0),
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
        .map(|_| ())
        .context("history notification")
}

async fn history_sync(
    client: &Client,
    past: &[SandboxPastMessage],
    lids: &BTreeMap<String, String>,
) -> anyhow::Result<wa::HistorySync> {
    let backend = client.persistence_manager().backend();
    let mut chats: BTreeMap<&str, Vec<&SandboxPastMessage>> = BTreeMap::new();
    for m in past {
        chats.entry(m.chat.as_str()).or_default().push(m);
    }
    let mut conversations = Vec::new();
    let mut mappings = Vec::new();
    for (chat, messages) in chats {
        let pn = chat.strip_suffix("@s.whatsapp.net");
        let lid = pn.and_then(|p| lids.get(p));
        let id = match lid {
            Some(lid) => format!("{lid}@lid"),
            None => chat.to_string(),
        };
        let mut conversation = wa::Conversation {
            id: id.clone(),
            messages: messages
                .iter()
                .enumerate()
                .map(|(i, m)| history_message(&id, m, i as u64))
                .collect::<anyhow::Result<_>>()?,
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
            if let Ok(Some(token)) = backend.get_tc_token(lid).await
                && !token.token.is_empty()
            {
                conversation.tc_token = Some(token.token);
                conversation.tc_token_timestamp = Some(token.token_timestamp as u64);
            }
        }
        conversations.push(conversation);
    }
    let salt = client
        .persistence_manager()
        .get_device_snapshot()
        .nct_salt
        .clone();
    Ok(wa::HistorySync {
        sync_type: wa::history_sync::HistorySyncType::INITIAL_BOOTSTRAP,
        conversations,
        chunk_order: Some(0),
        progress: Some(100),
        phone_number_to_lid_mappings: mappings,
        nct_salt: salt,
        ..Default::default()
    })
}

fn history_message(
    chat: &str,
    m: &SandboxPastMessage,
    order: u64,
) -> anyhow::Result<wa::HistorySyncMsg> {
    let at =
        m.at.as_deref()
            .map(chrono::DateTime::parse_from_rfc3339)
            .transpose()
            .context("at")?
            .map_or_else(|| chrono::Utc::now().timestamp(), |t| t.timestamp());
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
        message: MessageField::some(wa::Message {
            conversation: Some(m.body.clone()),
            ..Default::default()
        }),
        message_timestamp: Some(u64::try_from(at).unwrap_or(0)),
        participant,
        ..Default::default()
    };
    Ok(wa::HistorySyncMsg {
        message: MessageField::some(info),
        msg_order_id: Some(order),
    })
}
