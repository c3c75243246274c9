//! The pure parts of sending: the message each non-file kind becomes, the
//! API's buttons, and the download parameters of the hosted inbox.
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use parley_model::media::MediaDownload;
use parley_model::outgoing::{Button as PortButton, Content};
use whatsapp_rust::download::MediaType;

use crate::convert::outbound::ButtonKind;
use crate::live::sends::{build, button, download_params, media_type};
use parley_model::media::MediaKind;
use parley_network::{Jid, MediaFile, MessageId, Outgoing};

fn outgoing(content: Content<MediaFile>) -> Outgoing {
    Outgoing {
        to: Jid::parse("4915100000002@s.whatsapp.net").unwrap(),
        content,
        quoted_id: MessageId::new("3EB0Q"),
        mentions: vec!["4915100000003".into()],
        status: None,
    }
}

#[test]
fn text_keeps_its_quote_and_mentions() {
    let (msg, kind) = build(&outgoing(Content::Text { body: "hi".into() }), None).expect("text");
    assert_eq!(kind, "text");
    let ext = msg.extended_text_message.as_option().expect("extended");
    let ctx = ext.context_info.as_option().expect("context");
    assert_eq!(ctx.stanza_id.as_deref(), Some("3EB0Q"));
    assert_eq!(ctx.mentioned_jid, ["4915100000003@s.whatsapp.net"]);
    assert_eq!(ctx.participant, None);
}

#[test]
fn a_quote_of_a_members_group_message_names_its_author() {
    let author = "4915100000009@s.whatsapp.net";
    let text = Content::Text { body: "hi".into() };
    let (msg, _) = build(&outgoing(text), Some(author.into())).expect("text");
    let ext = msg.extended_text_message.as_option().expect("extended");
    let ctx = ext.context_info.as_option().expect("context");
    assert_eq!(ctx.participant.as_deref(), Some(author));
}

#[test]
fn a_poll_carries_its_message_secret() {
    let (msg, kind) = build(
        &outgoing(Content::Poll {
            name: "Lunch?".into(),
            options: vec!["Pizza".into(), "Soup".into()],
            selectable_count: 1,
        }),
        None,
    )
    .expect("poll");
    assert_eq!(kind, "poll");
    let secret = msg
        .message_context_info
        .as_option()
        .and_then(|c| c.message_secret.as_deref())
        .expect("secret");
    assert_eq!(secret.len(), 32);
}

#[test]
fn every_kind_without_a_file_has_its_outbox_name() {
    let cases = [
        (
            Content::Location {
                latitude: 52.5,
                longitude: 13.4,
                name: None,
                address: None,
            },
            "location",
        ),
        (
            Content::Contact {
                display_name: "Ada".into(),
                vcard: "BEGIN:VCARD\nVERSION:3.0\nFN:Ada\nTEL;type=CELL;waid=4915100000009:+4915100000009\nEND:VCARD".into(),
            },
            "contact",
        ),
        (
            Content::Interactive {
                body: "Pick".into(),
                footer: None,
                buttons: vec![PortButton::QuickReply {
                    display_text: "Yes".into(),
                    id: "y".into(),
                }],
            },
            "interactive",
        ),
    ];
    for (body, expected) in cases {
        let (_, kind) = build(&outgoing(body), None).expect(expected);
        assert_eq!(kind, expected);
    }
    let file = Content::Media(MediaFile {
        kind: MediaKind::Image,
        data: parley_contract::spool::FileBody::from_bytes(&b"x"[..]),
        info: parley_model::media::MediaInfo {
            mime_type: "image/png".into(),
            ..Default::default()
        },
    });
    assert!(
        build(&outgoing(file), None).is_err(),
        "files need their upload first"
    );
    assert!(
        build(
            &outgoing(Content::Location {
                latitude: 91.0,
                longitude: 0.0,
                name: None,
                address: None
            }),
            None
        )
        .is_err()
    );
}

#[test]
fn api_buttons_keep_their_fields() {
    let b = button(&PortButton::CtaCopy {
        display_text: "Copy".into(),
        id: "c1".into(),
        copy_code: "XYZ".into(),
    });
    assert_eq!(b.kind, ButtonKind::CtaCopy);
    assert_eq!(b.id.as_deref(), Some("c1"));
    assert_eq!(b.copy_code.as_deref(), Some("XYZ"));
    let b = button(&PortButton::CtaUrl {
        display_text: "Open".into(),
        url: "https://example.com".into(),
    });
    assert_eq!(b.kind, ButtonKind::CtaUrl);
    assert_eq!(b.url.as_deref(), Some("https://example.com"));
}

#[test]
fn download_parameters_decode_and_refuse_garbage() {
    let media = MediaDownload {
        direct_path: "/v/t62.7118-24/1.enc".into(),
        media_key: STANDARD.encode([7u8; 32]),
        file_sha256: STANDARD.encode([8u8; 32]),
        file_enc_sha256: STANDARD.encode([9u8; 32]),
        file_length: 1234,
    };
    let params = download_params(&media, media_type(MediaKind::Video)).expect("params");
    assert_eq!(params.media_key.as_deref(), Some(&[7u8; 32][..]));
    assert_eq!(params.file_sha256, [8u8; 32]);
    assert_eq!(params.file_length, 1234);
    assert!(matches!(params.media_type, MediaType::Video));
    let bad = MediaDownload {
        media_key: "not base64!".into(),
        ..media.clone()
    };
    assert!(download_params(&bad, MediaType::Image).is_err());
    let no_path = MediaDownload {
        direct_path: String::new(),
        ..media
    };
    assert!(download_params(&no_path, MediaType::Image).is_err());
}
