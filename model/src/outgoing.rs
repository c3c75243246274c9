//! What a customer asks to put on the network, validated and typed: messages
//! and chat actions. One [`Content`] serves the whole way: the API's compose
//! step builds it with a [`MediaRequest`] (a URL or a media-store key, never
//! bytes), the bus carries it, and the session's owner hands the network port
//! the same content with the file in hand (its own media form, `M`).
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::address::MessageId;
use crate::media::MediaInfo;
use crate::recipients::Recipient;

/// A message to send, with the common envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutgoingMessage {
    pub to: Recipient,
    pub content: Content<MediaRequest>,
    /// Reply target (unknown ids still send).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quoted_message_id: Option<MessageId>,
    /// Mentioned user-parts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mentions: Vec<String>,
    /// The caller's `metaData`, handed to the after-send hook (never to the network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    /// A status update (`to` is [`Recipient::Status`]): who sees it and how
    /// a text status looks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Box<StatusPost>>,
}

/// A status update's audience and a text status's look (`/send-status`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusPost {
    /// Who sees it; `None`: every contact the session knows.
    pub audience: Option<Vec<Recipient>>,
    /// A text status's background, `0xAARRGGBB`.
    pub background_argb: Option<u32>,
    /// A text status's font: the network's number of one of [`STATUS_FONTS`].
    pub font: Option<u32>,
}

/// Most contacts one status goes to: named, or every contact the session
/// knows (the most recent).
pub const STATUS_AUDIENCE_MAX: usize = 1024;

/// The fonts of a text status, by name, with the network's number of each.
pub const STATUS_FONTS: &[(&str, u32)] = &[
    ("system", 0),
    ("system_text", 1),
    ("fb_script", 2),
    ("system_bold", 6),
    ("morningbreeze_regular", 7),
    ("calistoga_regular", 8),
    ("exo2_extrabold", 9),
    ("courierprime_bold", 10),
];

/// The message itself; `M` is how a file travels ([`MediaRequest`] until the
/// session's owner has it in hand).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content<M = MediaRequest> {
    Text {
        body: String,
    },
    Media(M),
    Poll {
        name: String,
        options: Vec<String>,
        selectable_count: u32,
    },
    Interactive {
        body: String,
        footer: Option<String>,
        buttons: Vec<Button>,
    },
    /// Empty `emoji` removes the reaction.
    Reaction {
        target_id: MessageId,
        emoji: String,
        target_from_me: bool,
    },
    Edit {
        target_id: MessageId,
        body: String,
    },
    Location {
        latitude: f64,
        longitude: f64,
        name: Option<String>,
        address: Option<String>,
    },
    Contact {
        display_name: String,
        vcard: String,
    },
}

impl<M> Content<M> {
    /// The send route's name for logs.
    pub fn name(&self) -> &'static str {
        match self {
            Content::Text { .. } => "text",
            Content::Media(_) => "media",
            Content::Poll { .. } => "poll",
            Content::Interactive { .. } => "interactive",
            Content::Reaction { .. } => "reaction",
            Content::Edit { .. } => "edit",
            Content::Location { .. } => "location",
            Content::Contact { .. } => "contact",
        }
    }

    /// This content in another media form, which it does not need: every
    /// kind but `Media`. A media message gives back its file (`Err`), for
    /// whoever turns it into the other form.
    pub fn plain<N>(self) -> Result<Content<N>, M> {
        Ok(match self {
            Content::Media(file) => return Err(file),
            Content::Text { body } => Content::Text { body },
            Content::Poll {
                name,
                options,
                selectable_count,
            } => Content::Poll {
                name,
                options,
                selectable_count,
            },
            Content::Interactive {
                body,
                footer,
                buttons,
            } => Content::Interactive {
                body,
                footer,
                buttons,
            },
            Content::Reaction {
                target_id,
                emoji,
                target_from_me,
            } => Content::Reaction {
                target_id,
                emoji,
                target_from_me,
            },
            Content::Edit { target_id, body } => Content::Edit { target_id, body },
            Content::Location {
                latitude,
                longitude,
                name,
                address,
            } => Content::Location {
                latitude,
                longitude,
                name,
                address,
            },
            Content::Contact {
                display_name,
                vcard,
            } => Content::Contact {
                display_name,
                vcard,
            },
        })
    }
}

/// A media send: where the file is and how to present it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaRequest {
    pub source: MediaSource,
    /// As the customer asked: a `mime_type` overrides the type found in the
    /// response headers or the file name, an empty `file_name` is taken from
    /// the URL, `ptt` sends audio as a voice note.
    pub info: MediaInfo,
    /// A WebP image as a sticker.
    pub sticker: bool,
}

/// Where the owner gets the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum MediaSource {
    /// Downloaded by the owner through the egress guard.
    Url { url: String },
    /// Uploaded to the media store under a temporary key; the owner reads it
    /// back and deletes it after the send.
    Upload { key: String },
}

/// An interactive button, checked per type (JSON as in the API: `type`,
/// `displayText`, `id`, `url`, `phoneNumber`, `copyCode`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Button {
    QuickReply {
        display_text: String,
        id: String,
    },
    CtaUrl {
        display_text: String,
        url: String,
    },
    CtaCall {
        display_text: String,
        phone_number: String,
    },
    CtaCopy {
        display_text: String,
        id: String,
        copy_code: String,
    },
}

/// How `/delete-message` deletes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeleteMode {
    /// Revoke for every participant (own messages only; the network enforces it).
    Everyone,
    /// Delete on this account's devices only.
    Me,
}

/// Chat actions that are not messages of their own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum ChatAction {
    Typing {
        to: Recipient,
        composing: bool,
    },
    Delete {
        to: Recipient,
        message_id: MessageId,
        from_me: bool,
        mode: DeleteMode,
    },
    MarkRead {
        to: Recipient,
        message_ids: Vec<MessageId>,
    },
    MarkUnread {
        to: Recipient,
    },
    /// Ask the network for a contact's presence (online, last seen) from
    /// now on, for as long as the connection lasts.
    SubscribePresence {
        to: Recipient,
    },
    /// Say the account is online (`available`) or offline, to the contacts
    /// that subscribed to its presence.
    SetPresence {
        available: bool,
    },
    /// Reject the call `call_id` that rings the session's devices now.
    RejectCall {
        call_id: String,
    },
    /// Delete (revoke) the status update `message_id` the session posted,
    /// for the audience it was shown to.
    DeleteStatus {
        message_id: String,
    },
    /// Create or change (name, colour) the account's label `label`.
    SaveLabel {
        label: Label,
    },
    /// Delete the account's label `label_id`.
    DeleteLabel {
        label_id: String,
    },
    /// Put the label `label_id` on the chat `to`, or take it off.
    LabelChat {
        to: Recipient,
        label_id: String,
        labeled: bool,
    },
}

/// A chat label of the account (an app-state `label_edit`): its id (a small
/// number the account's devices pick), name and colour (an index into the
/// network's palette, 0 to [`LABEL_COLORS`] - 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Label {
    pub id: String,
    pub name: String,
    pub color: i32,
}

/// How many colours the network's label palette has.
pub const LABEL_COLORS: i32 = 20;
/// The longest label name, in characters.
pub const LABEL_NAME_MAX: usize = 100;
/// The longest label id taken (the network's are short numbers).
pub const LABEL_ID_MAX: usize = 32;

impl Label {
    /// A label id as given (`field`): required, of letters and digits.
    pub fn parse_id(field: &str, value: Option<&str>) -> Result<String, crate::Invalid> {
        let id = value.map(str::trim).unwrap_or_default();
        if id.is_empty() {
            return Err(crate::Invalid::new(format!("{field} is required")));
        }
        if id.len() > LABEL_ID_MAX || !id.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(crate::Invalid::new(format!(
                "{field}: {id:?} is not a label id (letters and digits, at most {LABEL_ID_MAX})"
            )));
        }
        Ok(id.to_string())
    }

    /// A label name, when given: 1 to [`LABEL_NAME_MAX`] characters, trimmed.
    pub fn parse_name(value: Option<&str>) -> Result<Option<String>, crate::Invalid> {
        let Some(name) = value.map(str::trim) else {
            return Ok(None);
        };
        let chars = name.chars().count();
        if chars == 0 || chars > LABEL_NAME_MAX {
            return Err(crate::Invalid::new(format!(
                "name: 1 to {LABEL_NAME_MAX} characters"
            )));
        }
        Ok(Some(name.to_string()))
    }

    /// A label colour, when given: 0 to [`LABEL_COLORS`] - 1.
    pub fn parse_color(value: Option<i64>) -> Result<Option<i32>, crate::Invalid> {
        value
            .map(|c| {
                i32::try_from(c)
                    .ok()
                    .filter(|c| (0..LABEL_COLORS).contains(c))
                    .ok_or_else(|| crate::Invalid::new(format!("color: 0 to {}", LABEL_COLORS - 1)))
            })
            .transpose()
    }
}

impl ChatAction {
    pub fn name(&self) -> &'static str {
        match self {
            ChatAction::Typing { .. } => "typing",
            ChatAction::Delete { .. } => "delete",
            ChatAction::MarkRead { .. } => "mark-read",
            ChatAction::MarkUnread { .. } => "mark-unread",
            ChatAction::SubscribePresence { .. } => "subscribe-presence",
            ChatAction::SetPresence { .. } => "set-presence",
            ChatAction::RejectCall { .. } => "reject-call",
            ChatAction::DeleteStatus { .. } => "delete-status",
            ChatAction::SaveLabel { .. } => "set-label",
            ChatAction::DeleteLabel { .. } => "delete-label",
            ChatAction::LabelChat { .. } => "set-chat-label",
        }
    }
}
