//! Random codes of the simulated network: QR payloads and phone pairing codes.
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rand::{Rng, RngCore};

/// Pairing-code characters: uppercase letters and digits, without look-alikes
/// (0/O, 1/I).
const PAIR_ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/// Length of a pairing code.
pub const PAIR_CODE_LEN: usize = 8;

/// A fresh, unguessable QR payload of `client_id`: `2@<40 base64 chars>,<clientId>`.
pub fn qr_code(client_id: &str) -> String {
    let mut raw = [0u8; 30];
    rand::thread_rng().fill_bytes(&mut raw);
    format!("2@{},{client_id}", STANDARD.encode(raw))
}

/// A fresh 8-character pairing code.
pub fn pair_code() -> String {
    let mut rng = rand::thread_rng();
    (0..PAIR_CODE_LEN)
        .map(|_| char::from(PAIR_ALPHABET[rng.gen_range(0..PAIR_ALPHABET.len())]))
        .collect()
}

/// Invite-code characters: letters and digits.
const INVITE_ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// A fresh 22-character group invite code.
pub fn invite_code() -> String {
    let mut rng = rand::thread_rng();
    (0..22)
        .map(|_| char::from(INVITE_ALPHABET[rng.gen_range(0..INVITE_ALPHABET.len())]))
        .collect()
}

/// A fresh group JID: `120363` and 12 random digits, `@g.us`.
pub fn group_jid() -> String {
    let n: u64 = rand::thread_rng().gen_range(0..1_000_000_000_000);
    format!("120363{n:012}@g.us")
}

/// A code as the phone's user typed it, in the form it was issued:
/// trimmed, uppercase, without the `-` some apps show in the middle.
pub fn normalize_pair_code(typed: &str) -> String {
    typed
        .trim()
        .chars()
        .filter(|c| *c != '-')
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qr_codes_are_random_and_name_the_session() {
        let a = qr_code("client-1");
        let b = qr_code("client-1");
        assert_ne!(a, b);
        assert!(a.starts_with("2@"));
        assert!(a.ends_with(",client-1"));
        assert_eq!(a.len(), "2@".len() + 40 + ",client-1".len());
    }

    #[test]
    fn pair_codes_use_unambiguous_characters() {
        let code = pair_code();
        assert_eq!(code.len(), PAIR_CODE_LEN);
        assert!(code.bytes().all(|b| PAIR_ALPHABET.contains(&b)));
        assert_eq!(normalize_pair_code(" abcd-efgh "), "ABCDEFGH");
    }
}
