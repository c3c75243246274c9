//! Messages the network delivers to a session (received, or sent from the linked
//! phone itself), as every adapter hands them over, and the `fromMe` echo of a
//! message sent through the API.
use chrono::{DateTime, Utc};

use crate::address::{Jid, MessageId};
use crate::media::{MediaDownload, MediaInfo, MediaKind};

/// One message activity on the network.
#[derive(Debug, Clone, PartialEq)]
pub struct InboundMessage {
    /// Network message id (for reactions, edits and revokes: the update's own id).
    pub id: MessageId,
    /// The chat: a contact's JID (`…@lid` or `…@s.whatsapp.net`), a group
    /// (`…@g.us`), or a broadcast / status / newsletter JID.
    pub chat: Jid,
    /// The other party's LID user-part in a direct chat (the contact, also when
    /// the phone itself sent the message); empty for groups.
    pub chat_lid: String,
    /// Who wrote it (in groups the participant; `from_me`: this session).
    pub sender: Jid,
    /// The sender's phone digits when the network revealed them.
    pub sender_phone: Option<String>,
    pub from_me: bool,
    /// The sender's self-set name.
    pub push_name: String,
    /// The group's subject, for group chats.
    pub group_subject: Option<String>,
    pub timestamp: DateTime<Utc>,
    pub content: Content,
    pub quoted: Option<QuotedRef>,
    pub mentions: Vec<String>,
    pub is_forwarded: bool,
}

/// The message a reply quotes, as carried by the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotedRef {
    pub message_id: MessageId,
    pub participant: Option<Jid>,
    /// The quoted text when the network carries it (else filled from history).
    pub body: String,
    pub kind: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    Text {
        body: String,
    },
    Media {
        kind: MediaKind,
        info: MediaInfo,
        download: MediaDownload,
    },
    Location {
        latitude: f64,
        longitude: f64,
        name: String,
        address: String,
        live: bool,
    },
    Contact {
        display_name: String,
        vcard: String,
    },
    Poll {
        name: String,
        options: Vec<String>,
        selectable_count: u32,
    },
    /// A vote, decrypted by the adapter to the SHA-256 of each chosen option.
    Vote {
        poll_message_id: MessageId,
        selected_hashes: Vec<[u8; 32]>,
    },
    InteractiveReply {
        /// The message whose button was pressed, when the reply names it.
        target_id: Option<MessageId>,
        button_id: String,
        display_text: String,
    },
    Reaction {
        target_id: MessageId,
        emoji: String,
    },
    Edit {
        target_id: MessageId,
        body: String,
    },
    Revoke {
        target_id: MessageId,
    },
    /// Not a message: an admin (the message's sender) changed the group's
    /// members. Delivered only to sessions that turned it on.
    GroupChange {
        action: GroupAction,
        participants: Vec<Jid>,
    },
    /// Not a message: a member (the message's sender) changed the group's
    /// subject, description or one of its settings. Delivered only to
    /// sessions that turned it on; a new subject also names the group in
    /// the events after it, for every session.
    GroupUpdate(GroupSetting),
    /// Not a message: the sender's device says it received, read or played
    /// messages this session sent (`message_ids`). Delivered only to
    /// sessions that turned it on.
    Receipt {
        status: ReceiptStatus,
        message_ids: Vec<MessageId>,
    },
    /// Not a message: the sender is typing or recording a voice note in the
    /// chat, or stopped. Delivered only to sessions that turned it on.
    Typing {
        state: TypingState,
    },
    /// Not a message: the sender, whose presence the session subscribed to,
    /// is online (`available`) or went offline, last seen at `last_seen`
    /// when the network says. Delivered only to sessions that turned it on.
    Presence {
        available: bool,
        last_seen: Option<DateTime<Utc>>,
    },
    /// Not a message: the sender calls the account, or the call ended.
    /// Delivered only to sessions that turned it on.
    Call(CallNotice),
    /// Not a message: one of the account's devices (its phone) changed a
    /// chat label (app state). Kept by every session; an event only for
    /// sessions that turned it on.
    Label(LabelNotice),
}

/// A change of one of the account's chat labels, made on one of its devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelNotice {
    pub label_id: String,
    pub change: LabelChange,
    /// Part of the account's labels as they were when the device linked
    /// (app state's first sync): kept, never an event.
    pub from_full_sync: bool,
}

impl LabelNotice {
    /// The notice as the account `own` tells it to its devices: in its own
    /// chat (a label's edit) or in the chat it names (a label on a chat),
    /// its id `<labelId>-[<chat user>-]<ms>` from the change's time in
    /// milliseconds; `None` when the ids make no message id.
    pub fn into_message(self, own: &Jid, at_ms: i64) -> Option<InboundMessage> {
        let (id, chat) = match &self.change {
            LabelChange::Chat { chat, .. } => (
                format!("{}-{}-{at_ms}", self.label_id, chat.user()),
                chat.clone(),
            ),
            LabelChange::Saved { .. } | LabelChange::Deleted => {
                (format!("{}-{at_ms}", self.label_id), own.clone())
            }
        };
        let id = MessageId::new(id)?;
        Some(InboundMessage {
            from_me: true,
            ..InboundMessage::notice(id, chat, own.clone(), Content::Label(self))
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelChange {
    /// Created, or given this name and colour.
    Saved {
        name: String,
        color: i32,
    },
    Deleted,
    /// Put on the chat `chat`, or taken off it.
    Chat {
        chat: Jid,
        labeled: bool,
    },
}

/// A call the network rings the account's devices for, or the end of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallNotice {
    /// What the session answers the network with to reject it.
    pub call: CallRef,
    pub phase: CallPhase,
    /// A video call (else voice); known from the offer.
    pub video: bool,
    /// The group the call is for, when it is a group call.
    pub group: Option<Jid>,
    /// The session rejected it as it arrived (its call setting).
    pub rejected: bool,
}

/// A call as the network names it: its id, the device that signals it and
/// the account that started it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRef {
    pub id: String,
    /// The device the call's signalling came from (where a reject goes).
    pub peer: Jid,
    /// The account that started the call.
    pub creator: Jid,
}

/// Where a call is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallPhase {
    /// It rings.
    Offer,
    /// It ended before the session answered: `reason` as the network says
    /// it (`timeout`, `accepted_elsewhere`, `rejected_elsewhere`, `offline`
    /// for one that rang while the device was offline...; `None` when the
    /// caller hung up).
    Ended { reason: Option<String> },
}

impl CallPhase {
    pub fn as_str(&self) -> &'static str {
        match self {
            CallPhase::Offer => "offer",
            CallPhase::Ended { .. } => "ended",
        }
    }
}

/// What a contact is doing in a chat (the network's chat state).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TypingState {
    /// Typing a message.
    Composing,
    /// Recording a voice note.
    Recording,
    /// Stopped typing or recording.
    Paused,
}

impl TypingState {
    pub fn as_str(self) -> &'static str {
        match self {
            TypingState::Composing => "composing",
            TypingState::Recording => "recording",
            TypingState::Paused => "paused",
        }
    }

    pub fn parse(raw: &str) -> Option<TypingState> {
        Some(match raw {
            "composing" => TypingState::Composing,
            "recording" => TypingState::Recording,
            "paused" => TypingState::Paused,
            _ => return None,
        })
    }
}

/// What a receipt says of the messages it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReceiptStatus {
    Delivered,
    Read,
    Played,
}

impl ReceiptStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ReceiptStatus::Delivered => "delivered",
            ReceiptStatus::Read => "read",
            ReceiptStatus::Played => "played",
        }
    }

    pub fn parse(raw: &str) -> Option<ReceiptStatus> {
        Some(match raw {
            "delivered" => ReceiptStatus::Delivered,
            "read" => ReceiptStatus::Read,
            "played" => ReceiptStatus::Played,
            _ => return None,
        })
    }
}

/// What a change of a group's own settings set. Serialized as the one
/// field of an event's `groupUpdate` (`{"announce": true}`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum GroupSetting {
    /// The group's name.
    Subject(String),
    /// The group's description; empty when it was removed.
    Description(String),
    /// Whether only admins may send messages to the group.
    Announce(bool),
    /// Whether only admins may change the group's subject, description and picture.
    Locked(bool),
    /// How long messages stay before they disappear, in seconds; 0 when they
    /// no longer do.
    #[serde(rename = "ephemeralSeconds")]
    Ephemeral(u32),
}

/// What a change of a group's members did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupAction {
    Add,
    Remove,
    Promote,
    Demote,
}

impl GroupAction {
    pub fn as_str(self) -> &'static str {
        match self {
            GroupAction::Add => "add",
            GroupAction::Remove => "remove",
            GroupAction::Promote => "promote",
            GroupAction::Demote => "demote",
        }
    }

    pub fn parse(raw: &str) -> Option<GroupAction> {
        Some(match raw {
            "add" => GroupAction::Add,
            "remove" => GroupAction::Remove,
            "promote" => GroupAction::Promote,
            "demote" => GroupAction::Demote,
            _ => return None,
        })
    }
}

impl Content {
    /// A poll vote (resolving its option names may ask the customer's lookup).
    pub fn is_vote(&self) -> bool {
        matches!(self, Content::Vote { .. })
    }

    /// Not a message but news of others (a group's member or settings
    /// change, a receipt, a chat state): an event a session turns on, never
    /// a row of the inbox.
    pub fn is_notice(&self) -> bool {
        matches!(
            self,
            Content::GroupChange { .. }
                | Content::GroupUpdate(_)
                | Content::Receipt { .. }
                | Content::Typing { .. }
                | Content::Presence { .. }
                | Content::Call(_)
                | Content::Label(_)
        )
    }

    /// The group's new subject, when this is the change of it.
    pub fn new_subject(&self) -> Option<&str> {
        match self {
            Content::GroupUpdate(GroupSetting::Subject(subject)) => Some(subject),
            _ => None,
        }
    }
}

impl InboundMessage {
    /// A notice (`content`: a receipt, a chat state, a presence, a group's
    /// change) from `sender` in `chat`, timed now: not from the account, no
    /// push name, quote or mention; the caller sets what else it knows.
    pub fn notice(id: MessageId, chat: Jid, sender: Jid, content: Content) -> Self {
        InboundMessage {
            id,
            chat,
            chat_lid: String::new(),
            sender,
            sender_phone: None,
            from_me: false,
            push_name: String::new(),
            group_subject: None,
            timestamp: Utc::now(),
            content,
            quoted: None,
            mentions: Vec::new(),
            is_forwarded: false,
        }
    }

    pub fn is_group(&self) -> bool {
        self.chat.is_group()
    }

    /// Status updates, broadcast lists and channels: never delivered as
    /// messages.
    pub fn is_broadcast_or_channel(&self) -> bool {
        matches!(self.chat.server(), "broadcast" | "newsletter")
    }

    /// A contact's status update (a story, `status@broadcast`).
    pub fn is_status(&self) -> bool {
        self.chat.as_str() == "status@broadcast"
    }
}
