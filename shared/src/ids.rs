//! Typed identifiers, validated once when parsed.
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

use crate::error::ApiError;

/// Longest accepted `clientId`.
pub const CLIENT_ID_MAX: usize = 64;

/// A session's `clientId`: 1 to 64 ASCII letters and digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct ClientId(String);

impl ClientId {
    pub fn parse(raw: &str) -> Result<ClientId, ApiError> {
        if raw.is_empty() {
            return Err(ApiError::bad_request("clientId is required"));
        }
        if raw.len() > CLIENT_ID_MAX {
            return Err(ApiError::bad_request(format!(
                "clientId is longer than {CLIENT_ID_MAX} characters"
            )));
        }
        if !raw.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(ApiError::bad_request(
                "clientId may contain only letters and digits",
            ));
        }
        Ok(ClientId(raw.to_string()))
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
            assert_eq!(err.status, 400, "{bad:?}");
        }
    }
}
