//! Text (quoted context, mentions), location and vCard contact sends.
use crate::convert::ConvertError;
use crate::convert::outbound::{
    ContactRequest, Context, LocationRequest, TextRequest, contact, location, text, vcard_for_phone,
};
use parley_model::inbound::{Content, QuotedRef};

use super::{CHAT, echo, jid, mid, reply_context};

#[test]
fn plain_text_is_a_conversation() {
    let msg = text(&TextRequest {
        body: "hello".into(),
        context: Context::default(),
    })
    .expect("build");
    assert_eq!(msg.conversation.as_deref(), Some("hello"));
    assert!(msg.extended_text_message.is_unset());
}

#[test]
fn a_reply_with_mentions_is_an_extended_text_with_context() {
    let msg = text(&TextRequest {
        body: "yes @4915100000002".into(),
        context: reply_context(),
    })
    .expect("build");
    assert_eq!(msg.conversation, None);
    let ext = msg
        .extended_text_message
        .as_option()
        .expect("extended text");
    assert_eq!(ext.text.as_deref(), Some("yes @4915100000002"));
    let ctx = ext.context_info.as_option().expect("context");
    assert_eq!(ctx.stanza_id.as_deref(), Some("3EB0Q"));
    assert_eq!(ctx.participant.as_deref(), Some(CHAT));
    assert_eq!(
        ctx.quoted_message
            .as_option()
            .and_then(|q| q.conversation.as_deref()),
        Some("lunch?")
    );
    assert_eq!(
        ctx.mentioned_jid,
        ["4915100000002@s.whatsapp.net", "100000000000003@lid"]
    );

    let back = echo(&msg, None);
    assert_eq!(
        back.content,
        Content::Text {
            body: "yes @4915100000002".into()
        }
    );
    assert_eq!(
        back.quoted,
        Some(QuotedRef {
            message_id: mid("3EB0Q"),
            participant: Some(jid(CHAT)),
            body: "lunch?".into(),
            kind: "text".into(),
        })
    );
    assert_eq!(back.mentions, ["4915100000002", "100000000000003"]);
}

#[test]
fn a_quote_without_known_text_has_no_preview() {
    let mut context = reply_context();
    if let Some(q) = context.quoted.as_mut() {
        q.body = None;
    }
    context.mentions.clear();
    let msg = text(&TextRequest {
        body: "ok".into(),
        context,
    })
    .expect("build");
    let ctx = msg
        .extended_text_message
        .as_option()
        .and_then(|e| e.context_info.as_option())
        .expect("context");
    assert!(ctx.quoted_message.is_unset());
    assert!(ctx.mentioned_jid.is_empty());
}

#[test]
fn empty_text_is_refused() {
    let err = text(&TextRequest::default()).expect_err("empty");
    assert!(matches!(err, ConvertError::Invalid { field: "body", .. }));
}

#[test]
fn location_with_name_address_and_quote() {
    let msg = location(&LocationRequest {
        latitude: 52.52,
        longitude: 13.405,
        name: Some("Office".into()),
        address: Some("Alexanderplatz 1".into()),
        context: reply_context(),
    })
    .expect("build");
    let loc = msg.location_message.as_option().expect("location");
    assert_eq!(loc.degrees_latitude, Some(52.52));
    assert_eq!(loc.degrees_longitude, Some(13.405));
    assert_eq!(loc.name.as_deref(), Some("Office"));
    assert_eq!(loc.address.as_deref(), Some("Alexanderplatz 1"));
    assert_eq!(
        loc.context_info
            .as_option()
            .and_then(|c| c.stanza_id.as_deref()),
        Some("3EB0Q")
    );
    assert_eq!(
        echo(&msg, None).content,
        Content::Location {
            latitude: 52.52,
            longitude: 13.405,
            name: "Office".into(),
            address: "Alexanderplatz 1".into(),
            live: false,
        }
    );

    let bare = location(&LocationRequest {
        latitude: -1.5,
        longitude: 2.25,
        name: Some(String::new()),
        ..LocationRequest::default()
    })
    .expect("build");
    let loc = bare.location_message.as_option().expect("location");
    assert_eq!((loc.name.as_deref(), loc.address.as_deref()), (None, None));
    assert!(loc.context_info.is_unset());

    for (lat, lon) in [(91.0, 0.0), (0.0, -180.5), (f64::NAN, 0.0)] {
        let req = LocationRequest {
            latitude: lat,
            longitude: lon,
            ..LocationRequest::default()
        };
        assert!(location(&req).is_err(), "{lat},{lon}");
    }
}

#[test]
fn contact_card_built_from_a_phone_number() {
    let msg = contact(&ContactRequest {
        display_name: "Ana; Sales, EU".into(),
        phone: Some("+4915100000001".into()),
        vcard: None,
        context: Context::default(),
    })
    .expect("build");
    let card = msg.contact_message.as_option().expect("contact");
    assert_eq!(card.display_name.as_deref(), Some("Ana; Sales, EU"));
    assert_eq!(
        card.vcard.as_deref(),
        Some(
            "BEGIN:VCARD\nVERSION:3.0\nN:;Ana\\; Sales\\, EU;;;\nFN:Ana\\; Sales\\, EU\n\
             TEL;type=CELL;type=VOICE;waid=4915100000001:+4915100000001\nEND:VCARD"
        )
    );
    assert_eq!(
        echo(&msg, None).content,
        Content::Contact {
            display_name: "Ana; Sales, EU".into(),
            vcard: card.vcard.clone().unwrap_or_default(),
        }
    );
}

#[test]
fn a_given_vcard_overrides_the_phone() {
    let vcard = "BEGIN:VCARD\nVERSION:3.0\nFN:Ben\nTEL:+4915100000002\nEND:VCARD";
    let msg = contact(&ContactRequest {
        display_name: "Ben".into(),
        phone: Some("4915100000001".into()),
        vcard: Some(vcard.into()),
        context: reply_context(),
    })
    .expect("build");
    let card = msg.contact_message.as_option().expect("contact");
    assert_eq!(card.vcard.as_deref(), Some(vcard));
    assert!(card.context_info.is_set());
}

#[test]
fn contact_cards_need_a_valid_phone_or_vcard() {
    let req = |phone: Option<&str>, vcard: Option<&str>| ContactRequest {
        display_name: "Ana".into(),
        phone: phone.map(Into::into),
        vcard: vcard.map(Into::into),
        context: Context::default(),
    };
    assert!(contact(&req(None, None)).is_err());
    assert!(contact(&req(Some("12ab5678"), None)).is_err());
    assert!(contact(&req(Some("1234567"), None)).is_err());
    assert!(contact(&req(None, Some("FN:Ana"))).is_err());
    assert!(vcard_for_phone("Ana", "4915100000001").is_ok());
}
