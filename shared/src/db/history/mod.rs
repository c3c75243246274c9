//! The hosted inbox: chat rooms, messages and the media library of sessions
//! whose webhook is the hosted receiver.
//!
//! Writes come in batches ([`Db::history_write`]: one transaction per batch, one
//! multi-row insert of the new messages, one multi-row upsert of the rooms they
//! touch), so a writer can group many events. Every write is idempotent on
//! `(client_id, chat_room_id, message_id)`: a duplicate delivery adds no row and
//! does not count as unread twice. Reactions, edits and revokes change their
//! target and insert nothing.
//!
//! By job: `writes` (the batch, and delete-for-me), `room_deltas` (what a
//! batch changes in each room), `updates` (reactions, edits, revokes, votes
//! on their target), `rooms` (room lists), `messages` (message pages),
//! `media_library`, `unread` (counters); `rows` holds what reads answer.
mod media_library;
mod messages;
mod room_deltas;
mod rooms;
mod rows;
mod unread;
mod updates;
mod writes;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use rows::{ChatRoomRow, MediaFileRow, MediaPage, MessageRow};

/// Messages answered by the messages route: the last 200 of a room.
pub const HISTORY_LIMIT: u64 = 200;
/// Media-library paging: default and largest page size.
pub const PAGE_LIMIT_DEFAULT: u64 = 50;
pub const PAGE_LIMIT_MAX: u64 = 200;

/// Whether a session keeps a hosted inbox: it has a workspace id and its webhook
/// is the hosted receiver (compared without surrounding blanks or a trailing `/`).
pub fn hosted_inbox_active(org_id: &str, webhook_url: &str, receiver: Option<&str>) -> bool {
    let norm = |u: &str| u.trim().trim_end_matches('/').to_string();
    match receiver.map(norm) {
        Some(receiver) if !receiver.is_empty() => {
            !org_id.trim().is_empty() && norm(webhook_url) == receiver
        }
        _ => false,
    }
}

/// What the envelope says about the chat a message belongs to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoomFacts {
    pub name: String,
    pub my_lid: String,
    pub client_lid: String,
    pub is_group: bool,
    pub remote_jid: String,
    pub remote_phone: String,
    pub avatar_url: String,
}

/// The `media` object of a stored message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageMedia {
    pub mime_type: String,
    pub media_type: String,
    pub file_name: String,
    pub file_size: u64,
}

/// A media-library record for a new message.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMediaFile {
    /// The storage UUID (the library's `messageId`).
    pub id: uuid::Uuid,
    pub storage_key: String,
    pub url: String,
    pub mime_type: String,
    pub media_type: String,
    pub file_name: String,
    pub file_size: u64,
    pub caption: String,
    /// Hex SHA-256 of the bytes.
    pub sha256: String,
    pub created_at: DateTime<Utc>,
}

/// A message to store.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMessage {
    pub client_id: String,
    pub org_id: String,
    pub chat_room_id: String,
    pub message_id: String,
    pub room: RoomFacts,
    pub body: String,
    /// One of the spec's `messageType` values.
    pub message_type: String,
    pub from_me: bool,
    pub pushname: String,
    /// The sender's JID (quoted previews name it as `participant`).
    pub sender: String,
    pub sent_at: DateTime<Utc>,
    pub from_ai: bool,
    pub media: Option<MessageMedia>,
    pub download_url: String,
    pub extras: Value,
    pub media_file: Option<NewMediaFile>,
    /// Whether it is chat activity: moves `lastMessage*` and, inbound, counts as
    /// unread (vote updates are stored but are not activity).
    pub activity: bool,
    /// Whether, inbound activity, it counts as unread (not a message of the
    /// phone's history sync: the phone's own chats say what was read there).
    pub unread: bool,
}

/// The stored message an update applies to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    pub client_id: String,
    pub chat_room_id: String,
    pub message_id: String,
}

/// A change of a stored message.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// `reactor` (a user-part) reacted with `emoji`; empty removes the reaction.
    React { reactor: String, emoji: String },
    /// The body was replaced by the edit `edit_id` (applied once per edit id).
    Edit {
        edit_id: String,
        body: String,
        at: DateTime<Utc>,
    },
    /// Deleted for everyone.
    Revoke { at: DateTime<Utc> },
    /// A vote on a stored poll: `voter`'s current choice.
    Vote {
        voter: String,
        selected_options: Vec<String>,
        selected_hashes: Vec<String>,
    },
    /// Deleted for this session only.
    DeleteForMe,
}

/// One write of a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    Message(Box<NewMessage>),
    Update { target: Target, change: Change },
}

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Inserted,
    /// The message was stored before: nothing changed.
    Duplicate,
    Updated,
    /// The update's target is not stored: nothing changed.
    TargetMissing,
}

#[cfg(test)]
mod tests {
    use super::hosted_inbox_active;

    #[test]
    fn hosted_inbox_needs_an_org_and_the_receiver() {
        let r = Some("https://inbox.example/hook/");
        assert!(hosted_inbox_active("org1", "https://inbox.example/hook", r));
        assert!(hosted_inbox_active(
            "org1",
            " https://inbox.example/hook/ ",
            r
        ));
        assert!(!hosted_inbox_active("", "https://inbox.example/hook", r));
        assert!(!hosted_inbox_active(
            "org1",
            "https://other.example/hook",
            r
        ));
        assert!(!hosted_inbox_active(
            "org1",
            "https://inbox.example/hook",
            None
        ));
        assert!(!hosted_inbox_active("org1", "", Some("")));
    }
}
