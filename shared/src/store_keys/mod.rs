//! Secrets at rest: values sealed with XChaCha20-Poly1305 under one of the
//! store keys (`PARLEY_STORE_KEYS`: `id:base64key` entries, comma-separated;
//! `PARLEY_STORE_KEY_ID` names the one new writes use). A sealed value
//! carries the id of its key, so older keys still open it, and the place it
//! belongs to (table, column, row) as associated data, so a value copied to
//! another row or column does not open. `parley rekey` seals every value again
//! under the active key; rotation is: add the new key everywhere, switch the
//! active id, rekey, remove the old key.
//!
//! A sealed blob: `PK1` | key id length (1 byte) | key id | 24-byte nonce |
//! ciphertext with its tag. A sealed text: `pk1:` and the blob in base64.
//! Values without the marker are plain (stored before encryption was on) and
//! are read as they are; `rekey` seals them.
use std::collections::HashMap;
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rand::RngCore;

mod cipher;

use cipher::{NONCE, XChaCha20Poly1305};

const BLOB_MARK: &[u8] = b"PK1";
const TEXT_MARK: &str = "pk1:";

/// Why a store key setting or a sealed value is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("PARLEY_STORE_KEYS: {0}")]
    Setting(String),
    #[error("sealed with store key {0:?}, which PARLEY_STORE_KEYS does not hold")]
    UnknownKey(String),
    #[error("a sealed value does not open (wrong key, or altered or moved)")]
    Corrupt,
}

/// The store keys, and which one seals.
#[derive(Clone)]
pub struct StoreKeys {
    keys: Arc<HashMap<String, XChaCha20Poly1305>>,
    active: Option<String>,
}

impl std::fmt::Debug for StoreKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut ids: Vec<&String> = self.keys.keys().collect();
        ids.sort();
        f.debug_struct("StoreKeys")
            .field("ids", &ids)
            .field("active", &self.active)
            .finish()
    }
}

impl StoreKeys {
    /// No keys: values are written plain (tests of one module only; every
    /// process the binary starts has keys).
    pub fn none() -> StoreKeys {
        StoreKeys {
            keys: Arc::default(),
            active: None,
        }
    }

    /// Parses `id:base64key[,id:base64key...]` (32-byte keys) and the active
    /// id (default: the only key, or else required).
    pub fn parse(keys: &str, active: Option<&str>) -> Result<StoreKeys, KeyError> {
        let mut map = HashMap::new();
        for entry in keys.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (id, key) = entry
                .split_once(':')
                .ok_or_else(|| KeyError::Setting("each entry is id:base64key".into()))?;
            let id = id.trim();
            if id.is_empty()
                || id.len() > 64
                || !id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            {
                return Err(KeyError::Setting(format!(
                    "key id {id:?}: 1 to 64 letters, digits, - or _"
                )));
            }
            let raw = STANDARD
                .decode(key.trim())
                .map_err(|_| KeyError::Setting(format!("key {id:?} is not base64")))?;
            let raw: [u8; 32] = raw.as_slice().try_into().map_err(|_| {
                KeyError::Setting(format!("key {id:?} has {} bytes, expected 32", raw.len()))
            })?;
            let cipher = XChaCha20Poly1305::new(raw);
            if map.insert(id.to_string(), cipher).is_some() {
                return Err(KeyError::Setting(format!("key id {id:?} given twice")));
            }
        }
        if map.is_empty() {
            return Err(KeyError::Setting("no key given".into()));
        }
        let active = match active.map(str::trim).filter(|a| !a.is_empty()) {
            Some(id) if map.contains_key(id) => id.to_string(),
            Some(id) => {
                return Err(KeyError::Setting(format!(
                    "PARLEY_STORE_KEY_ID names {id:?}, which is not among the keys"
                )));
            }
            None if map.len() == 1 => map.keys().next().cloned().unwrap_or_default(),
            None => {
                return Err(KeyError::Setting(
                    "several keys: PARLEY_STORE_KEY_ID must name the one new writes use".into(),
                ));
            }
        };
        Ok(StoreKeys {
            keys: Arc::new(map),
            active: Some(active),
        })
    }

    /// A fresh entry `id:base64key` for a key file or a Secret.
    pub fn generate_entry(id: &str) -> String {
        let mut key = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut key);
        format!("{id}:{}", STANDARD.encode(key))
    }

    /// The id new writes use; `None` without keys.
    pub fn active(&self) -> Option<&str> {
        self.active.as_deref()
    }

    /// `plain` sealed for `place` under the active key (plain without keys).
    pub fn seal(&self, place: &str, plain: &[u8]) -> Vec<u8> {
        let Some((id, cipher)) = self.active_cipher() else {
            return plain.to_vec();
        };
        let mut nonce = [0u8; NONCE];
        rand::thread_rng().fill_bytes(&mut nonce);
        let sealed = cipher.seal(&nonce, place.as_bytes(), plain);
        let mut out = Vec::with_capacity(BLOB_MARK.len() + 1 + id.len() + NONCE + sealed.len());
        out.extend_from_slice(BLOB_MARK);
        out.push(id.len() as u8);
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        out
    }

    /// The plain bytes of a value read from `place`: opened when sealed,
    /// as stored when plain.
    pub fn open(&self, place: &str, stored: &[u8]) -> Result<Vec<u8>, KeyError> {
        let Some(rest) = stored.strip_prefix(BLOB_MARK) else {
            return Ok(stored.to_vec());
        };
        let (&len, rest) = rest.split_first().ok_or(KeyError::Corrupt)?;
        let len = usize::from(len);
        if rest.len() < len + NONCE {
            return Err(KeyError::Corrupt);
        }
        let (id, rest) = rest.split_at(len);
        let (nonce, sealed) = rest.split_at(NONCE);
        let nonce: &[u8; NONCE] = nonce.try_into().map_err(|_| KeyError::Corrupt)?;
        let id = std::str::from_utf8(id).map_err(|_| KeyError::Corrupt)?;
        let cipher = self
            .keys
            .get(id)
            .ok_or_else(|| KeyError::UnknownKey(id.to_string()))?;
        cipher
            .open(nonce, place.as_bytes(), sealed)
            .ok_or(KeyError::Corrupt)
    }

    /// [`StoreKeys::seal`] for a text column.
    pub fn seal_text(&self, place: &str, plain: &str) -> String {
        if self.active.is_none() || plain.is_empty() {
            return plain.to_string();
        }
        format!(
            "{TEXT_MARK}{}",
            STANDARD.encode(self.seal(place, plain.as_bytes()))
        )
    }

    /// [`StoreKeys::open`] for a text column.
    pub fn open_text(&self, place: &str, stored: &str) -> Result<String, KeyError> {
        let Some(encoded) = stored.strip_prefix(TEXT_MARK) else {
            return Ok(stored.to_string());
        };
        let blob = STANDARD.decode(encoded).map_err(|_| KeyError::Corrupt)?;
        if !blob.starts_with(BLOB_MARK) {
            return Err(KeyError::Corrupt);
        }
        String::from_utf8(self.open(place, &blob)?).map_err(|_| KeyError::Corrupt)
    }

    /// Whether a stored value is sealed under the active key already.
    pub fn is_current(&self, stored: &[u8]) -> bool {
        match (&self.active, stored.strip_prefix(BLOB_MARK)) {
            (Some(active), Some(rest)) => rest.split_first().is_some_and(|(len, rest)| {
                rest.get(..usize::from(*len)) == Some(active.as_bytes())
            }),
            (None, _) => true,
            (Some(_), None) => false,
        }
    }

    /// [`StoreKeys::is_current`] for a text column.
    pub fn is_current_text(&self, stored: &str) -> bool {
        if stored.is_empty() || self.active.is_none() {
            return true;
        }
        stored
            .strip_prefix(TEXT_MARK)
            .and_then(|e| STANDARD.decode(e).ok())
            .is_some_and(|blob| self.is_current(&blob))
    }

    fn active_cipher(&self) -> Option<(&str, &XChaCha20Poly1305)> {
        let id = self.active.as_deref()?;
        Some((id, self.keys.get(id)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(active: &str) -> StoreKeys {
        let a = format!("a:{}", STANDARD.encode([1u8; 32]));
        let b = format!("b:{}", STANDARD.encode([2u8; 32]));
        StoreKeys::parse(&format!("{a}, {b}"), Some(active)).unwrap()
    }

    #[test]
    fn sealed_values_open_only_in_their_place_and_hide_the_bytes() {
        let k = keys("a");
        let sealed = k.seal("t.c:row1", b"private key bytes");
        assert!(
            !sealed.windows(7).any(|w| w == b"private"),
            "no plain bytes"
        );
        assert_eq!(k.open("t.c:row1", &sealed).unwrap(), b"private key bytes");
        assert_eq!(
            k.open("t.c:row2", &sealed),
            Err(KeyError::Corrupt),
            "moved to another row"
        );
        let mut altered = sealed.clone();
        *altered.last_mut().unwrap() ^= 1;
        assert_eq!(k.open("t.c:row1", &altered), Err(KeyError::Corrupt));
        assert_ne!(
            k.seal("t.c:row1", b"x"),
            k.seal("t.c:row1", b"x"),
            "fresh nonces"
        );
    }

    #[test]
    fn older_keys_open_and_the_active_key_seals() {
        let old = keys("a");
        let new = keys("b");
        let sealed = old.seal("p", b"secret");
        assert_eq!(new.open("p", &sealed).unwrap(), b"secret");
        assert!(!new.is_current(&sealed));
        assert!(new.is_current(&new.seal("p", b"secret")));
        let only_b = StoreKeys::parse(&format!("b:{}", STANDARD.encode([2u8; 32])), None).unwrap();
        assert_eq!(
            only_b.open("p", &sealed),
            Err(KeyError::UnknownKey("a".into()))
        );
    }

    #[test]
    fn plain_values_read_as_they_are_until_rekeyed() {
        let k = keys("a");
        assert_eq!(k.open("p", b"legacy").unwrap(), b"legacy");
        assert_eq!(k.open_text("p", "legacy-token").unwrap(), "legacy-token");
        assert!(!k.is_current(b"legacy"));
        assert!(!k.is_current_text("legacy-token"));
        assert!(k.is_current_text(""), "nothing to seal");
    }

    #[test]
    fn texts_round_trip_and_carry_no_plain_text() {
        let k = keys("b");
        let sealed = k.seal_text("sessions.webhook_token:c1", "hook-token-123");
        assert!(sealed.starts_with(TEXT_MARK) && !sealed.contains("hook-token"));
        assert_eq!(
            k.open_text("sessions.webhook_token:c1", &sealed).unwrap(),
            "hook-token-123"
        );
        assert!(k.is_current_text(&sealed));
        assert_eq!(k.seal_text("p", ""), "", "an empty value stays empty");
    }

    #[test]
    fn settings_are_checked() {
        let good = STANDARD.encode([7u8; 32]);
        for (keys, active) in [
            ("", None),
            ("nocolon", None),
            (&*format!("a:{}", STANDARD.encode([1u8; 16])), None),
            (&*format!("a:{good},b:{good}"), None),
            (&*format!("a:{good}"), Some("b")),
            (&*format!("a:{good},a:{good}"), Some("a")),
            (&*format!("bad id:{good}"), None),
        ] {
            assert!(
                StoreKeys::parse(keys, active).is_err(),
                "{keys:?} {active:?}"
            );
        }
        let entry = StoreKeys::generate_entry("k1");
        let k = StoreKeys::parse(&entry, None).unwrap();
        assert_eq!(k.active(), Some("k1"));
        assert!(!format!("{k:?}").contains(entry.split_once(':').unwrap().1));
    }
}
