//! Every validation rule of the send bodies, one test per rule family.
use parley_contract::wire::messages::{ButtonBody, Envelope};
use parley_model::address::{MessageId, PhoneNumber};
use parley_model::outgoing::{Button, Content};
use parley_model::recipients::Recipient;
use serde_json::json;

use super::*;

fn status<T: std::fmt::Debug>(r: Result<T, ApiError>) -> u16 {
    r.expect_err("expected a 400").status
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn required_and_optional_text() {
    assert_eq!(text("body", Some("hi".into()), 10).unwrap(), "hi");
    for missing in [None, Some(String::new()), Some("  ".into())] {
        let err = text("body", missing, 10).unwrap_err();
        assert_eq!(
            (err.status, err.message.as_str()),
            (400, "body is required")
        );
    }
    assert_eq!(status(text("body", Some("x".repeat(11)), 10)), 400);
    assert_eq!(optional("name", Some(" ".into()), 10).unwrap(), None);
    assert_eq!(status(optional("name", Some("é".repeat(11)), 10)), 400);
    assert!(!flag("fromMe", Some(false)).unwrap());
    assert_eq!(status(flag("fromMe", None)), 400);
}

#[test]
fn recipients() {
    assert_eq!(
        recipient(Some("+4915112345678")).unwrap(),
        Recipient::Phone(PhoneNumber::from_digits("4915112345678").unwrap())
    );
    assert_eq!(status(recipient(None)), 400);
    assert_eq!(status(recipient(Some("bob"))), 400);
}

#[test]
fn the_envelope() {
    let envelope = Envelope {
        quoted_message_id: Some("3EB0AA".into()),
        mentions: Some(strings(&[
            "+4915112345678",
            "123456789012345",
            "4915112345678",
        ])),
        meta_data: Some(json!({"fromAI": true})),
    };
    let to = Recipient::Lid("123456789012345".into());
    let content = Content::Text { body: "hi".into() };
    let msg = message(to.clone(), content.clone(), envelope).unwrap();
    assert_eq!(msg.quoted_message_id, MessageId::new("3EB0AA"));
    assert_eq!(msg.mentions, strings(&["4915112345678", "123456789012345"]));
    assert_eq!(msg.meta, Some(json!({"fromAI": true})));
    let empty = message(to.clone(), content.clone(), Envelope::default()).unwrap();
    assert_eq!(
        (empty.quoted_message_id, empty.mentions, empty.meta),
        (None, vec![], None)
    );
    for bad in [
        Envelope {
            mentions: Some(strings(&["alice"])),
            ..Envelope::default()
        },
        Envelope {
            meta_data: Some(json!([1, 2])),
            ..Envelope::default()
        },
        Envelope {
            meta_data: Some(json!("text")),
            ..Envelope::default()
        },
        Envelope {
            quoted_message_id: Some("not an id".into()),
            ..Envelope::default()
        },
    ] {
        assert_eq!(status(message(to.clone(), content.clone(), bad)), 400);
    }
    assert_eq!(meta_data(Some(serde_json::Value::Null)).unwrap(), None);
}

#[test]
fn polls() {
    let ok = poll(
        Some("Lunch?".into()),
        Some(strings(&["Pizza", " Sushi "])),
        None,
    )
    .unwrap();
    assert_eq!(
        ok,
        Content::Poll {
            name: "Lunch?".into(),
            options: strings(&["Pizza", "Sushi"]),
            selectable_count: 1
        }
    );
    let twelve: Vec<String> = (0..12).map(|i| format!("o{i}")).collect();
    assert!(poll(Some("q".into()), Some(twelve.clone()), Some(12)).is_ok());
    let mut thirteen = twelve.clone();
    thirteen.push("o12".into());
    for (name, options, count) in [
        (None, Some(strings(&["a", "b"])), None),
        (Some("q".to_string()), None, None),
        (Some("q".to_string()), Some(strings(&["a"])), None),
        (Some("q".to_string()), Some(thirteen), None),
        (Some("q".to_string()), Some(strings(&["a", " "])), None),
        (Some("q".to_string()), Some(strings(&["a", "a"])), None),
        (Some("q".to_string()), Some(strings(&["a", " a"])), None),
        (Some("q".to_string()), Some(strings(&["a", "b"])), Some(0)),
        (Some("q".to_string()), Some(strings(&["a", "b"])), Some(3)),
        (Some("q".to_string()), Some(strings(&["a", "b"])), Some(-1)),
        (
            Some("q".to_string()),
            Some(vec!["a".into(), "x".repeat(101)]),
            None,
        ),
        (Some("x".repeat(256)), Some(strings(&["a", "b"])), None),
    ] {
        assert_eq!(
            status(poll(name.clone(), options.clone(), count)),
            400,
            "{name:?} {options:?} {count:?}"
        );
    }
}

#[test]
fn locations() {
    assert!(location(Some(-90.0), Some(180.0), None, None).is_ok());
    assert!(
        location(
            Some(52.52),
            Some(13.405),
            Some("Office".into()),
            Some(" ".into())
        )
        .is_ok()
    );
    for (lat, lon) in [
        (None, Some(0.0)),
        (Some(0.0), None),
        (Some(90.5), Some(0.0)),
        (Some(-91.0), Some(0.0)),
        (Some(0.0), Some(180.01)),
        (Some(0.0), Some(-181.0)),
    ] {
        assert_eq!(
            status(location(lat, lon, None, None)),
            400,
            "{lat:?} {lon:?}"
        );
    }
}

fn button(kind: &str) -> ButtonBody {
    ButtonBody {
        kind: Some(kind.into()),
        display_text: Some("Tap".into()),
        id: None,
        url: None,
        phone_number: None,
        copy_code: None,
    }
}

#[test]
fn buttons_per_type() {
    let quick = ButtonBody {
        id: Some("yes".into()),
        ..button("quick_reply")
    };
    let url = ButtonBody {
        url: Some("https://example.com/x".into()),
        ..button("cta_url")
    };
    let call = ButtonBody {
        phone_number: Some("+49 151 1234-5678".into()),
        ..button("cta_call")
    };
    let copy = ButtonBody {
        id: Some("c1".into()),
        copy_code: Some("SAVE10".into()),
        ..button("cta_copy")
    };
    let all = buttons(Some(vec![
        quick.clone(),
        url.clone(),
        call.clone(),
        copy.clone(),
    ]))
    .unwrap();
    assert_eq!(
        all[2],
        Button::CtaCall {
            display_text: "Tap".into(),
            phone_number: "+4915112345678".into()
        }
    );
    assert_eq!(all.len(), 4);

    let bad = [
        ButtonBody {
            display_text: None,
            ..quick.clone()
        },
        ButtonBody {
            id: None,
            ..quick.clone()
        },
        ButtonBody {
            kind: None,
            ..quick.clone()
        },
        button("carousel"),
        ButtonBody {
            url: None,
            ..url.clone()
        },
        ButtonBody {
            url: Some("ftp://example.com".into()),
            ..url.clone()
        },
        ButtonBody {
            url: Some("/relative".into()),
            ..url.clone()
        },
        ButtonBody {
            phone_number: None,
            ..call.clone()
        },
        ButtonBody {
            phone_number: Some("call me".into()),
            ..call.clone()
        },
        ButtonBody {
            copy_code: None,
            ..copy.clone()
        },
        ButtonBody {
            id: None,
            ..copy.clone()
        },
    ];
    for b in bad {
        assert_eq!(status(buttons(Some(vec![b.clone()]))), 400, "{b:?}");
    }
    assert_eq!(status(buttons(None)), 400);
    assert_eq!(status(buttons(Some(vec![]))), 400);
    assert_eq!(status(buttons(Some(vec![url.clone(); 11]))), 400);
    assert!(buttons(Some(vec![url; 10])).is_ok());
    let repeated = buttons(Some(vec![quick.clone(), quick])).unwrap_err();
    assert!(
        repeated.message.contains("used by another button"),
        "{}",
        repeated.message
    );
}

#[test]
fn contact_cards() {
    let built = contact_card(
        Some("Ann; Lee, Jr.".into()),
        Some("+4915112345678".into()),
        None,
    )
    .unwrap();
    assert_eq!(
        built,
        Content::Contact {
            display_name: "Ann; Lee, Jr.".into(),
            vcard: "BEGIN:VCARD\nVERSION:3.0\nFN:Ann\\; Lee\\, Jr.\nTEL;type=CELL;waid=4915112345678:+4915112345678\nEND:VCARD".into(),
        }
    );
    let given = "BEGIN:VCARD\nVERSION:3.0\nFN:Bo\nEND:VCARD";
    let card = contact_card(
        Some("Bo".into()),
        Some("4915112345678".into()),
        Some(given.into()),
    )
    .unwrap();
    assert_eq!(
        card,
        Content::Contact {
            display_name: "Bo".into(),
            vcard: given.into()
        },
        "vcard overrides phone"
    );
    for (name, phone, vcard) in [
        (None, Some("4915112345678"), None),
        (Some("Bo"), None, None),
        (Some("Bo"), Some("12"), None),
        (Some("Bo"), None, Some("FN:Bo")),
    ] {
        let r = contact_card(
            name.map(Into::into),
            phone.map(Into::into),
            vcard.map(Into::into),
        );
        assert_eq!(status(r), 400, "{name:?} {phone:?} {vcard:?}");
    }
}

#[test]
fn media_fields() {
    assert_eq!(
        download_url(Some("https://cdn.example/a.png".into())).unwrap(),
        "https://cdn.example/a.png"
    );
    for bad in [
        None,
        Some("a.png"),
        Some("ftp://cdn.example/a"),
        Some("https://"),
    ] {
        assert_eq!(status(download_url(bad.map(Into::into))), 400, "{bad:?}");
    }
    assert_eq!(
        mime_type(Some("Image/PNG; q=1".into())).unwrap().as_deref(),
        Some("image/png")
    );
    assert_eq!(mime_type(None).unwrap(), None);
    assert_eq!(status(mime_type(Some("png".into()))), 400);
    assert_eq!(
        file_name(Some("a.pdf".into())).unwrap().as_deref(),
        Some("a.pdf")
    );
    assert_eq!(status(file_name(Some("../etc/passwd".into()))), 400);
}

#[test]
fn emojis() {
    assert_eq!(emoji(Some("👍".into())).unwrap(), "👍");
    assert_eq!(emoji(Some("👨‍👩‍👧‍👦".into())).unwrap(), "👨‍👩‍👧‍👦");
    assert_eq!(emoji(Some("1️⃣".into())).unwrap(), "1️⃣");
    assert_eq!(emoji(Some(String::new())).unwrap(), "", "empty removes");
    assert_eq!(status(emoji(None)), 400);
    assert_eq!(status(emoji(Some("like".into()))), 400);
}
