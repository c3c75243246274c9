//! Content kinds: text (with quote, mentions, forwarding), wrappers, media,
//! location, contacts, poll creations, button replies, non-activity.
use wa::message::{self as m};
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use super::{GROUP, PEER_LID, content, env, inbound, jid, mid};
use crate::convert::inbound::to_inbound;
use parley_model::inbound::{Content, QuotedRef};
use parley_model::media::{MediaDownload, MediaInfo, MediaKind};
use parley_network::MessageId;

fn text(body: &str) -> Content {
    Content::Text { body: body.into() }
}

#[test]
fn conversation_is_text() {
    let msg = wa::Message {
        conversation: Some("hello".into()),
        ..Default::default()
    };
    let got = inbound(&msg);
    assert_eq!(got.content, text("hello"));
    assert_eq!(got.id, "3EB0MSG");
    assert_eq!(got.chat, PEER_LID);
    assert_eq!(got.chat_lid, "100000012345678");
    assert_eq!(got.push_name, "Ana");
    assert_eq!(
        (got.quoted, got.mentions, got.is_forwarded),
        (None, vec![], false)
    );
}

#[test]
fn extended_text_carries_quote_mentions_and_forwarding() {
    let quoted = wa::Message {
        conversation: Some("lunch?".into()),
        ..Default::default()
    };
    let msg = wa::Message {
        extended_text_message: MessageField::some(m::ExtendedTextMessage {
            text: Some("yes @4915100000002 and @100000000000003".into()),
            context_info: MessageField::some(wa::ContextInfo {
                stanza_id: Some("3EB0QUOTED".into()),
                participant: Some("100000012345678@lid".into()),
                quoted_message: MessageField::some(quoted),
                mentioned_jid: vec![
                    "4915100000002@s.whatsapp.net".into(),
                    "100000000000003@lid".into(),
                ],
                is_forwarded: Some(true),
                forwarding_score: Some(1),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let got = inbound(&msg);
    assert_eq!(got.content, text("yes @4915100000002 and @100000000000003"));
    assert_eq!(
        got.quoted,
        Some(QuotedRef {
            message_id: mid("3EB0QUOTED"),
            participant: Some(jid("100000012345678@lid")),
            body: "lunch?".into(),
            kind: "text".into(),
        })
    );
    assert_eq!(got.mentions, ["4915100000002", "100000000000003"]);
    assert!(got.is_forwarded);
}

#[test]
fn quoted_media_names_its_kind_and_caption() {
    let quoted = wa::Message {
        image_message: MessageField::some(m::ImageMessage {
            caption: Some("the menu".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let msg = wa::Message {
        extended_text_message: MessageField::some(m::ExtendedTextMessage {
            text: Some("this one".into()),
            context_info: MessageField::some(wa::ContextInfo {
                stanza_id: Some("3EB0IMG".into()),
                quoted_message: MessageField::some(quoted),
                forwarding_score: Some(3),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let got = inbound(&msg);
    let q = got.quoted.expect("quoted");
    assert_eq!((q.kind.as_str(), q.body.as_str()), ("image", "the menu"));
    assert_eq!(q.participant, None);
    assert!(got.is_forwarded, "a forwarding score counts as forwarded");
}

#[test]
fn wrappers_are_unwrapped() {
    let inner = wa::Message {
        conversation: Some("hidden".into()),
        ..Default::default()
    };
    let ephemeral = wa::Message {
        ephemeral_message: MessageField::some(m::FutureProofMessage {
            message: MessageField::some(wa::Message {
                view_once_message: MessageField::some(m::FutureProofMessage {
                    message: MessageField::some(inner),
                }),
                ..Default::default()
            }),
        }),
        ..Default::default()
    };
    // Sent from the linked phone: the device-sent wrapper.
    let from_phone = wa::Message {
        device_sent_message: MessageField::some(m::DeviceSentMessage {
            destination_jid: Some(PEER_LID.into()),
            message: MessageField::some(ephemeral.clone()),
            phash: None,
        }),
        ..Default::default()
    };
    assert_eq!(content(&ephemeral), text("hidden"));
    let got = to_inbound(&from_phone, &env(PEER_LID, true), None)
        .expect("converts")
        .expect("activity");
    assert!(got.from_me);
    assert_eq!(got.content, text("hidden"));
}

fn download() -> MediaDownload {
    MediaDownload {
        direct_path: "/v/t62.7118-24/abc?ccb=11-4".into(),
        // base64 of [1, 2, 3], [4, 5, 6], [7, 8, 9]
        media_key: "AQID".into(),
        file_sha256: "BAUG".into(),
        file_enc_sha256: "BwgJ".into(),
        file_length: 1234,
    }
}

/// The wire values behind `download()`.
type Wire = (
    Option<String>,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Option<u64>,
);

fn wire() -> Wire {
    (
        Some("/v/t62.7118-24/abc?ccb=11-4".to_string()),
        Some(vec![1, 2, 3]),
        Some(vec![4, 5, 6]),
        Some(vec![7, 8, 9]),
        Some(1234),
    )
}

#[test]
fn media_kinds_carry_their_download_parameters() {
    let (direct_path, media_key, file_sha256, file_enc_sha256, file_length) = wire();
    let image = wa::Message {
        image_message: MessageField::some(m::ImageMessage {
            mimetype: Some("image/jpeg".into()),
            caption: Some("look".into()),
            direct_path: direct_path.clone(),
            media_key: media_key.clone(),
            file_sha256: file_sha256.clone(),
            file_enc_sha256: file_enc_sha256.clone(),
            file_length,
            ..Default::default()
        }),
        ..Default::default()
    };
    let video = wa::Message {
        video_message: MessageField::some(m::VideoMessage {
            mimetype: Some("video/mp4".into()),
            caption: Some("clip".into()),
            direct_path: direct_path.clone(),
            media_key: media_key.clone(),
            file_sha256: file_sha256.clone(),
            file_enc_sha256: file_enc_sha256.clone(),
            file_length,
            ..Default::default()
        }),
        ..Default::default()
    };
    let voice = wa::Message {
        audio_message: MessageField::some(m::AudioMessage {
            mimetype: Some("audio/ogg; codecs=opus".into()),
            ptt: Some(true),
            direct_path: direct_path.clone(),
            media_key: media_key.clone(),
            file_sha256: file_sha256.clone(),
            file_enc_sha256: file_enc_sha256.clone(),
            file_length,
            ..Default::default()
        }),
        ..Default::default()
    };
    // A captioned document arrives wrapped.
    let document = wa::Message {
        document_with_caption_message: MessageField::some(m::FutureProofMessage {
            message: MessageField::some(wa::Message {
                document_message: MessageField::some(m::DocumentMessage {
                    mimetype: Some("application/pdf".into()),
                    file_name: Some("invoice.pdf".into()),
                    caption: Some("March".into()),
                    direct_path: direct_path.clone(),
                    media_key: media_key.clone(),
                    file_sha256: file_sha256.clone(),
                    file_enc_sha256: file_enc_sha256.clone(),
                    file_length,
                    ..Default::default()
                }),
                ..Default::default()
            }),
        }),
        ..Default::default()
    };
    let sticker = wa::Message {
        sticker_message: MessageField::some(m::StickerMessage {
            mimetype: Some("image/webp".into()),
            direct_path,
            media_key,
            file_sha256,
            file_enc_sha256,
            file_length,
            ..Default::default()
        }),
        ..Default::default()
    };
    let expect = |kind, mime: &str, file_name: &str, caption: &str, ptt| Content::Media {
        kind,
        info: MediaInfo {
            mime_type: mime.into(),
            file_name: file_name.into(),
            caption: caption.into(),
            ptt,
            view_once: false,
        },
        download: download(),
    };
    assert_eq!(
        content(&image),
        expect(MediaKind::Image, "image/jpeg", "", "look", false)
    );
    assert_eq!(
        content(&video),
        expect(MediaKind::Video, "video/mp4", "", "clip", false)
    );
    assert_eq!(
        content(&voice),
        expect(MediaKind::Audio, "audio/ogg; codecs=opus", "", "", true)
    );
    assert_eq!(
        content(&document),
        expect(
            MediaKind::Document,
            "application/pdf",
            "invoice.pdf",
            "March",
            false
        )
    );
    assert_eq!(
        content(&sticker),
        expect(MediaKind::Sticker, "image/webp", "", "", false)
    );
}

#[test]
fn pinned_and_live_locations() {
    let pinned = wa::Message {
        location_message: MessageField::some(m::LocationMessage {
            degrees_latitude: Some(52.52),
            degrees_longitude: Some(13.405),
            name: Some("Office".into()),
            address: Some("Alexanderplatz 1".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let live = wa::Message {
        live_location_message: MessageField::some(m::LiveLocationMessage {
            degrees_latitude: Some(-33.86),
            degrees_longitude: Some(151.21),
            caption: Some("on my way".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(
        content(&pinned),
        Content::Location {
            latitude: 52.52,
            longitude: 13.405,
            name: "Office".into(),
            address: "Alexanderplatz 1".into(),
            live: false,
        }
    );
    assert_eq!(
        content(&live),
        Content::Location {
            latitude: -33.86,
            longitude: 151.21,
            name: "on my way".into(),
            address: String::new(),
            live: true,
        }
    );
}

const VCARD_A: &str =
    "BEGIN:VCARD\nVERSION:3.0\nFN:Ana\nTEL;waid=4915100000001:+4915100000001\nEND:VCARD";
const VCARD_B: &str = "BEGIN:VCARD\nVERSION:3.0\nFN:Ben\nEND:VCARD\n";

#[test]
fn contact_cards() {
    let card = |name: &str, vcard: &str| m::ContactMessage {
        display_name: Some(name.into()),
        vcard: Some(vcard.into()),
        ..Default::default()
    };
    let one = wa::Message {
        contact_message: MessageField::some(card("Ana", VCARD_A)),
        ..Default::default()
    };
    let several = wa::Message {
        contacts_array_message: MessageField::some(m::ContactsArrayMessage {
            display_name: Some("2 contacts".into()),
            contacts: vec![card("Ana", VCARD_A), card("Ben", VCARD_B)],
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(
        content(&one),
        Content::Contact {
            display_name: "Ana".into(),
            vcard: VCARD_A.into(),
        }
    );
    assert_eq!(
        content(&several),
        Content::Contact {
            display_name: "2 contacts".into(),
            vcard: format!("{VCARD_A}\n{}", VCARD_B.trim_end()),
        }
    );
}

fn poll_creation(name: &str, options: &[&str], count: u32) -> m::PollCreationMessage {
    m::PollCreationMessage {
        name: Some(name.into()),
        options: options
            .iter()
            .map(|o| m::poll_creation_message::Option {
                option_name: Some((*o).into()),
                option_hash: None,
            })
            .collect(),
        selectable_options_count: Some(count),
        ..Default::default()
    }
}

#[test]
fn poll_creations_of_every_version() {
    let expect = |count| Content::Poll {
        name: "Lunch?".into(),
        options: vec!["Pizza".into(), "Sushi".into()],
        selectable_count: count,
    };
    let v1 = wa::Message {
        poll_creation_message: MessageField::some(poll_creation("Lunch?", &["Pizza", "Sushi"], 2)),
        ..Default::default()
    };
    let v2 = wa::Message {
        poll_creation_message_v2: MessageField::some(poll_creation(
            "Lunch?",
            &["Pizza", "Sushi"],
            0,
        )),
        ..Default::default()
    };
    let v3 = wa::Message {
        poll_creation_message_v3: MessageField::some(poll_creation(
            "Lunch?",
            &["Pizza", "Sushi"],
            1,
        )),
        ..Default::default()
    };
    assert_eq!(content(&v1), expect(2));
    assert_eq!(content(&v2), expect(0));
    assert_eq!(content(&v3), expect(1));
}

fn tapped(stanza_id: &str) -> MessageField<wa::ContextInfo> {
    MessageField::some(wa::ContextInfo {
        stanza_id: Some(stanza_id.into()),
        ..Default::default()
    })
}

fn reply(target: &str, button: &str, text: &str) -> Content {
    Content::InteractiveReply {
        target_id: MessageId::new(target),
        button_id: button.into(),
        display_text: text.into(),
    }
}

#[test]
fn button_and_interactive_replies() {
    use m::interactive_response_message::{self as irm, NativeFlowResponseMessage};
    let native = wa::Message {
        interactive_response_message: MessageField::some(m::InteractiveResponseMessage {
            body: MessageField::some(irm::Body {
                text: Some("Yes please".into()),
                ..Default::default()
            }),
            context_info: tapped("3EB0BUTTONS"),
            interactive_response_message: Some(
                irm::InteractiveResponseMessage::NativeFlowResponseMessage(Box::new(
                    NativeFlowResponseMessage {
                        name: Some("quick_reply".into()),
                        params_json: Some(r#"{"id":"yes"}"#.into()),
                        version: Some(3),
                    },
                )),
            ),
        }),
        ..Default::default()
    };
    let buttons = wa::Message {
        buttons_response_message: MessageField::some(m::ButtonsResponseMessage {
            selected_button_id: Some("b2".into()),
            context_info: tapped("3EB0OLD"),
            response: Some(m::buttons_response_message::Response::SelectedDisplayText(
                "Second".into(),
            )),
            ..Default::default()
        }),
        ..Default::default()
    };
    let template = wa::Message {
        template_button_reply_message: MessageField::some(m::TemplateButtonReplyMessage {
            selected_id: Some("t1".into()),
            selected_display_text: Some("Track order".into()),
            context_info: tapped("3EB0TPL"),
            ..Default::default()
        }),
        ..Default::default()
    };
    let list = wa::Message {
        list_response_message: MessageField::some(m::ListResponseMessage {
            title: Some("Medium".into()),
            single_select_reply: MessageField::some(m::list_response_message::SingleSelectReply {
                selected_row_id: Some("size-m".into()),
            }),
            context_info: tapped("3EB0LIST"),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(content(&native), reply("3EB0BUTTONS", "yes", "Yes please"));
    assert_eq!(content(&buttons), reply("3EB0OLD", "b2", "Second"));
    assert_eq!(content(&template), reply("3EB0TPL", "t1", "Track order"));
    assert_eq!(content(&list), reply("3EB0LIST", "size-m", "Medium"));
}

#[test]
fn group_messages_keep_the_envelope() {
    let msg = wa::Message {
        conversation: Some("hi all".into()),
        ..Default::default()
    };
    let mut e = env(GROUP, false);
    e.group_subject = Some("Team".into());
    let got = to_inbound(&msg, &e, None)
        .expect("converts")
        .expect("activity");
    assert!(got.is_group());
    assert_eq!(got.group_subject.as_deref(), Some("Team"));
    assert_eq!(got.chat_lid, "");
}

#[test]
fn housekeeping_is_no_activity() {
    let key_share_only = wa::Message {
        sender_key_distribution_message: MessageField::some(m::SenderKeyDistributionMessage {
            group_id: Some(GROUP.into()),
            axolotl_sender_key_distribution_message: Some(vec![1, 2, 3]),
        }),
        ..Default::default()
    };
    let setting = wa::Message {
        protocol_message: MessageField::some(m::ProtocolMessage {
            r#type: Some(m::protocol_message::Type::EPHEMERAL_SETTING),
            ephemeral_expiration: Some(86_400),
            ..Default::default()
        }),
        ..Default::default()
    };
    for msg in [wa::Message::default(), key_share_only, setting] {
        assert_eq!(to_inbound(&msg, &env(PEER_LID, false), None), Ok(None));
    }
}
