//! What the CDN holds: finished files by direct path, uploads by their
//! token (finished, or cut off part way and waiting to be resumed), and the
//! media auths `media_conn` handed out.
use std::collections::{HashMap, HashSet};

use base64::Engine as _;
use base64::prelude::BASE64_URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// An upload, by the token its client named it with.
enum Upload {
    /// The bytes that arrived before the connection broke.
    Partial(Vec<u8>),
    /// Stored at this direct path.
    Done(String),
}

/// Where an upload stands, as `?resume=1` answers it.
#[derive(Debug, PartialEq, Eq)]
pub enum Progress {
    Unknown,
    /// This many bytes arrived; the rest may follow from there.
    Partial(usize),
    Done(String),
}

/// Why an upload was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The body's SHA-256 is not the token it was uploaded under.
    HashMismatch,
    /// It resumes from another offset than the bytes held.
    WrongOffset { held: usize },
}

#[derive(Default)]
pub struct Store {
    blobs: HashMap<String, Vec<u8>>,
    uploads: HashMap<String, Upload>,
    auths: HashSet<String>,
}

/// An upload's token: the unpadded URL-safe base64 of its body's SHA-256
/// (the encrypted file's `fileEncSha256`).
pub fn token_of(body: &[u8]) -> String {
    BASE64_URL_SAFE_NO_PAD.encode(Sha256::digest(body))
}

impl Store {
    pub fn issue_auth(&mut self) -> String {
        let auth = format!("wire-auth-{}", hex::encode(rand10::random::<[u8; 12]>()));
        self.auths.insert(auth.clone());
        auth
    }

    pub fn knows_auth(&self, auth: &str) -> bool {
        self.auths.contains(auth)
    }

    /// Every auth handed out so far stops working.
    pub fn expire_auths(&mut self) {
        self.auths.clear();
    }

    pub fn blob(&self, path: &str) -> Option<&Vec<u8>> {
        self.blobs.get(path)
    }

    pub fn put(&mut self, path: String, data: Vec<u8>) {
        self.blobs.insert(path, data);
    }

    pub fn remove(&mut self, path: &str) {
        self.blobs.remove(path);
    }

    pub fn progress(&self, token: &str) -> Progress {
        match self.uploads.get(token) {
            None => Progress::Unknown,
            Some(Upload::Partial(held)) => Progress::Partial(held.len()),
            Some(Upload::Done(path)) => Progress::Done(path.clone()),
        }
    }

    /// Checks that an upload of `token` may start at `offset`.
    pub fn may_start(&self, token: &str, offset: usize) -> Result<(), Refusal> {
        let held = match self.uploads.get(token) {
            Some(Upload::Partial(held)) => held.len(),
            _ => 0,
        };
        if offset == held || offset == 0 {
            Ok(())
        } else {
            Err(Refusal::WrongOffset { held })
        }
    }

    /// The connection broke after `body` arrived, at `offset`: kept for a resume.
    pub fn cut(&mut self, token: &str, offset: usize, body: Vec<u8>) {
        let mut held = self.held(token, offset);
        held.extend_from_slice(&body);
        self.uploads
            .insert(token.to_string(), Upload::Partial(held));
    }

    /// The upload of `token` finished with `body` from `offset`: stored at
    /// `path` when the whole file hashes to its token. A file that does not
    /// is dropped, what was held of it too.
    pub fn finish(
        &mut self,
        token: &str,
        offset: usize,
        body: Vec<u8>,
        path: String,
    ) -> Result<(), Refusal> {
        let mut file = self.held(token, offset);
        file.extend_from_slice(&body);
        if token_of(&file) != token {
            self.uploads.remove(token);
            return Err(Refusal::HashMismatch);
        }
        self.blobs.insert(path.clone(), file);
        self.uploads.insert(token.to_string(), Upload::Done(path));
        Ok(())
    }

    /// The first `offset` bytes held of `token` (none from the start).
    fn held(&mut self, token: &str, offset: usize) -> Vec<u8> {
        match self.uploads.remove(token) {
            Some(Upload::Partial(mut held)) if offset > 0 => {
                held.truncate(offset);
                held
            }
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_upload_resumes_and_a_wrong_body_is_dropped() {
        let file: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
        let token = token_of(&file);
        let mut store = Store::default();
        assert_eq!(store.progress(&token), Progress::Unknown);
        store.cut(&token, 0, file[..400].to_vec());
        assert_eq!(store.progress(&token), Progress::Partial(400));
        assert_eq!(
            store.may_start(&token, 300),
            Err(Refusal::WrongOffset { held: 400 })
        );
        assert_eq!(store.may_start(&token, 400), Ok(()));
        store
            .finish(&token, 400, file[400..].to_vec(), "/v/a".into())
            .unwrap();
        assert_eq!(store.progress(&token), Progress::Done("/v/a".into()));
        assert_eq!(store.blob("/v/a"), Some(&file));

        let other = token_of(b"something else");
        assert_eq!(
            store.finish(&other, 0, file.clone(), "/v/b".into()),
            Err(Refusal::HashMismatch)
        );
        assert_eq!(store.blob("/v/b"), None);
        assert_eq!(store.progress(&other), Progress::Unknown);
    }
}
