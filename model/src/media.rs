//! A file in a message, the same wherever it travels: its kind, what it is
//! and how it is shown ([`MediaInfo`]: sent, received, echoed and in the
//! webhook event alike), and where a received one is fetched from.
use serde::{Deserialize, Serialize};

/// What a file message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaKind {
    Image,
    Video,
    Audio,
    Document,
    Sticker,
}

impl MediaKind {
    /// Every kind.
    pub const ALL: [MediaKind; 5] = [
        MediaKind::Image,
        MediaKind::Video,
        MediaKind::Audio,
        MediaKind::Document,
        MediaKind::Sticker,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MediaKind::Image => "image",
            MediaKind::Video => "video",
            MediaKind::Audio => "audio",
            MediaKind::Document => "document",
            MediaKind::Sticker => "sticker",
        }
    }
}

/// What a file is and how it is shown. In the webhook event its fields sit
/// beside the file's size and download (`media.mimeType`, `media.caption`...).
/// Empty text is none; a flag a kind cannot show is cleared by [`MediaInfo::fitted`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaInfo {
    pub mime_type: String,
    pub file_name: String,
    pub caption: String,
    /// Voice note (audio only).
    pub ptt: bool,
}

impl MediaInfo {
    /// What a file of `kind` can show of this: no caption on audio and
    /// stickers, a voice note only for audio.
    pub fn fitted(self, kind: MediaKind) -> MediaInfo {
        let captioned = !matches!(kind, MediaKind::Audio | MediaKind::Sticker);
        MediaInfo {
            caption: if captioned {
                self.caption
            } else {
                String::new()
            },
            ptt: self.ptt && kind == MediaKind::Audio,
            ..self
        }
    }
}

/// Where and how to fetch and decrypt a file; never the bytes themselves.
/// `media_key` is a secret: never logged (its `Debug` is redacted).
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaDownload {
    pub direct_path: String,
    pub media_key: String,
    pub file_sha256: String,
    pub file_enc_sha256: String,
    pub file_length: u64,
}

impl std::fmt::Debug for MediaDownload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MediaDownload")
            .field("direct_path", &self.direct_path)
            .field("media_key", &"<redacted>")
            .field("file_length", &self.file_length)
            .finish_non_exhaustive()
    }
}
