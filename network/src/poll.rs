//! Poll options as the network identifies them in votes: by the SHA-256 of
//! the option's text.

/// The hash a vote carries for `option`.
pub fn option_hash(option: &str) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(option.as_bytes()).into()
}
