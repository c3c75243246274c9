//! Recipient (`to`) parsing, in one place: a LID user-part, a `+phone` number
//! (resolved to the contact's LID by the session owner when known), or a full
//! JID (`@lid`, a phone JID, a group JID). Also the JID spellings built from them.
use std::fmt;

use serde::{Deserialize, Serialize};

pub use crate::address::{GROUP_SERVER, LID_SERVER, PHONE_SERVER};
use crate::address::{Jid, PhoneNumber};
use crate::invalid::Invalid;

/// The legacy spelling of the phone server, accepted and rewritten.
const LEGACY_PHONE_SERVER: &str = "c.us";

/// Lengths of a LID user-part.
const LID_DIGITS: std::ops::RangeInclusive<usize> = 8..=20;

/// The user part of the status chat, `status@broadcast`.
pub const STATUS_USER: &str = "status";

/// The server of broadcast lists and the status chat.
pub const BROADCAST_SERVER: &str = "broadcast";

/// A parsed `to`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", content = "user", rename_all = "kebab-case")]
pub enum Recipient {
    /// A user by LID user-part: `<digits>@lid`.
    Lid(String),
    /// A phone number given as `+<digits>`: the owner resolves it to the
    /// contact's LID when the network knows one, else it is the phone JID.
    Phone(PhoneNumber),
    /// A phone JID given in full (`<digits>@s.whatsapp.net`): used as is.
    PhoneJid(PhoneNumber),
    /// A group: `<id>@g.us`.
    Group(String),
    /// The account's status (stories): `status@broadcast`, to an audience
    /// of its own (never parsed from a customer's `to`).
    Status,
}

impl Recipient {
    /// Parses a `to` field; a malformed one is a 400 naming `field`.
    pub fn parse(field: &str, raw: &str) -> Result<Recipient, Invalid> {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(Invalid::new(format!("{field} is required")));
        }
        parse(raw).ok_or_else(|| {
            Invalid::new(format!(
                "{field} must be a LID user-part (digits), a +phone number with country code, \
                 or a JID ending in @{LID_SERVER}, @{PHONE_SERVER} or @{GROUP_SERVER}"
            ))
        })
    }

    /// The user part (digits; for groups the group id).
    pub fn user(&self) -> &str {
        match self {
            Recipient::Lid(u) | Recipient::Group(u) => u,
            Recipient::Phone(p) | Recipient::PhoneJid(p) => p.as_str(),
            Recipient::Status => STATUS_USER,
        }
    }

    /// The chat JID, without resolving a `+phone` (that is its phone JID).
    pub fn jid(&self) -> Jid {
        match self {
            Recipient::Lid(u) => Jid::from_valid_parts(u, LID_SERVER),
            Recipient::Phone(p) | Recipient::PhoneJid(p) => Jid::phone(p),
            Recipient::Group(g) => Jid::from_valid_parts(g, GROUP_SERVER),
            Recipient::Status => Jid::from_valid_parts(STATUS_USER, BROADCAST_SERVER),
        }
    }

    /// The phone number, for a recipient given by one.
    pub fn phone(&self) -> Option<&PhoneNumber> {
        match self {
            Recipient::Phone(p) | Recipient::PhoneJid(p) => Some(p),
            _ => None,
        }
    }

    pub fn is_group(&self) -> bool {
        matches!(self, Recipient::Group(_))
    }
}

impl fmt::Display for Recipient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Recipient::Phone(u) => write!(f, "+{u}"),
            other => f.write_str(other.jid().as_str()),
        }
    }
}

/// `<user>@lid`, for a LID user-part the caller knows to be well-formed (a
/// contact book's or the network's); `None` otherwise.
pub fn lid_jid(user: &str) -> Option<Jid> {
    Jid::new(user, LID_SERVER)
}

/// A user-part as given in `mentions`: digits (a leading `+` is dropped).
pub fn mention(field: &str, raw: &str) -> Result<String, Invalid> {
    let user = raw.trim().trim_start_matches('+');
    if digits(user, &LID_DIGITS) {
        Ok(user.to_string())
    } else {
        Err(Invalid::new(format!(
            "{field} must hold user-parts: 8 to 20 digits each"
        )))
    }
}

fn digits(s: &str, lengths: &std::ops::RangeInclusive<usize>) -> bool {
    lengths.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())
}

/// A group id: digits, or the older `<creator digits>-<timestamp digits>`.
fn group_id(s: &str) -> bool {
    let mut parts = s.split('-');
    let first = parts.next().unwrap_or_default();
    let second = parts.next();
    parts.next().is_none()
        && digits(first, &(5..=30))
        && second.is_none_or(|t| digits(t, &(5..=20)))
}

fn parse(raw: &str) -> Option<Recipient> {
    if let Some(phone) = raw.strip_prefix('+') {
        return PhoneNumber::from_digits(phone).map(Recipient::Phone);
    }
    let Some((user, server)) = raw.split_once('@') else {
        return digits(raw, &LID_DIGITS).then(|| Recipient::Lid(raw.to_string()));
    };
    match server.to_ascii_lowercase().as_str() {
        LID_SERVER => digits(user, &LID_DIGITS).then(|| Recipient::Lid(user.to_string())),
        PHONE_SERVER | LEGACY_PHONE_SERVER => {
            PhoneNumber::from_digits(user).map(Recipient::PhoneJid)
        }
        GROUP_SERVER => group_id(user).then(|| Recipient::Group(user.to_string())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(raw: &str) -> Recipient {
        Recipient::parse("to", raw).unwrap_or_else(|e| panic!("{raw:?}: {e}"))
    }

    #[test]
    fn lid_user_parts_and_lid_jids() {
        assert_eq!(
            ok("123456789012345"),
            Recipient::Lid("123456789012345".into())
        );
        assert_eq!(
            ok(" 123456789012345@lid "),
            Recipient::Lid("123456789012345".into())
        );
        assert_eq!(ok("123456789012345").jid().as_str(), "123456789012345@lid");
    }

    #[test]
    fn phones_are_kept_for_resolution() {
        let r = ok("+4915112345678");
        assert_eq!(
            r,
            Recipient::Phone(PhoneNumber::from_digits("4915112345678").unwrap())
        );
        assert_eq!(r.jid().as_str(), "4915112345678@s.whatsapp.net");
        assert_eq!(r.to_string(), "+4915112345678");
        assert_eq!(r.user(), "4915112345678");
    }

    #[test]
    fn phone_and_group_jids() {
        assert_eq!(
            ok("4915112345678@s.whatsapp.net"),
            Recipient::PhoneJid(PhoneNumber::from_digits("4915112345678").unwrap())
        );
        assert_eq!(
            ok("4915112345678@c.us").jid().as_str(),
            "4915112345678@s.whatsapp.net"
        );
        let g = ok("120363025246125486@g.us");
        assert!(g.is_group());
        assert_eq!(g.jid().as_str(), "120363025246125486@g.us");
        assert_eq!(
            ok("4915112345678-1612345678@g.us").user(),
            "4915112345678-1612345678"
        );
    }

    #[test]
    fn malformed_recipients_are_400() {
        for bad in [
            "",
            "   ",
            "abc",
            "+49 151",
            "+123",
            "+1234567890123456",
            "1234",
            "12345678901234567890123",
            "12345678@",
            "@lid",
            "abc@lid",
            "4915112345678:3@s.whatsapp.net",
            "status@broadcast",
            "123@newsletter",
            "12345678@example.com",
            "a-b@g.us",
            "1-2-3@g.us",
            "123456789012345@lid@lid",
        ] {
            let err = Recipient::parse("to", bad).unwrap_err();
            assert!(err.message.starts_with("to "), "{bad:?}: {err}");
            if !bad.trim().is_empty() {
                assert!(
                    err.message.contains("LID user-part"),
                    "{bad:?}: {}",
                    err.message
                );
            }
        }
    }

    #[test]
    fn recipients_round_trip_as_json() {
        for r in [
            ok("123456789012345"),
            ok("+4915112345678"),
            ok("4915112345678@s.whatsapp.net"),
            ok("120363025246125486@g.us"),
        ] {
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(serde_json::from_str::<Recipient>(&json).unwrap(), r);
        }
    }

    #[test]
    fn mentions_are_digits() {
        assert_eq!(
            mention("mentions", "+4915112345678").unwrap(),
            "4915112345678"
        );
        assert_eq!(
            mention("mentions", "123456789012345").unwrap(),
            "123456789012345"
        );
        for bad in ["", "abc", "123", "4915112345678@lid"] {
            let err = mention("mentions", bad).unwrap_err();
            assert!(err.message.starts_with("mentions "), "{bad}: {err}");
        }
    }
}
