//! Network addresses and message ids, each a type validated once where it
//! enters: a [`Jid`] (`<user>@<server>`), a [`PhoneNumber`] (digits with
//! country code) and a [`MessageId`] (opaque). A chat room id
//! ([`crate::ids::ChatRoomId`]) is none of them, so it cannot be passed where
//! one of them is expected.
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

use crate::invalid::Invalid;

/// Server part of LID JIDs.
pub const LID_SERVER: &str = "lid";
/// Server part of phone JIDs.
pub const PHONE_SERVER: &str = "s.whatsapp.net";
/// Server part of group JIDs.
pub const GROUP_SERVER: &str = "g.us";

/// Longest accepted JID.
const JID_MAX: usize = 256;
/// Longest message id a customer may name.
pub const MESSAGE_ID_MAX: usize = 128;
/// Lengths of a phone number with country code (E.164).
pub const PHONE_DIGITS: std::ops::RangeInclusive<usize> = 8..=15;

/// A network address: a non-empty user part (which may carry the network's
/// `:device` or `.agent` suffixes), one `@`, and a server of lowercase
/// letters, digits and dots. This is the shape of every address the network
/// hands over (contacts, groups, broadcasts, newsletters); what a customer
/// may name is narrower and read by [`crate::recipients::Recipient::parse`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Jid(String);

impl Jid {
    /// A well-formed address, or `None`.
    pub fn parse(raw: &str) -> Option<Jid> {
        let (user, server) = raw.split_once('@')?;
        let user_ok = !user.is_empty()
            && user
                .chars()
                .all(|c| !c.is_whitespace() && !c.is_control() && c != '@');
        let server_ok = !server.is_empty()
            && server
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.');
        (raw.len() <= JID_MAX && user_ok && server_ok).then(|| Jid(raw.to_string()))
    }

    /// `user@server` from its parts, when both are well-formed.
    pub fn new(user: &str, server: &str) -> Option<Jid> {
        Jid::parse(&format!("{user}@{server}"))
    }

    /// `<number>@s.whatsapp.net`.
    pub fn phone(number: &PhoneNumber) -> Jid {
        Jid(format!("{}@{PHONE_SERVER}", number.0))
    }

    /// Built by the recipient parser from parts it validated.
    pub(crate) fn from_valid_parts(user: &str, server: &str) -> Jid {
        debug_assert!(Jid::new(user, server).is_some(), "{user}@{server}");
        Jid(format!("{user}@{server}"))
    }

    /// Everything before the `@` (device suffix included).
    pub fn user(&self) -> &str {
        self.0.split_once('@').map_or("", |(user, _)| user)
    }

    /// The user part without the `:device` and `.agent` suffixes.
    pub fn bare_user(&self) -> &str {
        let user = self.user();
        let end = user.find([':', '.']).unwrap_or(user.len());
        &user[..end]
    }

    pub fn server(&self) -> &str {
        self.0.split_once('@').map_or("", |(_, server)| server)
    }

    pub fn is_group(&self) -> bool {
        self.server() == GROUP_SERVER
    }

    pub fn is_lid(&self) -> bool {
        self.server() == LID_SERVER
    }

    pub fn is_phone(&self) -> bool {
        self.server() == PHONE_SERVER
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for Jid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Jid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        Jid::parse(&raw).ok_or_else(|| serde::de::Error::custom(format!("not a JID: {raw:?}")))
    }
}

/// A phone number with country code: 8 to 15 digits, without the `+`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct PhoneNumber(String);

impl PhoneNumber {
    /// `raw` with or without a leading `+` (and surrounding spaces); a
    /// malformed one is a 400 naming `field`.
    pub fn parse(field: &str, raw: &str) -> Result<PhoneNumber, Invalid> {
        PhoneNumber::from_digits(raw.trim().trim_start_matches('+')).ok_or_else(|| {
            Invalid::new(format!("{field} must be 8 to 15 digits with country code"))
        })
    }

    /// Exactly 8 to 15 digits, or `None`.
    pub fn from_digits(digits: &str) -> Option<PhoneNumber> {
        (PHONE_DIGITS.contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| PhoneNumber(digits.to_string()))
    }

    /// The digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for PhoneNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for PhoneNumber {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        PhoneNumber::from_digits(&raw)
            .ok_or_else(|| serde::de::Error::custom(format!("not a phone number: {raw:?}")))
    }
}

/// A network message id. Opaque: the network's own ids are any non-empty
/// string, and a quoted id may name a message this gateway never saw.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct MessageId(String);

impl MessageId {
    /// An id a customer names in `field`: 1 to 128 letters, digits, `-`, `_`,
    /// `.` or `:` (surrounding spaces dropped); missing or malformed is a 400.
    pub fn parse(field: &str, value: Option<&str>) -> Result<MessageId, Invalid> {
        let id = value.map(str::trim).unwrap_or_default();
        if id.is_empty() {
            return Err(Invalid::new(format!("{field} is required")));
        }
        let ok = id.len() <= MESSAGE_ID_MAX
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'));
        if !ok {
            return Err(Invalid::new(format!(
                "{field} must be a message id: up to {MESSAGE_ID_MAX} letters, digits, '-', '_', '.' or ':'"
            )));
        }
        Ok(MessageId(id.to_string()))
    }

    /// An id as the network or storage hands it over: any non-empty string.
    pub fn new(raw: impl Into<String>) -> Option<MessageId> {
        let raw = raw.into();
        (!raw.is_empty()).then_some(MessageId(raw))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for MessageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for MessageId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        MessageId::new(String::deserialize(d)?)
            .ok_or_else(|| serde::de::Error::custom("an empty message id"))
    }
}

/// Compared with plain text the way the text would be written on the wire.
macro_rules! eq_text {
    ($($t:ty),+) => {$(
        impl PartialEq<str> for $t {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }
        impl PartialEq<&str> for $t {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
        impl PartialEq<String> for $t {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }
    )+};
}
eq_text!(Jid, PhoneNumber, MessageId);

#[cfg(test)]
mod tests;
