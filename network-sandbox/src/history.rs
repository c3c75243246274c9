//! History sync on the simulated network: a phone whose past was set
//! (`POST /sandbox/history`) sends it to each device it links, right after
//! the link, oldest first and in chunks, as the real phone sends a new
//! companion its chats, then the names its contacts gave themselves (a
//! phone's push names), then its labels (app state's first sync).
use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use parley_contract::wire::sandbox::SandboxPastMessage;
use parley_model::address::MessageId;
use parley_model::inbound::InboundMessage;
use parley_model::media::MediaInfo;
use parley_model::recipients::PHONE_SERVER;
use parley_network::ContactName;

use super::SandboxNetwork;
use crate::injected::{FROM_ME, InjectedContent, InjectedMessage};
use crate::store::SandboxDevice;

/// What a phone sends a device it links, besides the link itself.
#[derive(Default)]
pub(super) struct Past {
    pub messages: Vec<InboundMessage>,
    pub names: Vec<ContactName>,
    /// Label notices (`from_full_sync`).
    pub labels: Vec<InboundMessage>,
}

impl SandboxNetwork {
    /// The past `device`'s phone sends it (none when none was set): its
    /// chats, oldest first, the names of the contacts they name, and what
    /// its first app-state sync tells of the phone's labels.
    pub(super) async fn past_of(&self, device: &SandboxDevice) -> Past {
        let past = match self.store().history(&device.phone).await {
            Ok(past) => past.unwrap_or_default(),
            Err(e) => {
                tracing::warn!(phone = %device.phone, error = %e, "sandbox: the phone's history is not readable");
                return Past::default();
            }
        };
        let names = self.names_of(&past.messages).await;
        let labels = self.labels_at_link(device, past.labels).await;
        let mut messages = Vec::with_capacity(past.messages.len());
        for m in past.messages {
            let at =
                m.at.as_deref()
                    .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                    .map_or_else(Utc::now, |t| t.with_timezone(&Utc));
            let content = match self.past_content(device, &m).await {
                Ok(content) => content,
                Err(e) => {
                    tracing::warn!(phone = %device.phone, error = %e, "sandbox: a file of history left out");
                    continue;
                }
            };
            let injected = injected(m, content);
            match self
                .inbound_of(injected, &device.jid, &device.push_name, at)
                .await
            {
                Ok(msg) => messages.push(msg),
                Err(e) => {
                    tracing::warn!(phone = %device.phone, error = %e.message, "sandbox: a message of history left out");
                }
            }
        }
        messages.sort_by_key(|m| m.timestamp);
        Past {
            messages,
            names,
            labels,
        }
    }

    /// What a message of the past holds: its text, or its file, which the
    /// phone uploaded when it sent it (stored on the sandbox's CDN for the
    /// device, as any file a contact sends it).
    async fn past_content(
        &self,
        device: &SandboxDevice,
        m: &SandboxPastMessage,
    ) -> Result<InjectedContent, String> {
        let kind = m.kind.as_deref().unwrap_or("text");
        if kind == "text" {
            return Ok(InjectedContent::Text {
                body: m.body.clone(),
            });
        }
        let bytes = m
            .data
            .as_deref()
            .and_then(decoded_file)
            .ok_or("its data is not base64")?;
        let download = self
            .store()
            .put_sandbox_media(&device.client_id, &bytes)
            .await
            .map_err(|e| e.to_string())?;
        Ok(InjectedContent::Media {
            kind: kind.to_string(),
            info: MediaInfo {
                mime_type: m.mime_type.clone().unwrap_or_default(),
                file_name: m.file_name.clone().unwrap_or_default(),
                caption: m.body.clone(),
                ptt: false,
                view_once: false,
            },
            download,
        })
    }

    /// The names the contacts of `past` gave themselves (those that gave
    /// one), as their phone knows them.
    async fn names_of(&self, past: &[SandboxPastMessage]) -> Vec<ContactName> {
        let suffix = format!("@{PHONE_SERVER}");
        let phones: BTreeSet<&str> = past
            .iter()
            .filter_map(|m| m.chat.strip_suffix(&suffix).or(m.from.as_deref()))
            .map(|p| p.trim_start_matches('+'))
            .collect();
        let mut names = Vec::new();
        for phone in phones {
            match self.store().phone(phone).await {
                Ok(Some(p)) if !p.name.is_empty() => names.push(ContactName {
                    lid: p.lid,
                    phone: p.phone,
                    name: p.name,
                }),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(%phone, error = %e, "sandbox: a contact's name is not readable")
                }
            }
        }
        names
    }
}

/// A checked message of the past, holding `content`, as the phone's or a
/// contact's message.
fn injected(m: SandboxPastMessage, content: InjectedContent) -> InjectedMessage {
    let suffix = format!("@{PHONE_SERVER}");
    let contact = m.chat.strip_suffix(&suffix).map(str::to_string);
    let (from, chat) = match (m.from_me, contact) {
        (true, Some(digits)) => (FROM_ME.to_string(), Some(digits)),
        (true, None) => (FROM_ME.to_string(), Some(m.chat)),
        (false, Some(digits)) => (digits, None),
        (false, None) => (m.from.unwrap_or_default(), Some(m.chat)),
    };
    InjectedMessage {
        from,
        chat,
        message_id: m.message_id.and_then(MessageId::new),
        quoted_message_id: None,
        mentions: Vec::new(),
        is_forwarded: false,
        content,
    }
}

/// The bytes of a past file's `data` (base64), `None` when it is not base64.
pub(crate) fn decoded_file(data: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .ok()
}
