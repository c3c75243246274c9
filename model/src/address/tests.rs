use super::*;

#[test]
fn jids_of_every_kind_the_network_uses() {
    for raw in [
        "120363000000000001@lid",
        "4915100000001@s.whatsapp.net",
        "4915100000001:12@s.whatsapp.net",
        "120363-1600000000@g.us",
        "status@broadcast",
        "120363000000000002@newsletter",
    ] {
        let jid = Jid::parse(raw).unwrap_or_else(|| panic!("{raw}"));
        assert_eq!(jid.as_str(), raw);
        assert_eq!(format!("{}@{}", jid.user(), jid.server()), raw);
    }
    let device = Jid::parse("4915100000001:12@s.whatsapp.net").unwrap();
    assert_eq!(device.bare_user(), "4915100000001");
    assert!(device.is_phone() && !device.is_lid() && !device.is_group());
    assert!(Jid::parse("1-2@g.us").unwrap().is_group());
    assert!(Jid::parse("12345678@lid").unwrap().is_lid());
}

#[test]
fn jids_refuse_other_shapes() {
    for bad in [
        "",
        "12345678",
        "@lid",
        "12345678@",
        "a b@lid",
        "a@b@lid",
        "1@LID",
        "1@l id",
        "shop-111-222",
        &format!("{}@lid", "1".repeat(JID_MAX)),
    ] {
        assert_eq!(Jid::parse(bad), None, "{bad:?}");
    }
    assert_eq!(Jid::new("", LID_SERVER), None);
    assert_eq!(
        Jid::new("12345678", LID_SERVER).unwrap().as_str(),
        "12345678@lid"
    );
}

#[test]
fn jids_are_checked_when_read_from_the_bus() {
    let jid: Jid = serde_json::from_str("\"1@g.us\"").unwrap();
    assert_eq!(serde_json::to_string(&jid).unwrap(), "\"1@g.us\"");
    assert!(serde_json::from_str::<Jid>("\"shop-1-2\"").is_err());
}

#[test]
fn phone_numbers_are_digits_with_country_code() {
    let phone = PhoneNumber::parse("phone", " +4915100000001 ").unwrap();
    assert_eq!(phone.as_str(), "4915100000001");
    assert_eq!(Jid::phone(&phone).as_str(), "4915100000001@s.whatsapp.net");
    for bad in [
        "",
        "+",
        "1234567",
        "1234567890123456",
        "49151-000001",
        "+49 151",
    ] {
        let err = PhoneNumber::parse("phone", bad).unwrap_err();
        assert!(err.message.starts_with("phone "), "{}", err.message);
    }
    assert!(serde_json::from_str::<PhoneNumber>("\"+4915100000001\"").is_err());
    assert_eq!(
        serde_json::from_str::<PhoneNumber>("\"4915100000001\"").unwrap(),
        phone
    );
}

#[test]
fn message_ids_named_by_customers() {
    assert_eq!(
        MessageId::parse("messageId", Some(" 3EB0AB12 "))
            .unwrap()
            .as_str(),
        "3EB0AB12"
    );
    let long = "A".repeat(MESSAGE_ID_MAX + 1);
    for bad in [
        None,
        Some(""),
        Some("  "),
        Some("a b"),
        Some("<x>"),
        Some(long.as_str()),
    ] {
        let err = MessageId::parse("messageId", bad).unwrap_err();
        assert!(err.message.starts_with("messageId "), "{bad:?}: {err}");
    }
}

#[test]
fn message_ids_from_the_network_are_opaque_but_not_empty() {
    assert_eq!(
        MessageId::new("any thing/at all").unwrap().as_str(),
        "any thing/at all"
    );
    assert_eq!(MessageId::new(""), None);
    assert!(serde_json::from_str::<MessageId>("\"\"").is_err());
}
