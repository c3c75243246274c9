//! `POST /sandbox/messages`: a message someone on the simulated network sends.
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Every field of every `type`; which are required depends on `type`.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct SandboxMessage {
    pub client_id: String,
    /// A phone number, or `me` (the linked phone itself).
    pub from: String,
    /// A group JID (or a contact's phone when `from` is `me`); omitted: the direct chat.
    pub chat: Option<String>,
    #[serde(rename = "type")]
    pub kind: String,
    pub body: Option<String>,
    /// Base64 file bytes (media types).
    pub data: Option<String>,
    /// Instead of `data` (media types): a file of seeded pseudo-random bytes,
    /// generated as the gateway downloads it and never stored (load and
    /// size tests).
    pub generate: Option<GeneratedFile>,
    pub mime_type: Option<String>,
    pub file_name: Option<String>,
    pub caption: Option<String>,
    pub ptt: Option<bool>,
    /// Images and videos: shown once.
    pub view_once: Option<bool>,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
    pub name: Option<String>,
    pub address: Option<String>,
    pub live: Option<bool>,
    pub display_name: Option<String>,
    pub vcard: Option<String>,
    pub poll_name: Option<String>,
    pub poll_options: Option<Vec<String>>,
    #[serde(default, deserialize_with = "crate::wire::integers::optional")]
    pub selectable_count: Option<u32>,
    pub poll_message_id: Option<String>,
    pub selected_options: Option<Vec<String>>,
    pub target_id: Option<String>,
    pub button_id: Option<String>,
    pub display_text: Option<String>,
    pub emoji: Option<String>,
    pub quoted_message_id: Option<String>,
    pub mentions: Option<Vec<String>>,
    pub is_forwarded: Option<bool>,
    pub message_id: Option<String>,
}

/// A generated file: `size` bytes from `seed` (the same seed gives the same bytes).
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct GeneratedFile {
    /// 1 byte to 4 GiB.
    #[serde(deserialize_with = "crate::wire::integers::optional")]
    #[schema(minimum = 1, maximum = 4294967296_u64)]
    pub size: Option<u64>,
    #[serde(deserialize_with = "crate::wire::integers::optional")]
    #[schema(minimum = 0)]
    pub seed: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxMessageSent {
    pub message_id: String,
}
