//! A file message (image, video, audio / voice note, document, sticker) from
//! the upload's CDN reference and the request's fields.
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use super::context::field;
use super::{MediaRequest, Uploaded};
use crate::convert::ConvertError;
use parley_model::media::MediaKind;

/// Sets the CDN fields every file message shares.
macro_rules! fill {
    ($m:ident, $up:ident, $mime:ident, $ctx:ident) => {
        $m.url = Some($up.url.clone());
        $m.direct_path = Some($up.direct_path.clone());
        $m.media_key = Some($up.media_key.to_vec());
        $m.file_enc_sha256 = Some($up.file_enc_sha256.to_vec());
        $m.file_sha256 = Some($up.file_sha256.to_vec());
        $m.file_length = Some($up.file_length);
        $m.media_key_timestamp = Some($up.media_key_timestamp);
        $m.mimetype = $mime.clone();
        $m.context_info = $ctx.clone();
    };
}

pub fn media(req: &MediaRequest, up: &Uploaded) -> Result<wa::Message, ConvertError> {
    let info = &req.info;
    if info.mime_type.trim().is_empty() {
        return Err(ConvertError::invalid("mimeType", "must not be empty"));
    }
    if up.direct_path.is_empty() {
        return Err(ConvertError::invalid("upload", "no direct path"));
    }
    let caption = Some(info.caption.clone()).filter(|c| !c.is_empty());
    let mime = Some(info.mime_type.clone());
    let ctx = field(&req.context);
    let mut msg = wa::Message::default();
    match req.kind {
        MediaKind::Image => {
            let mut m = wa::message::ImageMessage::default();
            fill!(m, up, mime, ctx);
            m.caption = caption;
            m.view_once = info.view_once.then_some(true);
            msg.image_message = MessageField::some(m);
        }
        MediaKind::Video => {
            let mut m = wa::message::VideoMessage::default();
            fill!(m, up, mime, ctx);
            m.caption = caption;
            m.streaming_sidecar = up.streaming_sidecar.clone();
            m.view_once = info.view_once.then_some(true);
            msg.video_message = MessageField::some(m);
        }
        MediaKind::Audio => {
            let mut m = wa::message::AudioMessage::default();
            fill!(m, up, mime, ctx);
            m.ptt = Some(info.ptt);
            m.streaming_sidecar = up.streaming_sidecar.clone();
            msg.audio_message = MessageField::some(m);
        }
        MediaKind::Document => {
            let mut m = wa::message::DocumentMessage::default();
            fill!(m, up, mime, ctx);
            let name = match info.file_name.as_str() {
                "" => "file".to_string(),
                name => name.to_string(),
            };
            m.title = Some(name.clone());
            m.file_name = Some(name);
            m.caption = caption;
            msg.document_message = MessageField::some(m);
        }
        MediaKind::Sticker => {
            let mut m = wa::message::StickerMessage::default();
            fill!(m, up, mime, ctx);
            msg.sticker_message = MessageField::some(m);
        }
    }
    if info.view_once {
        // As WhatsApp's clients send it: the flagged file inside the wrapper.
        msg = wa::Message {
            view_once_message: MessageField::some(wa::message::FutureProofMessage {
                message: MessageField::some(msg),
            }),
            ..Default::default()
        };
    }
    Ok(msg)
}
