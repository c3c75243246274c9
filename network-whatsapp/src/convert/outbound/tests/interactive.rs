//! Interactive native-flow buttons: quick_reply, cta_url, cta_call, cta_copy.
use serde_json::{Value, json};
use wa::message::interactive_message::InteractiveMessage as Payload;
use whatsapp_rust::waproto::whatsapp as wa;

use crate::convert::outbound::{Button, ButtonKind, Context, InteractiveRequest, interactive};

use super::reply_context;

fn button(kind: ButtonKind, text: &str) -> Button {
    Button {
        kind,
        display_text: text.into(),
        id: None,
        url: None,
        phone_number: None,
        copy_code: None,
    }
}

fn all_kinds() -> Vec<Button> {
    vec![
        Button {
            id: Some("yes".into()),
            ..button(ButtonKind::QuickReply, "Yes")
        },
        Button {
            url: Some("https://shop.example/track".into()),
            ..button(ButtonKind::CtaUrl, "Track")
        },
        Button {
            phone_number: Some("+4915100000001".into()),
            ..button(ButtonKind::CtaCall, "Call us")
        },
        Button {
            copy_code: Some("SAVE10".into()),
            ..button(ButtonKind::CtaCopy, "Copy code")
        },
    ]
}

/// `(name, params)` of each native-flow button.
fn buttons_of(msg: &wa::Message) -> Vec<(String, Value)> {
    let im = msg.interactive_message.as_option().expect("interactive");
    let Some(Payload::NativeFlowMessage(flow)) = im.interactive_message.as_ref() else {
        panic!("a native flow message expected");
    };
    assert_eq!(flow.message_version, Some(1));
    flow.buttons
        .iter()
        .map(|b| {
            let params = serde_json::from_str(b.button_params_json.as_deref().unwrap_or("null"))
                .expect("params are JSON");
            (b.name.clone().unwrap_or_default(), params)
        })
        .collect()
}

#[test]
fn every_button_kind_with_body_footer_and_quote() {
    let msg = interactive(&InteractiveRequest {
        body_text: "Your order shipped".into(),
        footer_text: Some("Parley Shop".into()),
        buttons: all_kinds(),
        context: reply_context(),
    })
    .expect("build");
    let im = msg
        .interactive_message
        .as_option()
        .expect("top-level interactive");
    assert_eq!(
        im.body.as_option().and_then(|b| b.text.as_deref()),
        Some("Your order shipped")
    );
    assert_eq!(
        im.footer.as_option().and_then(|f| f.text.as_deref()),
        Some("Parley Shop")
    );
    assert_eq!(
        im.context_info
            .as_option()
            .and_then(|c| c.stanza_id.as_deref()),
        Some("3EB0Q")
    );
    assert_eq!(
        buttons_of(&msg),
        vec![
            (
                "quick_reply".into(),
                json!({"display_text": "Yes", "id": "yes"})
            ),
            (
                "cta_url".into(),
                json!({
                    "display_text": "Track",
                    "url": "https://shop.example/track",
                    "merchant_url": "https://shop.example/track"
                })
            ),
            (
                "cta_call".into(),
                json!({"display_text": "Call us", "phone_number": "+4915100000001"})
            ),
            (
                "cta_copy".into(),
                json!({"display_text": "Copy code", "id": "SAVE10", "copy_code": "SAVE10"})
            ),
        ]
    );
}

#[test]
fn no_footer_and_no_context_when_not_given() {
    let msg = interactive(&InteractiveRequest {
        body_text: "Pick one".into(),
        footer_text: None,
        buttons: all_kinds().into_iter().take(1).collect(),
        context: Context::default(),
    })
    .expect("build");
    let im = msg.interactive_message.as_option().expect("interactive");
    assert!(im.footer.is_unset());
    assert!(im.context_info.is_unset());
}

#[test]
fn buttons_missing_their_fields_are_refused() {
    let req = |buttons: Vec<Button>| InteractiveRequest {
        body_text: "Pick".into(),
        footer_text: None,
        buttons,
        context: Context::default(),
    };
    let cases = vec![
        button(ButtonKind::QuickReply, "No id"),
        button(ButtonKind::CtaUrl, "No url"),
        Button {
            url: Some("javascript:alert(1)".into()),
            ..button(ButtonKind::CtaUrl, "Bad url")
        },
        button(ButtonKind::CtaCall, "No phone"),
        button(ButtonKind::CtaCopy, "No code"),
        Button {
            id: Some("x".into()),
            ..button(ButtonKind::QuickReply, " ")
        },
    ];
    for b in cases {
        let text = b.display_text.clone();
        assert!(interactive(&req(vec![b])).is_err(), "{text}");
    }
    assert!(interactive(&req(vec![])).is_err(), "no buttons");
    let too_many = all_kinds().into_iter().cycle().take(11).collect();
    assert!(interactive(&req(too_many)).is_err(), "too many");
    let mut empty_body = req(all_kinds());
    empty_body.body_text.clear();
    assert!(interactive(&empty_body).is_err());
}
