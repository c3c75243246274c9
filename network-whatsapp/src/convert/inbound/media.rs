//! Files: image, video (also round video notes), audio (voice notes: `ptt`),
//! document, sticker, with what a receiver needs to fetch and decrypt them.
//!
//! Encoding of [`MediaDownload`]: `media_key`, `file_sha256` and `file_enc_sha256`
//! are standard base64 with padding (RFC 4648 §4), the form WhatsApp clients and
//! libraries exchange these fields in; `direct_path` is the CDN path as sent;
//! `file_length` is the plaintext size in bytes. A field the message lacks is empty.
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use whatsapp_rust::waproto::whatsapp as wa;

use parley_model::inbound::Content;
use parley_model::media::{MediaDownload, MediaInfo, MediaKind};

/// The fields every media message shares.
struct Fields<'a> {
    mimetype: &'a Option<String>,
    direct_path: &'a Option<String>,
    media_key: &'a Option<Vec<u8>>,
    file_sha256: &'a Option<Vec<u8>>,
    file_enc_sha256: &'a Option<Vec<u8>>,
    file_length: Option<u64>,
}

macro_rules! fields {
    ($m:expr) => {
        Fields {
            mimetype: &$m.mimetype,
            direct_path: &$m.direct_path,
            media_key: &$m.media_key,
            file_sha256: &$m.file_sha256,
            file_enc_sha256: &$m.file_enc_sha256,
            file_length: $m.file_length,
        }
    };
}

pub(super) fn content(base: &wa::Message) -> Option<Content> {
    if let Some(m) = base.image_message.as_option() {
        return Some(media(
            MediaKind::Image,
            fields!(m),
            None,
            m.caption.as_deref(),
            false,
        ));
    }
    if let Some(m) = base
        .video_message
        .as_option()
        .or_else(|| base.ptv_message.as_option())
    {
        return Some(media(
            MediaKind::Video,
            fields!(m),
            None,
            m.caption.as_deref(),
            false,
        ));
    }
    if let Some(m) = base.audio_message.as_option() {
        let ptt = m.ptt.unwrap_or(false);
        return Some(media(MediaKind::Audio, fields!(m), None, None, ptt));
    }
    if let Some(m) = base.document_message.as_option() {
        let name = m.file_name.as_deref().or(m.title.as_deref());
        return Some(media(
            MediaKind::Document,
            fields!(m),
            name,
            m.caption.as_deref(),
            false,
        ));
    }
    if let Some(m) = base.sticker_message.as_option() {
        return Some(media(MediaKind::Sticker, fields!(m), None, None, false));
    }
    None
}

fn media(
    kind: MediaKind,
    f: Fields<'_>,
    file_name: Option<&str>,
    caption: Option<&str>,
    ptt: bool,
) -> Content {
    let b64 = |v: &Option<Vec<u8>>| v.as_deref().map(|b| STANDARD.encode(b)).unwrap_or_default();
    Content::Media {
        kind,
        info: MediaInfo {
            mime_type: f.mimetype.clone().unwrap_or_default(),
            file_name: file_name.unwrap_or_default().into(),
            caption: caption.unwrap_or_default().into(),
            ptt,
            // Known from the message around the file: set by `to_inbound`.
            view_once: false,
        },
        download: MediaDownload {
            direct_path: f.direct_path.clone().unwrap_or_default(),
            media_key: b64(f.media_key),
            file_sha256: b64(f.file_sha256),
            file_enc_sha256: b64(f.file_enc_sha256),
            file_length: f.file_length.unwrap_or(0),
        },
    }
}
