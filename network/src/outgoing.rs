//! What the network port is asked to send: a resolved chat JID and the
//! message's [`Content`] (the model's, every kind) with its file in hand, shaped
//! after whatsapp-rust's client (`send_message` with a `wa::Message`, `upload`
//! for media, `send_reaction`, `edit_message`, `revoke_message`,
//! `mark_as_read`, chat-state and app-state patches), and what the network
//! answers.
use chrono::{DateTime, Utc};
use parley_contract::spool::FileBody;
use parley_model::address::{Jid, MessageId};
pub use parley_model::media::{MediaInfo, MediaKind};
use parley_model::outgoing::Content;

/// A message for [`super::Connection::send`].
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    /// The chat JID (`…@lid`, `…@s.whatsapp.net` or `…@g.us`).
    pub to: Jid,
    /// Every kind of the model, reactions and edits included.
    pub content: Content<MediaFile>,
    /// Reply target (`ContextInfo.stanza_id`).
    pub quoted_id: Option<MessageId>,
    /// Mentioned user-parts (`ContextInfo.mentioned_jid`).
    pub mentions: Vec<String>,
    /// A status update (`to` is `status@broadcast`): who sees it and how a
    /// text status looks.
    pub status: Option<StatusOut>,
}

/// A status update's audience (user JIDs) and a text status's look.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusOut {
    pub audience: Vec<Jid>,
    /// A text status's background, `0xAARRGGBB`.
    pub background_argb: Option<u32>,
    /// A text status's font (the network's number).
    pub font: Option<u32>,
}

/// A file to upload and send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaFile {
    pub kind: MediaKind,
    /// The file's bytes, usually spooled to disk: read them as a stream.
    pub data: FileBody,
    /// Its type, name and caption, fitted to its kind ([`MediaInfo::fitted`]).
    pub info: MediaInfo,
}

/// An earlier message an update refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageRef {
    pub id: MessageId,
    /// Whether this session sent it.
    pub from_me: bool,
}

/// What the network accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentMessage {
    /// The network's id of the message (or of the reaction, edit or revoke).
    pub message_id: MessageId,
    /// The chat JID.
    pub to: Jid,
    /// `text`, `image`, …, `reaction`, `edit`, `revoke` (the outbox kinds).
    pub kind: &'static str,
    pub at: DateTime<Utc>,
}

/// A fresh message id as the network's clients make them (WhatsApp Web, and
/// whatsapp-rust after it): `3EB0` and 18 uppercase hex digits.
pub fn new_message_id() -> MessageId {
    fresh_id("3EB0", 9)
}

/// An id for a contact's chat state, to which the network gives none (both
/// adapters name their typing activities so): `TYP` and 16 uppercase hex
/// digits.
pub fn new_chat_state_id() -> MessageId {
    fresh_id("TYP", 8)
}

/// An id for a call a test network places: 32 uppercase hex digits, as
/// the network's clients name theirs.
pub fn new_call_id() -> String {
    fresh_id("", 16).into_string()
}

/// `prefix` and `bytes` random bytes in uppercase hex.
fn fresh_id(prefix: &str, bytes: usize) -> MessageId {
    use rand::RngCore;
    let mut raw = vec![0u8; bytes];
    rand::thread_rng().fill_bytes(&mut raw);
    let hex: String = raw.iter().map(|b| format!("{b:02X}")).collect();
    MessageId::new(format!("{prefix}{hex}")).expect("not empty")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_ids_look_like_the_networks() {
        let a = new_message_id().into_string();
        assert_eq!(a.len(), 22);
        assert!(a.starts_with("3EB0"));
        assert!(
            a[4..]
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
        );
        assert_ne!(a, new_message_id().into_string());
    }
}
