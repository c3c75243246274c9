//! Typed identifiers, validated once when parsed.
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

use crate::invalid::Invalid;

/// Longest accepted `clientId`.
pub const CLIENT_ID_MAX: usize = 64;

/// A session's `clientId`: 1 to 64 ASCII letters and digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct ClientId(String);

impl ClientId {
    pub fn parse(raw: &str) -> Result<ClientId, Invalid> {
        if raw.is_empty() {
            return Err(Invalid::new("clientId is required"));
        }
        if raw.len() > CLIENT_ID_MAX {
            return Err(Invalid::new(format!(
                "clientId is longer than {CLIENT_ID_MAX} characters"
            )));
        }
        if !raw.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(Invalid::new("clientId may contain only letters and digits"));
        }
        Ok(ClientId(raw.to_string()))
    }

    /// A `clientId` the gateway itself stored (a session's row, a queued
    /// delivery), which was parsed before it was written: taken as it is,
    /// checked only in debug builds.
    pub fn from_stored(stored: String) -> ClientId {
        debug_assert!(
            ClientId::parse(&stored).is_ok(),
            "a stored clientId is not valid: {stored:?}"
        );
        ClientId(stored)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for ClientId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for ClientId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        ClientId::parse(&raw).map_err(|e| serde::de::Error::custom(e.message))
    }
}

/// A hosted-inbox conversation's `chatRoomId`: `<clientId>-<myLid>-<other>`,
/// where `other` is the contact's LID user-part or the group's id (which may
/// itself contain `-`). Built from its parts; a raw id from a request is read
/// by [`ChatRoomId::parse`], which knows that shape, never by ad-hoc splitting.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct ChatRoomId(String);

impl ChatRoomId {
    /// The room of session `client_id` (whose own LID user-part is `my_lid`)
    /// with `other`.
    pub fn new(client_id: &str, my_lid: &str, other: &str) -> ChatRoomId {
        ChatRoomId(format!("{client_id}-{my_lid}-{other}"))
    }

    /// A room id as a request names it: a valid `clientId`, then `myLid` (no
    /// `-` in it, possibly empty), then a non-empty rest. `None` otherwise.
    pub fn parse(raw: &str) -> Option<ChatRoomId> {
        let (client, rest) = raw.split_at(raw.find('-')?);
        let (my_lid, other) = rest[1..].split_at(rest[1..].find('-')?);
        let valid = ClientId::parse(client).is_ok() && !my_lid.contains('-') && other.len() > 1;
        valid.then(|| ChatRoomId(raw.to_string()))
    }

    /// The session a raw room id names (its first part), however ill-formed
    /// the rest: authentication reads it before the room is looked up, so a
    /// session's secret on an ill-formed id of its own answers 404, not 401.
    pub fn named_client(raw: &str) -> Option<&str> {
        raw.find('-').map(|end| &raw[..end])
    }

    /// The session the room belongs to.
    pub fn client_id(&self) -> ClientId {
        let end = self.0.find('-').unwrap_or(self.0.len());
        ClientId(self.0[..end].to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for ChatRoomId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_letters_and_digits() {
        assert_eq!(ClientId::parse("Shop42").unwrap().as_str(), "Shop42");
    }

    #[test]
    fn refuses_empty_symbols_and_long() {
        for bad in ["", "a-b", "a b", "é", "a/b", &"x".repeat(CLIENT_ID_MAX + 1)] {
            let err = ClientId::parse(bad).unwrap_err();
            assert!(err.message.contains("clientId"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn chat_room_ids_are_built_from_parts_and_read_back() {
        let room = ChatRoomId::new("shop", "111", "120363-1600000000");
        assert_eq!(room.as_str(), "shop-111-120363-1600000000");
        let parsed = ChatRoomId::parse(room.as_str()).expect("a room id");
        assert_eq!(parsed, room);
        assert_eq!(parsed.client_id().as_str(), "shop");
        assert_eq!(ChatRoomId::named_client("shop-111"), Some("shop"));
        assert_eq!(ChatRoomId::named_client("shop"), None);
        // A session whose LID is not known yet.
        assert_eq!(
            ChatRoomId::parse("shop--222").map(|r| r.client_id().to_string()),
            Some("shop".to_string())
        );
    }

    #[test]
    fn chat_room_ids_refuse_other_shapes() {
        for bad in [
            "",
            "shop",
            "shop-111",
            "shop-111-",
            "sh op-1-2",
            "-1-2",
            "é-1-2",
        ] {
            assert_eq!(ChatRoomId::parse(bad), None, "{bad:?}");
        }
    }
}
