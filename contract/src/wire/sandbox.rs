//! The bodies of the sandbox's control API (`/sandbox/*`): what its routes
//! read and answer, whichever test network is behind them (the simulated
//! network, or the wire-level test network in its test build).
use super::integers;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

// Phones and sessions.

/// `POST /sandbox/link`: the simulated phone scans the QR of `clientId` or the one given.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxLink {
    #[serde(default)]
    pub phone: String,
    #[serde(default)]
    pub name: String,
    pub client_id: Option<String>,
    pub qr: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxLinked {
    pub client_id: String,
    pub jid: String,
    pub lid: String,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxEnterCode {
    #[serde(default)]
    pub client_id: String,
    #[serde(default)]
    pub code: String,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxFault {
    #[serde(default)]
    pub client_id: String,
    #[serde(default)]
    pub op: String,
    #[serde(default, deserialize_with = "integers::optional")]
    pub count: Option<u32>,
}

/// `POST /sandbox/contacts`: registers or updates a phone on the simulated network.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxContact {
    #[serde(default)]
    pub phone: String,
    pub name: Option<String>,
    pub username: Option<String>,
    pub on_network: Option<bool>,
    /// `none` (default), `hidden`, or a base64 PNG/JPEG.
    pub avatar: Option<String>,
    /// Who sees the picture: `everyone` (default), or `contacts` (the
    /// sessions this phone wrote to: they hold its privacy token).
    pub avatar_privacy: Option<String>,
    pub about: Option<String>,
    /// Who may call this phone's account: `everyone` (default), or
    /// `contacts` (the phones it wrote to: they hold its privacy token;
    /// another's call is refused with error 463 and rings nowhere).
    pub call_privacy: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SandboxPhoneInfo {
    pub phone: String,
    pub lid: String,
    pub jid: String,
}

// Groups.

/// `POST /sandbox/groups`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxGroupRequest {
    #[serde(default)]
    pub client_id: String,
    #[serde(default)]
    pub subject: String,
    /// Phones (digits, `+` allowed).
    #[serde(default)]
    pub participants: Vec<String>,
    /// Phones among the members (or the session's own) that are admins.
    #[serde(default)]
    pub admins: Vec<String>,
}

/// `POST /sandbox/groups/subject`: a member of the group changes its subject.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxGroupSubject {
    #[serde(default)]
    pub client_id: String,
    /// `<id>@g.us`, a group the session's phone is in.
    #[serde(default)]
    pub jid: String,
    #[serde(default)]
    pub subject: String,
    /// The member (a phone) who renames it; the session's own phone when absent.
    #[serde(default)]
    pub by: Option<String>,
}

/// `POST /sandbox/groups/settings`: a member of the group changes one of
/// its settings (exactly one of the four).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxGroupSettings {
    #[serde(default)]
    pub client_id: String,
    /// `<id>@g.us`, a group the session's phone is in.
    #[serde(default)]
    pub jid: String,
    /// The member (a phone) who changes it; the session's own phone when absent.
    #[serde(default)]
    pub by: Option<String>,
    /// The new description; empty removes it.
    #[serde(default)]
    pub description: Option<String>,
    /// Whether only admins may send messages.
    #[serde(default)]
    pub announce: Option<bool>,
    /// Whether only admins may change the subject, description and disappearing messages.
    #[serde(default)]
    pub locked: Option<bool>,
    /// How long messages stay: 0 (they do not disappear), 86400, 604800 or 7776000.
    #[serde(default)]
    pub ephemeral_seconds: Option<u32>,
}

/// Answer of `/sandbox/groups/settings`: the group and the setting changed,
/// as the `group_update` event's `groupUpdate` shows it.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxGroupUpdated {
    pub jid: String,
    #[schema(value_type = Object)]
    pub group_update: Value,
}

/// `POST /sandbox/receipts`: a contact's phone says it received, read or
/// played messages the session sent it.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxReceipt {
    #[serde(default)]
    pub client_id: String,
    /// The contact (a phone).
    #[serde(default)]
    pub from: String,
    /// `delivered`, `read` or `played`.
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub message_ids: Vec<String>,
    /// A group (`<id>@g.us`) both are in: the member's receipt of the
    /// session's messages there.
    #[serde(default)]
    pub group: Option<String>,
}

/// `POST /sandbox/presence`: a contact comes online or goes offline.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxPresence {
    #[serde(default)]
    pub client_id: String,
    /// The contact (a phone).
    #[serde(default)]
    pub from: String,
    /// `available` or `unavailable`.
    #[serde(default)]
    pub state: String,
}

/// `POST /sandbox/typing`: a contact types, records a voice note, or stops,
/// in its chat with the session or in a group both are in.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxTyping {
    #[serde(default)]
    pub client_id: String,
    /// The contact (a phone).
    #[serde(default)]
    pub from: String,
    /// `composing`, `recording` or `paused`.
    #[serde(default)]
    pub state: String,
    /// In this group (a JID ending in `@g.us`) both are in, rather than
    /// in their chat.
    #[serde(default)]
    pub group: Option<String>,
}

/// `POST /sandbox/groups/participants`: an admin of the group changes its
/// members.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxGroupMembers {
    #[serde(default)]
    pub client_id: String,
    /// `<id>@g.us`, a group the session's phone is in.
    #[serde(default)]
    pub jid: String,
    /// The admin who makes the change (a phone; the session's own allowed).
    #[serde(default)]
    pub by: String,
    /// `add`, `remove`, `promote` or `demote`.
    #[serde(default)]
    pub action: String,
    /// Phones.
    #[serde(default)]
    pub participants: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SandboxGroupChanged {
    pub jid: String,
    pub action: String,
    /// Phones.
    pub participants: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SandboxGroupCreated {
    pub jid: String,
    pub subject: String,
}

// `POST /sandbox/history`: the chats a phone holds, which it sends each
// device it links afterwards (history sync).

/// A phone's past: replaces what was set for it before.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct SandboxHistory {
    /// The phone (digits, `+` allowed).
    pub phone: String,
    /// At most 1,000. Empty: the phone sends a history without messages.
    pub messages: Vec<SandboxPastMessage>,
    /// The chat labels the phone has (at most 100, ids distinct): each
    /// device it links learns them, and the chats they are on, from its app
    /// state's first sync.
    pub labels: Vec<SandboxPastLabel>,
}

impl SandboxHistory {
    /// The phones its messages name besides its own (checked: chats as
    /// JIDs): the contacts of its direct chats and the members who wrote in
    /// its groups.
    pub fn contacts(&self) -> std::collections::BTreeSet<&str> {
        self.messages
            .iter()
            .filter_map(|m| m.chat.strip_suffix("@s.whatsapp.net").or(m.from.as_deref()))
            .chain(
                self.labels
                    .iter()
                    .flat_map(|l| &l.chats)
                    .filter_map(|c| c.strip_suffix("@s.whatsapp.net")),
            )
            .collect()
    }
}

/// A label of a phone's past.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct SandboxPastLabel {
    /// Letters and digits, at most 32 (the phone's are small numbers).
    pub label_id: String,
    /// 1 to 100 characters.
    pub name: String,
    /// The palette's index, 0 to 19 (default 0).
    pub color: i64,
    /// The chats it is on (at most 1,000): contacts' phones or group JIDs.
    pub chats: Vec<String>,
}

/// One message of a phone's past: a text or a file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct SandboxPastMessage {
    /// A contact's phone, or a group JID (`<id>@g.us`).
    pub chat: String,
    /// Written by the phone's own account.
    pub from_me: bool,
    /// In a group, a message not from me: the member (phone) who wrote it.
    pub from: Option<String>,
    /// `text` (the default), `image`, `video`, `audio`, `document` or
    /// `sticker`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// A text's words; a file's caption (may be empty).
    pub body: String,
    /// A file's bytes, base64 (required for a file): the phone uploaded
    /// them when the message was sent.
    pub data: Option<String>,
    /// A file's MIME type (required for a file).
    pub mime_type: Option<String>,
    /// A document's file name.
    pub file_name: Option<String>,
    /// RFC 3339, not in the future; default: now.
    pub at: Option<String>,
    /// Default: a fresh id.
    pub message_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxHistorySet {
    pub phone: String,
    /// How many messages the phone now sends at a link.
    pub messages: usize,
    /// How many labels its app state now carries.
    pub labels: usize,
}

// `POST /sandbox/messages`: a message someone on the simulated network sends.

/// Every field of every `type`; which are required depends on `type`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
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
    #[serde(default, deserialize_with = "integers::optional")]
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
    #[serde(deserialize_with = "integers::optional")]
    #[schema(minimum = 1, maximum = 4294967296_u64)]
    pub size: Option<u64>,
    #[serde(deserialize_with = "integers::optional")]
    #[schema(minimum = 0)]
    pub seed: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxMessageSent {
    pub message_id: String,
}

// `GET /sandbox/outbox`: what a session put on the simulated network.

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutboxQuery {
    #[serde(default)]
    pub client_id: String,
    /// A chat JID, a user-part or a `+phone`.
    pub to: Option<String>,
    /// RFC 3339: only entries at or after this time.
    pub since: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutboxEntry {
    /// The network's id; empty for typing, receipts and delete-for-me, which have none.
    pub message_id: String,
    /// The chat JID.
    pub to: String,
    /// `text`, `image`, `video`, `audio`, `document`, `sticker`, `poll`, `interactive`,
    /// `reaction`, `edit`, `location`, `contact`, `typing`, `revoke`, `delete_for_me`,
    /// `read` or `unread`.
    pub kind: String,
    /// What was sent.
    #[schema(value_type = Object)]
    pub payload: Value,
    pub at: DateTime<Utc>,
}

/// Oldest first.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct Outbox {
    pub messages: Vec<OutboxEntry>,
}

/// `POST /sandbox/calls` (Parley's): the contact `from` calls the session.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxCall {
    #[serde(default)]
    pub client_id: String,
    /// The caller (a phone).
    #[serde(default)]
    pub from: String,
    /// A video call (default: voice).
    #[serde(default)]
    pub video: bool,
    /// A group call of this group (a JID ending in `@g.us`) both are in.
    #[serde(default)]
    pub group: Option<String>,
}

/// `POST /sandbox/labels`: the session's phone changes a chat label (app
/// state), as its user would in the app: `chat` puts the label on that
/// chat (or takes it off, `labeled: false`); else `deleted: true` deletes
/// it; else it is created or changed (`name` required, `color` 0 unless
/// given).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxLabel {
    #[serde(default)]
    pub client_id: String,
    pub label_id: Option<String>,
    pub name: Option<String>,
    pub color: Option<i64>,
    pub deleted: Option<bool>,
    /// A phone number (a contact's chat) or a group JID.
    pub chat: Option<String>,
    pub labeled: Option<bool>,
}

/// The answer of `POST /sandbox/calls`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxCallPlaced {
    /// The call's id, as its events and `/reject-call` name it.
    pub call_id: String,
}

/// `POST /sandbox/calls/end` (Parley's): the caller ends its call.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxCallEnd {
    #[serde(default)]
    pub client_id: String,
    /// The caller (a phone).
    #[serde(default)]
    pub from: String,
    #[serde(default)]
    pub call_id: String,
    /// `timeout`, `accepted_elsewhere` or `rejected_elsewhere`; absent:
    /// the caller hung up.
    #[serde(default)]
    pub reason: Option<String>,
}
