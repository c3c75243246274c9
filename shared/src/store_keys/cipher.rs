//! XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha): HChaCha20 turns the key
//! and the nonce's first 16 bytes into a subkey, and ChaCha20-Poly1305
//! (RFC 8439) seals under it with the nonce's last 8 bytes. The AEAD is
//! ring's: a device store opens hundreds of small records at a login (every
//! pre-key, for the server's key digest), where ring takes about a fifth
//! of the time of a portable implementation.
use chacha20::cipher::consts::U10;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, UnboundKey};

/// The nonce's length.
pub(super) const NONCE: usize = 24;

/// One store key.
pub(super) struct XChaCha20Poly1305 {
    key: [u8; 32],
}

impl XChaCha20Poly1305 {
    pub(super) fn new(key: [u8; 32]) -> Self {
        Self { key }
    }

    /// `plain` sealed with its tag appended.
    pub(super) fn seal(&self, nonce: &[u8; NONCE], aad: &[u8], plain: &[u8]) -> Vec<u8> {
        let (key, nonce) = self.subkey(nonce);
        let mut out = Vec::with_capacity(plain.len() + CHACHA20_POLY1305.tag_len());
        out.extend_from_slice(plain);
        // ring refuses only messages longer than ChaCha20's counter covers
        // (256 GiB); nothing Parley stores comes near (device records are a
        // few KiB).
        if key
            .seal_in_place_append_tag(nonce, Aad::from(aad), &mut out)
            .is_err()
        {
            out.clear();
        }
        out
    }

    /// The plain bytes of `sealed` (its tag appended); `None` when it does
    /// not open under this key, nonce and associated data.
    pub(super) fn open(&self, nonce: &[u8; NONCE], aad: &[u8], sealed: &[u8]) -> Option<Vec<u8>> {
        let (key, nonce) = self.subkey(nonce);
        let mut buf = sealed.to_vec();
        let plain = key
            .open_in_place(nonce, Aad::from(aad), &mut buf)
            .ok()?
            .len();
        buf.truncate(plain);
        Some(buf)
    }

    fn subkey(&self, nonce: &[u8; NONCE]) -> (LessSafeKey, Nonce) {
        let (head, tail) = nonce.split_at(16);
        let subkey = chacha20::hchacha::<U10>((&self.key).into(), head.into());
        let mut short = [0u8; 12];
        short[4..].copy_from_slice(tail);
        let key = UnboundKey::new(&CHACHA20_POLY1305, subkey.as_slice())
            .expect("a ChaCha20 key is 32 bytes");
        (LessSafeKey::new(key), Nonce::assume_unique_for_key(short))
    }
}

#[cfg(test)]
mod tests {
    use chacha20poly1305::aead::{Aead, KeyInit, Payload};
    use rand::{Rng, RngCore};

    use super::*;

    /// Values sealed by the portable implementation (which sealed every
    /// value stored before) open, and the other way round.
    #[test]
    fn seals_what_the_portable_implementation_seals() {
        let mut rng = rand::thread_rng();
        for len in [0, 1, 15, 16, 63, 64, 65, 80, 600, 2000, 4099] {
            let mut key = [0u8; 32];
            let mut nonce = [0u8; NONCE];
            rng.fill_bytes(&mut key);
            rng.fill_bytes(&mut nonce);
            let plain: Vec<u8> = (0..len).map(|_| rng.r#gen()).collect();
            let aad = format!("wa_prekeys.record:{len}");
            let ours = XChaCha20Poly1305::new(key);
            let portable = chacha20poly1305::XChaCha20Poly1305::new((&key).into());
            let payload = Payload {
                msg: &plain,
                aad: aad.as_bytes(),
            };
            let theirs = portable.encrypt((&nonce).into(), payload).unwrap();
            let sealed = ours.seal(&nonce, aad.as_bytes(), &plain);
            assert_eq!(sealed, theirs, "{len} bytes");
            assert_eq!(ours.open(&nonce, aad.as_bytes(), &theirs), Some(plain));
            assert_eq!(ours.open(&nonce, b"elsewhere", &theirs), None);
            let mut other = nonce;
            other[20] ^= 1;
            assert_eq!(ours.open(&other, aad.as_bytes(), &theirs), None);
            assert_eq!(ours.open(&nonce, aad.as_bytes(), &theirs[..len]), None);
        }
    }
}
