//! Files: image, video (also round video notes), audio (voice notes: `ptt`),
//! document, sticker, with what a receiver needs to fetch and decrypt them.
//!
//! Encoding of [`MediaDownload`]: `media_key`, `file_sha256` and `file_enc_sha256`
//! are standard base64 with padding (RFC 4648 §4), the form WhatsApp clients and
//! libraries exchange these fields in; `direct_path` is the CDN path as sent;
//! `file_length` is the plaintext size in bytes. A field the message lacks is empty.
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use whatsapp_rust::wacore::proto_helpers::MessageExt;
use whatsapp_rust::waproto::whatsapp as wa;

use parley_model::inbound::Content;
use parley_model::media::{MediaDownload, MediaInfo, MediaKind};

/// Where every file is and how it is sealed.
struct Fields<'a> {
    direct_path: &'a Option<String>,
    media_key: &'a Option<Vec<u8>>,
    file_sha256: &'a Option<Vec<u8>>,
    file_enc_sha256: &'a Option<Vec<u8>>,
    file_length: Option<u64>,
}

macro_rules! fields {
    ($m:expr) => {
        Fields {
            direct_path: &$m.direct_path,
            media_key: &$m.media_key,
            file_sha256: &$m.file_sha256,
            file_enc_sha256: &$m.file_enc_sha256,
            file_length: $m.file_length,
        }
    };
}

/// The file in `msg`, read inside its wrappers.
pub(super) fn content(msg: &wa::Message) -> Option<Content> {
    let base = msg.get_base_message();
    // In its wrapper or flagged on the file itself.
    let view_once = msg.is_view_once();
    if let Some(m) = base.image_message.as_option() {
        let info = MediaInfo {
            caption: text(&m.caption),
            view_once,
            ..info(&m.mimetype)
        };
        return Some(media(MediaKind::Image, fields!(m), info));
    }
    if let Some(m) = base
        .video_message
        .as_option()
        .or_else(|| base.ptv_message.as_option())
    {
        let info = MediaInfo {
            caption: text(&m.caption),
            view_once,
            ..info(&m.mimetype)
        };
        return Some(media(MediaKind::Video, fields!(m), info));
    }
    if let Some(m) = base.audio_message.as_option() {
        let info = MediaInfo {
            ptt: m.ptt.unwrap_or(false),
            ..info(&m.mimetype)
        };
        return Some(media(MediaKind::Audio, fields!(m), info));
    }
    if let Some(m) = base.document_message.as_option() {
        let info = MediaInfo {
            file_name: m
                .file_name
                .clone()
                .or_else(|| m.title.clone())
                .unwrap_or_default(),
            caption: text(&m.caption),
            ..info(&m.mimetype)
        };
        return Some(media(MediaKind::Document, fields!(m), info));
    }
    if let Some(m) = base.sticker_message.as_option() {
        return Some(media(MediaKind::Sticker, fields!(m), info(&m.mimetype)));
    }
    None
}

/// What every file says of itself: its type.
fn info(mimetype: &Option<String>) -> MediaInfo {
    MediaInfo {
        mime_type: text(mimetype),
        ..MediaInfo::default()
    }
}

fn text(field: &Option<String>) -> String {
    field.clone().unwrap_or_default()
}

fn media(kind: MediaKind, f: Fields<'_>, info: MediaInfo) -> Content {
    let b64 = |v: &Option<Vec<u8>>| v.as_deref().map(|b| STANDARD.encode(b)).unwrap_or_default();
    Content::Media {
        kind,
        info,
        download: MediaDownload {
            direct_path: f.direct_path.clone().unwrap_or_default(),
            media_key: b64(f.media_key),
            file_sha256: b64(f.file_sha256),
            file_enc_sha256: b64(f.file_enc_sha256),
            file_length: f.file_length.unwrap_or(0),
        },
    }
}
