//! Bodies of the send routes (`/send-*`, `/edit-message`, `/delete-message`)
//! and of `/mark-read`, `/mark-unread`. Required fields are optional here so
//! that a missing one is answered with a message naming it.
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// The common optional envelope of most sends.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Envelope {
    /// Reply target; unknown ids still send.
    pub quoted_message_id: Option<String>,
    /// User-parts (LID or phone digits); the text should contain `@<user-part>`.
    pub mentions: Option<Vec<String>>,
    /// Any JSON object; echoed on the `fromMe` webhook as `meta`.
    #[schema(value_type = Option<Object>)]
    pub meta_data: Option<Value>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SendText {
    #[serde(default)]
    pub client_id: String,
    pub to: Option<String>,
    pub body: Option<String>,
    #[serde(flatten)]
    pub envelope: Envelope,
}

/// `POST /send-media-message` in JSON mode: the file is fetched from `downloadUrl`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SendMediaUrl {
    #[serde(default)]
    pub client_id: String,
    pub to: Option<String>,
    /// Public http(s) URL of the file.
    pub download_url: Option<String>,
    /// Overrides the type detected from response headers or the file name.
    pub mime_type: Option<String>,
    /// Ignored for audio.
    pub caption: Option<String>,
    /// Shown for documents.
    pub file_name: Option<String>,
    /// Voice note (OGG/Opus expected).
    pub send_audio_as_voice: Option<bool>,
    /// Sends a WebP as a sticker.
    pub as_sticker: Option<bool>,
    /// Images and videos: shown once, then gone from the chat (ignored for
    /// other files).
    pub view_once: Option<bool>,
    #[serde(flatten)]
    pub envelope: Envelope,
}

/// `POST /send-media-message` in multipart mode (`clientId` also in the query).
/// Documentation only: the parts are read as a stream, never into this type.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SendMediaForm {
    /// The file, with a correct Content-Type: `image/*`, `video/*`, `audio/*`, else a document.
    #[schema(value_type = String, format = Binary)]
    pub file: Vec<u8>,
    pub client_id: Option<String>,
    pub to: String,
    pub caption: Option<String>,
    /// The text `true`.
    pub send_audio_as_voice: Option<String>,
    /// The text `true`.
    pub as_sticker: Option<String>,
    /// The text `true`: images and videos shown once.
    pub view_once: Option<String>,
    pub quoted_message_id: Option<String>,
    /// Comma separated user-parts.
    pub mentions: Option<String>,
    /// A JSON object, as a string.
    pub meta_data: Option<String>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SendPoll {
    #[serde(default)]
    pub client_id: String,
    pub to: Option<String>,
    /// The question.
    pub poll_name: Option<String>,
    /// 2 to 12 distinct options.
    pub poll_options: Option<Vec<String>>,
    /// 1 (default) to the number of options.
    #[serde(default, deserialize_with = "crate::wire::integers::optional")]
    pub selectable_count: Option<i64>,
    #[serde(flatten)]
    pub envelope: Envelope,
}

/// An interactive button as sent: which fields count depends on `type`.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ButtonBody {
    /// `quick_reply`, `cta_url`, `cta_call` or `cta_copy`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Required for every type.
    pub display_text: Option<String>,
    /// `quick_reply` and `cta_copy`.
    pub id: Option<String>,
    /// `cta_url`: absolute http(s) URL.
    pub url: Option<String>,
    /// `cta_call`.
    pub phone_number: Option<String>,
    /// `cta_copy`.
    pub copy_code: Option<String>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SendInteractive {
    #[serde(default)]
    pub client_id: String,
    pub to: Option<String>,
    pub body_text: Option<String>,
    pub footer_text: Option<String>,
    /// 1 to 10 buttons.
    pub buttons: Option<Vec<ButtonBody>>,
    #[serde(flatten)]
    pub envelope: Envelope,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SendReaction {
    #[serde(default)]
    pub client_id: String,
    pub to: Option<String>,
    /// The message reacted to.
    pub message_id: Option<String>,
    /// Empty string removes the reaction.
    pub emoji: Option<String>,
    /// True when reacting to one of this session's messages.
    pub target_from_me: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditMessage {
    #[serde(default)]
    pub client_id: String,
    pub to: Option<String>,
    /// One of this session's messages, sent at most about 15 minutes ago.
    pub message_id: Option<String>,
    /// The new text.
    pub body: Option<String>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SendLocation {
    #[serde(default)]
    pub client_id: String,
    pub to: Option<String>,
    /// -90 to 90.
    pub latitude: Option<f64>,
    /// -180 to 180.
    pub longitude: Option<f64>,
    pub name: Option<String>,
    pub address: Option<String>,
    #[serde(flatten)]
    pub envelope: Envelope,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SendContact {
    #[serde(default)]
    pub client_id: String,
    pub to: Option<String>,
    pub display_name: Option<String>,
    /// E.164 digits; the service builds a vCard 3.0 from it.
    pub phone: Option<String>,
    /// A full vCard 3.0; overrides `phone`.
    pub vcard: Option<String>,
    #[serde(flatten)]
    pub envelope: Envelope,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SendTyping {
    #[serde(default)]
    pub client_id: String,
    pub to: Option<String>,
    /// Default true; false clears the indicator.
    pub composing: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteMessage {
    #[serde(default)]
    pub client_id: String,
    pub to: Option<String>,
    pub message_id: Option<String>,
    /// Whether this session sent the message.
    pub from_me: Option<bool>,
    /// `everyone` or `me`.
    pub mode: Option<String>,
    /// Hosted history's chat room (for `mode: me` with hosted history).
    pub chat_room_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MarkRead {
    #[serde(default)]
    pub client_id: String,
    pub to: Option<String>,
    /// At least one message id.
    pub message_ids: Option<Vec<String>>,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MarkUnread {
    #[serde(default)]
    pub client_id: String,
    pub to: Option<String>,
}

/// Every send: `{status: "sent", messageId}`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Sent {
    /// Always `sent`.
    pub status: String,
    pub message_id: String,
    /// Delivered, but not written to hosted history.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// `/send-media-message`: `{status, messageId, mediaType}` (JSON mode also
/// `bytes`), or `{status, messageId, fallback: "text"}` for files over 60 MB.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MediaSent {
    pub status: String,
    pub message_id: String,
    /// `image`, `video`, `audio`, `document` or `sticker`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// JSON mode: the size of the fetched file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// `text`: the file was too large to attach and went out as a link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// `/send-reaction`, `/edit-message`: the update's own id and its target.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Targeted {
    pub status: String,
    pub message_id: String,
    pub target_id: String,
}

/// `/send-typing`: `{status: "ok"}`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct StatusText {
    pub status: String,
}

/// `/delete-message`: `{status: true}`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct StatusFlag {
    pub status: bool,
}

/// `/mark-read`: `{ok: true, count}`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct MarkedRead {
    pub ok: bool,
    /// Distinct message ids the receipts covered.
    pub count: usize,
}

/// `POST /send-status` (Parley's): a status update (a story) of the
/// session's account, shown to `audience`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SendStatus {
    #[serde(default)]
    pub client_id: String,
    /// `text` (the default), `image` or `video`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// A text status's text.
    pub body: Option<String>,
    /// A text status's background: `#RRGGBB` or `#AARRGGBB`.
    pub background_color: Option<String>,
    /// A text status's font: one of `parley_model::outgoing::STATUS_FONTS`.
    pub font: Option<String>,
    /// An image or video status: public http(s) URL of the file.
    pub download_url: Option<String>,
    pub mime_type: Option<String>,
    pub caption: Option<String>,
    /// Who sees it (LID user-parts, `+phone` numbers or user JIDs); absent
    /// or null: every contact the session knows.
    pub audience: Option<Vec<String>>,
}

/// `POST /delete-status` (Parley's): deletes a status update the session
/// posted (within its 24 hours) for everyone it was shown to.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeleteStatus {
    #[serde(default)]
    pub client_id: String,
    /// The `messageId` `/send-status` answered.
    pub message_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusDeleted {
    pub ok: bool,
    pub client_id: String,
    pub message_id: String,
}

/// The answer of `POST /send-status`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusSent {
    /// Always `sent`.
    pub status: String,
    pub message_id: String,
    /// How many contacts it went to.
    pub audience: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}
