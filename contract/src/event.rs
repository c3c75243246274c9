//! The webhook event: the spec's envelope and its per-type objects (camelCase JSON).
use serde::{Deserialize, Serialize};
use serde_json::Value;

use parley_model::media::{MediaDownload, MediaInfo};

/// Value of the envelope's `event` field for message activity.
pub const MESSAGE_RECEIVED: &str = "message.received";

/// Value of the envelope's `event` field for a change of a group's members
/// (an opt-in event, `/set-events`).
pub const GROUP_PARTICIPANTS_CHANGED: &str = "group.participants";

/// The type of that event (`type` and the `X-SN-Event` header).
pub const GROUP_PARTICIPANTS: &str = "group_participants";

/// Value of the envelope's `event` field for a change of a group's subject,
/// description or settings (an opt-in event).
pub const GROUP_UPDATED: &str = "group.update";

/// The type of that event.
pub const GROUP_UPDATE: &str = "group_update";

/// Value of the envelope's `event` field for a receipt of a message the
/// session sent (an opt-in event).
pub const MESSAGE_RECEIPT: &str = "message.receipt";

/// The type of that event.
pub const RECEIPT: &str = "receipt";

/// Value of the envelope's `event` field for a contact typing, recording
/// or stopping in a chat (an opt-in event).
pub const CHAT_TYPING: &str = "chat.typing";

/// The type of that event.
pub const TYPING: &str = "typing";

/// Value of the envelope's `event` field for a contact's presence (online,
/// offline) the session subscribed to (an opt-in event).
pub const CONTACT_PRESENCE: &str = "contact.presence";

/// The type of that event.
pub const PRESENCE: &str = "presence";

/// Value of the envelope's `event` field for a contact's status update (a
/// story, `status@broadcast`) (an opt-in event).
pub const STATUS_RECEIVED: &str = "status.received";

/// The type of that event.
pub const STATUS: &str = "status";

/// Value of the envelope's `event` field for a call ringing the session's
/// account (an opt-in event).
pub const CALL_OFFER: &str = "call.offer";

/// Value of the envelope's `event` field for a call that stopped ringing
/// before the session answered it (the caller gave up, or another device
/// answered or declined it).
pub const CALL_ENDED: &str = "call.ended";

/// The type of both.
pub const CALL: &str = "call";

/// Values of the envelope's `event` field for a chat label the account's
/// phone (or another of its devices) created or changed, deleted, or put on
/// a chat or took off (opt-in events).
pub const LABEL_SAVED: &str = "label.saved";
pub const LABEL_DELETED: &str = "label.deleted";
pub const LABEL_CHAT: &str = "label.chat";

/// The type of the three.
pub const LABEL: &str = "label";

/// The events a session may turn on beside its messages (`/set-events`).
pub const OPT_IN_EVENTS: &[&str] = &[
    GROUP_PARTICIPANTS,
    GROUP_UPDATE,
    RECEIPT,
    TYPING,
    PRESENCE,
    STATUS,
    CALL,
    LABEL,
];

/// Every `type` of an event a session can produce: the message types and
/// the opt-in events' (what a webhook may select).
pub fn event_types() -> Vec<&'static str> {
    TYPES.iter().chain(OPT_IN_EVENTS).copied().collect()
}

/// Message event types (`type` and the `X-SN-Event` header).
pub const TYPES: &[&str] = &[
    "text",
    "image",
    "video",
    "audio",
    "document",
    "sticker",
    "poll_creation",
    "vote_update",
    "interactive_reply",
    "contact",
    "location",
    "reaction",
    "edit",
    "revoke",
];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Envelope {
    pub event: String,
    /// The event's id in the event log, and its `webhook-id`: the same at every
    /// attempt and redelivery.
    pub event_id: String,
    /// The event's place in its session's log: gap-free, increasing from 1.
    pub seq: u64,
    #[serde(rename = "type")]
    pub kind: String,
    pub client_id: String,
    pub org_id: String,
    /// RFC 3339 UTC send time.
    pub timestamp: String,
    pub chat_room_id: String,
    pub my_lid: String,
    pub client_lid: String,
    pub remote_jid: String,
    pub remote_name: String,
    pub remote_phone: String,
    pub remote_username: String,
    pub push_name: String,
    pub avatar_url: String,
    pub from_me: bool,
    pub is_group: bool,
    pub message_id: String,
    pub body: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quoted: Option<Quoted>,
    pub mentions: Vec<String>,
    pub is_forwarded: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media: Option<Media>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll: Option<Poll>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll_vote: Option<PollVote>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interactive: Option<InteractiveReply>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contact: Option<Contact>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reaction: Option<Reaction>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edit: Option<Edit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revoke: Option<Revoke>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<Group>,
    /// `group_participants` events: who joined, left, or changed role.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_change: Option<GroupChange>,
    /// `group_update` events: the group's setting that changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_update: Option<GroupUpdate>,
    /// `receipt` events: what the contact's device says of which messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<ReceiptInfo>,
    /// `typing` events: what the sender is doing in the chat.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub typing: Option<TypingInfo>,
    /// `presence` events: whether the contact is online, and when it was last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presence: Option<PresenceInfo>,
    /// `status` events: what kind of message the status is (`text`,
    /// `image`, `video`...; its body, media or other fields as for that
    /// message type).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<StatusInfo>,
    /// `call` events: the call, and where it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<CallInfo>,
    /// `label` events: the label, and what changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<LabelInfo>,
    /// The hosted inbox's `messageType` when the event type does not tell it:
    /// a message sent with buttons is delivered as `text` and stored as
    /// `interactive`. Never part of the event.
    #[serde(skip)]
    pub stored_type: Option<&'static str>,
    /// A message of the phone's history sync: stored in the hosted inbox
    /// without counting as unread, never delivered. Never part of the event.
    #[serde(skip)]
    pub from_history: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Quoted {
    pub message_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub participant: Option<String>,
    pub body: String,
    #[serde(rename = "type")]
    pub kind: String,
}

/// Send-time `metaData`, echoed on `fromMe` events.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    #[serde(rename = "fromAI")]
    pub from_ai: bool,
    pub user_id: Option<Value>,
    pub user_name: Option<Value>,
    pub sender: Option<Value>,
    pub name: Option<Value>,
    /// The whole `metaData` object as given.
    pub raw: Value,
}

impl Meta {
    /// Builds `meta` from a send's `metaData` object.
    pub fn from_metadata(raw: &Value) -> Meta {
        let get = |k: &str| raw.get(k).cloned();
        Meta {
            from_ai: raw.get("fromAI").and_then(Value::as_bool).unwrap_or(false),
            user_id: get("userId"),
            user_name: get("userName"),
            sender: get("sender"),
            name: get("name"),
            raw: raw.clone(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Media {
    pub media_type: String,
    /// `mimeType`, `fileName`, `caption`, `ptt`: the model's, as they are.
    #[serde(flatten)]
    pub info: MediaInfo,
    pub file_size: u64,
    pub download: MediaDownload,
    /// Permanent link when the hosted inbox stored the file, else empty.
    pub download_url: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Poll {
    pub name: String,
    pub options: Vec<String>,
    pub selectable_count: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PollVote {
    pub poll_message_id: String,
    /// Whether option names could be resolved.
    pub resolved: bool,
    pub selected_options: Vec<String>,
    /// Hex SHA-256 of each chosen option.
    pub selected_hashes: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InteractiveReply {
    pub target_id: String,
    pub button_id: String,
    pub display_text: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Contact {
    pub display_name: String,
    pub vcard: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Location {
    pub latitude: f64,
    pub longitude: f64,
    pub name: String,
    pub address: String,
    pub live: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reaction {
    pub target_id: String,
    /// Empty when the reaction was removed.
    pub emoji: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Edit {
    pub target_id: String,
    pub body: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Revoke {
    pub target_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Group {
    pub jid: String,
    pub subject: String,
    /// The sender's JID inside the group.
    pub participant: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub participant_phone: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub participant_username: Option<String>,
}

/// A change of a group's members; the group and who made it are in `group`
/// (`participant`, the admin; empty when the network does not say).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupChange {
    /// `add`, `remove`, `promote` or `demote`.
    pub action: String,
    /// The members it concerns, as JIDs (`…@lid`, or `…@s.whatsapp.net`
    /// when the network names them by phone).
    pub participants: Vec<String>,
}

/// A change of a group's own settings: exactly one field is present, the one
/// that changed; the group and who changed it are in `group`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupUpdate {
    /// The group's new name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// The group's new description; empty when it was removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether only admins may now send messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub announce: Option<bool>,
    /// Whether only admins may now change the subject, description and picture.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locked: Option<bool>,
    /// How long messages now stay before they disappear, in seconds (0: they do not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ephemeral_seconds: Option<u32>,
}

/// A receipt: `delivered`, `read` or `played`, of the session's messages
/// `messageIds`; the reader is the envelope's sender (`group.participant` in
/// a group).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptInfo {
    pub status: String,
    pub message_ids: Vec<String>,
}

/// A chat state: the sender (`group.participant` in a group) is
/// `composing` (typing), `recording` (a voice note) or `paused` (stopped).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TypingInfo {
    pub state: String,
}

/// A contact's presence: `available` (online) or `unavailable`, with
/// `lastSeen` (RFC 3339) when the network tells it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PresenceInfo {
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_seen: Option<String>,
}

/// A contact's status update: the message type it has.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusInfo {
    #[serde(rename = "type")]
    pub kind: String,
}

/// A chat label of the session's account, as one of its devices changed it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelInfo {
    pub label_id: String,
    /// `label.saved`: its name and colour (0 to 19).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<i32>,
    /// `label.chat`: the chat (its JID) and whether the label is on it now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chat_jid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub labeled: Option<bool>,
}

/// A call to the session's account.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallInfo {
    /// The call's id (also the event's `messageId`; `/reject-call` takes it).
    pub call_id: String,
    /// `offer` (it rings) or `ended`.
    pub state: String,
    /// A video call (else voice); `false` in an `ended` event, which does
    /// not say.
    pub video: bool,
    /// The group of a group call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_jid: Option<String>,
    /// In an `offer`: the session rejected it as it came
    /// (`/set-call-rejection`).
    pub rejected: bool,
    /// In an `ended` event, what the network said of the end (`timeout`,
    /// `accepted_elsewhere`, `rejected_elsewhere`, `offline`); absent when
    /// the caller hung up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_serializes_with_the_spec_names() {
        let e = Envelope {
            event: MESSAGE_RECEIVED.into(),
            kind: "text".into(),
            client_id: "c1".into(),
            ..Default::default()
        };
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["type"], "text");
        assert_eq!(v["clientId"], "c1");
        for absent in ["media", "quoted", "group", "meta"] {
            assert!(v.get(absent).is_none(), "{absent}");
        }
        assert_eq!(v["isForwarded"], false);
    }

    #[test]
    fn media_key_never_shows_in_debug_output() {
        let d = MediaDownload {
            media_key: "c2VjcmV0".into(),
            ..Default::default()
        };
        assert!(!format!("{d:?}").contains("c2VjcmV0"));
    }

    #[test]
    fn meta_from_metadata() {
        let m = Meta::from_metadata(&serde_json::json!({"fromAI": true, "userId": 7}));
        assert!(m.from_ai);
        assert_eq!(m.user_id, Some(serde_json::json!(7)));
    }
}
