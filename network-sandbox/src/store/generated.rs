//! Generated files of the sandbox network's CDN: a file of any size made of
//! seeded pseudo-random bytes, never stored and never held whole. Its direct
//! path names the seed and the length; downloading it generates the bytes
//! again, chunk by chunk. Generated files travel unencrypted and without
//! hashes (there is nothing to hide in them, and hashing would read them
//! whole at each injection).
use bytes::{Bytes, BytesMut};
use rand::RngCore;

/// Bytes per generated chunk (a multiple of 8).
pub const CHUNK: usize = 64 * 1024;

/// The largest file the sandbox generates: 4 GiB.
pub const MAX_LEN: u64 = 4 << 30;

const PREFIX: &str = "/sandbox/cdn/gen-";

/// The chunks of the file of `len` bytes generated from `seed`.
#[derive(Debug, Clone)]
pub struct Generated {
    state: u64,
    left: u64,
}

impl Generated {
    pub fn new(seed: u64, len: u64) -> Generated {
        Generated {
            state: seed,
            left: len,
        }
    }

    /// Every byte at once: for tests of small files.
    pub fn all(seed: u64, len: u64) -> Vec<u8> {
        Generated::new(seed, len).flat_map(|c| c.to_vec()).collect()
    }
}

impl Iterator for Generated {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        if self.left == 0 {
            return None;
        }
        let n = usize::try_from(self.left).map_or(CHUNK, |left| left.min(CHUNK));
        let mut buf = BytesMut::with_capacity(n.next_multiple_of(8));
        while buf.len() < n {
            buf.extend_from_slice(&splitmix64(&mut self.state).to_le_bytes());
        }
        buf.truncate(n);
        self.left -= n as u64;
        Some(buf.freeze())
    }
}

/// One step of SplitMix64: fast, and every seed gives a different stream.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A fresh direct path for the file: `/sandbox/cdn/gen-<seed>-<len>-<random>`.
pub fn direct_path(seed: u64, len: u64) -> String {
    let mut tag = [0u8; 8];
    rand::thread_rng().fill_bytes(&mut tag);
    format!("{PREFIX}{seed:016x}-{len}-{}", hex::encode(tag))
}

/// The seed and length a generated file's direct path names; `None` for
/// any other path.
pub fn parse(direct_path: &str) -> Option<(u64, u64)> {
    let rest = direct_path.strip_prefix(PREFIX)?;
    let mut parts = rest.split('-');
    let seed = u64::from_str_radix(parts.next()?, 16).ok()?;
    let len = parts.next()?.parse().ok()?;
    let tag = parts.next()?;
    let well_formed = tag.len() == 16 && tag.bytes().all(|b| b.is_ascii_hexdigit());
    (well_formed && parts.next().is_none() && len <= MAX_LEN).then_some((seed, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_bytes_in_any_chunking() {
        let a = Generated::all(7, 200_003);
        assert_eq!(a.len(), 200_003);
        assert_eq!(a, Generated::all(7, 200_003));
        assert_ne!(a, Generated::all(8, 200_003));
        // A shorter file is a prefix of a longer one with the same seed.
        assert_eq!(Generated::all(7, 1000), a[..1000]);
        let chunks: Vec<usize> = Generated::new(7, 200_003).map(|c| c.len()).collect();
        assert_eq!(chunks, vec![CHUNK, CHUNK, CHUNK, 200_003 - 3 * CHUNK]);
        assert_eq!(Generated::new(7, 0).count(), 0);
    }

    #[test]
    fn paths_name_seed_and_length_and_nothing_else_parses() {
        let path = direct_path(0xfeed, 12345);
        assert_eq!(parse(&path), Some((0xfeed, 12345)));
        assert_ne!(
            path,
            direct_path(0xfeed, 12345),
            "each upload gets its own path"
        );
        assert_eq!(parse("/sandbox/cdn/0123abcd"), None);
        assert_eq!(parse("/sandbox/cdn/gen-zz-1-0011223344556677"), None);
        assert_eq!(parse("/sandbox/cdn/gen-1-1-00"), None);
        let too_long = format!("{PREFIX}{:016x}-{}-0011223344556677", 1, MAX_LEN + 1);
        assert_eq!(parse(&too_long), None);
    }
}
