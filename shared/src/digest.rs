//! Secret digests and their constant-time comparison.
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// SHA-256 of a secret.
pub fn sha256(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// Hex SHA-256 of a secret, as stored.
pub fn sha256_hex(secret: &str) -> String {
    hex::encode(sha256(secret))
}

/// Whether `presented` hashes to `expected`, compared in constant time.
pub fn matches(presented: &str, expected: &[u8; 32]) -> bool {
    sha256(presented).ct_eq(expected).into()
}

/// Whether `presented` hashes to the stored hex digest, compared in constant time.
pub fn matches_hex(presented: &str, stored_hex: &str) -> bool {
    let mut expected = [0u8; 32];
    if hex::decode_to_slice(stored_hex, &mut expected).is_err() {
        return false;
    }
    matches(presented, &expected)
}

/// A new random secret: 32 bytes, hex.
pub fn random_token() -> String {
    use rand::RngCore;
    let mut raw = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut raw);
    hex::encode(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_only_the_same_secret() {
        let stored = sha256_hex("correct horse battery");
        assert!(matches_hex("correct horse battery", &stored));
        assert!(!matches_hex("correct horse batterz", &stored));
        assert!(!matches_hex("x", "not hex"));
    }
}
