//! File messages from an upload: every kind carries the CDN reference and keys
//! a receiver needs, and reads back as the same media.
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::convert::outbound::{Context, MediaRequest, Uploaded, media};
use parley_model::inbound::Content;
use parley_model::media::{MediaInfo, MediaKind};

use super::{echo, reply_context};

fn uploaded() -> Uploaded {
    Uploaded {
        url: "https://mmg.whatsapp.net/v/t62.7118-24/1.enc".into(),
        direct_path: "/v/t62.7118-24/1.enc".into(),
        media_key: [1; 32],
        file_enc_sha256: [2; 32],
        file_sha256: [3; 32],
        file_length: 2048,
        media_key_timestamp: 1_790_000_000,
        streaming_sidecar: Some(vec![9; 10]),
    }
}

fn request(kind: MediaKind) -> MediaRequest {
    MediaRequest {
        kind,
        info: MediaInfo {
            mime_type: "application/octet-stream".into(),
            caption: "look".into(),
            ..MediaInfo::default()
        },
        context: Context::default(),
    }
}

#[test]
fn every_kind_reads_back_as_the_same_media_with_its_download_keys() {
    for kind in MediaKind::ALL {
        let msg = media(&request(kind), &uploaded()).expect("builds");
        let back = echo(&msg, None);
        let Content::Media {
            kind: read_kind,
            info,
            download,
        } = back.content
        else {
            panic!("{kind:?} is no media: {:?}", back.content);
        };
        assert_eq!(read_kind, kind);
        assert_eq!(info.mime_type, "application/octet-stream");
        assert_eq!(download.direct_path, "/v/t62.7118-24/1.enc");
        assert_eq!(download.media_key, STANDARD.encode([1u8; 32]));
        assert_eq!(download.file_enc_sha256, STANDARD.encode([2u8; 32]));
        assert_eq!(download.file_sha256, STANDARD.encode([3u8; 32]));
        assert_eq!(download.file_length, 2048);
        let captioned = matches!(
            kind,
            MediaKind::Image | MediaKind::Video | MediaKind::Document
        );
        assert_eq!(
            info.caption,
            if captioned { "look" } else { "" },
            "{kind:?}"
        );
    }
}

#[test]
fn a_voice_note_is_ptt_and_a_document_keeps_its_name_and_quote() {
    let mut voice = request(MediaKind::Audio);
    voice.info.ptt = true;
    let voice = media(&voice, &uploaded()).expect("voice");
    let audio = voice.audio_message.as_option().expect("audio");
    assert_eq!(audio.ptt, Some(true));
    assert_eq!(audio.streaming_sidecar.as_deref(), Some(&[9u8; 10][..]));

    let mut doc = request(MediaKind::Document);
    doc.info.file_name = "report.pdf".into();
    doc.context = reply_context();
    let doc = media(&doc, &uploaded()).expect("document");
    let d = doc.document_message.as_option().expect("document");
    assert_eq!(d.file_name.as_deref(), Some("report.pdf"));
    let ctx = d.context_info.as_option().expect("context");
    assert_eq!(ctx.stanza_id.as_deref(), Some("3EB0Q"));
    assert_eq!(
        echo(&doc, None)
            .quoted
            .map(|q| q.message_id.into_string())
            .as_deref(),
        Some("3EB0Q")
    );
}

#[test]
fn a_file_without_type_or_upload_is_refused() {
    let mut no_type = request(MediaKind::Image);
    no_type.info.mime_type = " ".into();
    assert!(media(&no_type, &uploaded()).is_err());
    let mut no_path = uploaded();
    no_path.direct_path.clear();
    assert!(media(&request(MediaKind::Image), &no_path).is_err());
}

#[test]
fn a_view_once_image_is_flagged_inside_the_wrapper_and_reads_back_as_view_once() {
    let mut once = request(MediaKind::Image);
    once.info.view_once = true;
    let msg = media(&once, &uploaded()).expect("builds");
    let wrapper = msg.view_once_message.as_option().expect("the wrapper");
    let inner = wrapper.message.as_option().expect("the message inside");
    let image = inner.image_message.as_option().expect("an image");
    assert_eq!(image.view_once, Some(true));
    let Content::Media { info, .. } = echo(&msg, None).content else {
        panic!("no media");
    };
    assert!(info.view_once);
    // Without the flag, nothing wraps it.
    let plain = media(&request(MediaKind::Image), &uploaded()).expect("builds");
    assert!(plain.view_once_message.is_unset());
    let Content::Media { info, .. } = echo(&plain, None).content else {
        panic!("no media");
    };
    assert!(!info.view_once);
}
