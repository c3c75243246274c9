//! Send requests to the messages the network expects. The request types are
//! plain structs mirroring the API's send fields (a later step maps the network
//! port onto them); each builder validates what the network would refuse and
//! returns the `wa::Message` to hand to the library's send path.
//!
//! JIDs are full JIDs (`…@s.whatsapp.net`, `…@lid`, `…@g.us`): resolving the
//! API's user-parts and phone numbers needs the session's LID-PN mappings, which
//! the adapter has (`live::mentions` resolves a send's mentions before they get
//! here). A mention still given as bare digits is taken as a phone number.
mod contact;
mod context;
mod interactive;
mod location;
mod media;
mod poll;
mod text;
mod update;

#[cfg(test)]
mod tests;

pub use contact::{contact, vcard_for_phone};
pub use interactive::interactive;
pub use location::location;
pub use media::media;
pub use poll::{poll, poll_with_secret};
pub use text::text;
pub use update::{edit, edit_content, reaction, revoke};

/// The reply target and mentions most sends may carry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    pub quoted: Option<Quote>,
    /// Mentioned JIDs, resolved by the adapter (bare digits: a phone number).
    pub mentions: Vec<String>,
}

/// The message a send replies to (`quotedMessageId`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Quote {
    pub message_id: String,
    /// Its author's JID, when known (required by clients to render group quotes).
    pub participant: Option<String>,
    /// Its text, when known (from hosted history): the preview clients show.
    pub body: Option<String>,
}

/// `/send-message`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextRequest {
    pub body: String,
    pub context: Context,
}

/// `/send-location`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LocationRequest {
    pub latitude: f64,
    pub longitude: f64,
    pub name: Option<String>,
    pub address: Option<String>,
    pub context: Context,
}

/// `/send-contact`: `vcard` (full vCard 3.0) overrides `phone` (E.164 digits).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContactRequest {
    pub display_name: String,
    pub phone: Option<String>,
    pub vcard: Option<String>,
    pub context: Context,
}

/// `/send-poll-message`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PollRequest {
    pub name: String,
    pub options: Vec<String>,
    /// Default 1 (single choice).
    pub selectable_count: u32,
    pub context: Context,
}

/// `/send-interactive-message`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InteractiveRequest {
    pub body_text: String,
    pub footer_text: Option<String>,
    pub buttons: Vec<Button>,
    pub context: Context,
}

/// One button of an interactive message (the API's Button object).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Button {
    pub kind: ButtonKind,
    pub display_text: String,
    /// `quick_reply` and `cta_copy`.
    pub id: Option<String>,
    /// `cta_url`.
    pub url: Option<String>,
    /// `cta_call`.
    pub phone_number: Option<String>,
    /// `cta_copy`.
    pub copy_code: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ButtonKind {
    QuickReply,
    CtaUrl,
    CtaCall,
    CtaCopy,
}

impl ButtonKind {
    /// The native-flow button name.
    pub fn as_str(self) -> &'static str {
        match self {
            ButtonKind::QuickReply => "quick_reply",
            ButtonKind::CtaUrl => "cta_url",
            ButtonKind::CtaCall => "cta_call",
            ButtonKind::CtaCopy => "cta_copy",
        }
    }
}

/// `/send-image`, `/send-video`, `/send-audio`, `/send-document`,
/// `/send-sticker`: the file itself is uploaded first (see [`Uploaded`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaRequest {
    pub kind: parley_model::media::MediaKind,
    /// The model's, fitted to the kind (a document's empty name is `file`).
    pub info: parley_model::media::MediaInfo,
    pub context: Context,
}

/// Where an uploaded file lives and the keys that decrypt it (the library's
/// upload answer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uploaded {
    pub url: String,
    pub direct_path: String,
    pub media_key: [u8; 32],
    pub file_enc_sha256: [u8; 32],
    pub file_sha256: [u8; 32],
    pub file_length: u64,
    pub media_key_timestamp: i64,
    pub streaming_sidecar: Option<Vec<u8>>,
}

/// `/send-reaction`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReactionRequest {
    /// The chat JID.
    pub chat: String,
    pub target_id: String,
    /// Whether this session sent the target (`targetFromMe`).
    pub target_from_me: bool,
    /// The target's author in a group, when not this session.
    pub target_sender: Option<String>,
    /// Empty removes the reaction.
    pub emoji: String,
    pub sender_timestamp_ms: i64,
}

/// `/edit-message`: a new text for one of this session's messages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EditRequest {
    pub chat: String,
    pub target_id: String,
    pub body: String,
    /// This session's own JID in a group (the key's participant), `None` otherwise.
    pub own_participant: Option<String>,
    pub timestamp_ms: i64,
}

/// `/delete-message` with `mode: everyone`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RevokeRequest {
    pub chat: String,
    pub target_id: String,
    /// Whether this session sent it (an admin may revoke others' group messages).
    pub from_me: bool,
    /// The author's JID for an admin revoke in a group.
    pub participant: Option<String>,
}
