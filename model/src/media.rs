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
    /// Shown once, then gone from the chat (images and videos only). Absent
    /// from events written before it existed: read as `false`.
    #[serde(default)]
    pub view_once: bool,
}

impl MediaInfo {
    /// What a file of `kind` can show of this: no caption on audio and
    /// stickers, a voice note only for audio, view once only for images and
    /// videos.
    pub fn fitted(self, kind: MediaKind) -> MediaInfo {
        let captioned = !matches!(kind, MediaKind::Audio | MediaKind::Sticker);
        MediaInfo {
            caption: if captioned {
                self.caption
            } else {
                String::new()
            },
            ptt: self.ptt && kind == MediaKind::Audio,
            view_once: self.view_once && matches!(kind, MediaKind::Image | MediaKind::Video),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_keeps_only_what_it_can_show() {
        let asked = MediaInfo {
            mime_type: "x/y".into(),
            file_name: "f".into(),
            caption: "look".into(),
            ptt: true,
            view_once: true,
        };
        for kind in MediaKind::ALL {
            let got = asked.clone().fitted(kind);
            let (captioned, ptt, view_once) = match kind {
                MediaKind::Image | MediaKind::Video => (true, false, true),
                MediaKind::Audio => (false, true, false),
                MediaKind::Document => (true, false, false),
                MediaKind::Sticker => (false, false, false),
            };
            assert_eq!(got.caption.is_empty(), !captioned, "{kind:?}");
            assert_eq!((got.ptt, got.view_once), (ptt, view_once), "{kind:?}");
            assert_eq!(
                (got.mime_type.as_str(), got.file_name.as_str()),
                ("x/y", "f")
            );
        }
    }

    #[test]
    fn view_once_is_read_as_false_when_absent() {
        let old = r#"{"mimeType":"image/png","fileName":"","caption":"","ptt":false}"#;
        let info: MediaInfo = serde_json::from_str(old).unwrap();
        assert!(!info.view_once);
        let now = serde_json::to_value(MediaInfo {
            view_once: true,
            ..info
        })
        .unwrap();
        assert_eq!(now["viewOnce"], true);
    }
}
