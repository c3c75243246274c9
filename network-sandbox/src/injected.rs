//! A message someone on the simulated network sends to a session
//! (`POST /sandbox/messages`), as it travels to the session's owner. Files are
//! already on the sandbox CDN: only where to fetch them travels.
use serde::{Deserialize, Serialize};

use parley_model::address::MessageId;
use parley_model::media::{MediaDownload, MediaInfo};

/// Who sends it: a contact's phone, or the linked phone itself.
pub const FROM_ME: &str = "me";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InjectedMessage {
    /// Phone digits, or [`FROM_ME`].
    pub from: String,
    /// A phone (digits) or a JID (`…@g.us`, `…@broadcast`, `…@newsletter`);
    /// `None`: the direct chat with `from`.
    pub chat: Option<String>,
    pub message_id: Option<MessageId>,
    pub quoted_message_id: Option<MessageId>,
    #[serde(default)]
    pub mentions: Vec<String>,
    #[serde(default)]
    pub is_forwarded: bool,
    pub content: InjectedContent,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InjectedContent {
    Text {
        body: String,
    },
    Media {
        /// `image`, `video`, `audio`, `document` or `sticker`.
        kind: String,
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
    PollCreation {
        name: String,
        options: Vec<String>,
        selectable_count: u32,
    },
    /// Option texts: the network turns them into hashes.
    VoteUpdate {
        poll_message_id: MessageId,
        selected_options: Vec<String>,
    },
    InteractiveReply {
        target_id: MessageId,
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
}
