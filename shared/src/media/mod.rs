//! The media store port: bytes under unguessable keys, each with a permanent public link.
pub mod fs;
pub mod s3;
pub mod safety;

use async_trait::async_trait;
use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use parley_contract::spool::ByteStream;

/// Largest multipart media upload (the spec's ingress maximum).
pub const UPLOAD_MAX: u64 = 128 * 1024 * 1024;

#[derive(Debug, Clone, thiserror::Error)]
pub enum MediaError {
    #[error("invalid media key")]
    InvalidKey,
    #[error("media store unavailable: {0}")]
    Unavailable(String),
}

/// An object being read back.
pub struct ObjectStream {
    pub content_type: String,
    /// The object's length, when the store knows it before reading.
    pub size: Option<u64>,
    pub chunks: ByteStream,
}

/// An object in the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredObject {
    pub key: String,
    pub url: String,
    pub size: u64,
    pub content_type: String,
}

#[async_trait]
pub trait MediaStore: Send + Sync + 'static {
    /// Stores `data` under `key` (overwriting) and returns its permanent public link.
    async fn put(
        &self,
        key: &str,
        content_type: &str,
        data: Bytes,
    ) -> Result<StoredObject, MediaError>;

    /// Stores the chunks of `data` under `key` (overwriting). The adapters write
    /// chunks as they arrive, never holding the whole object in memory; the
    /// default, for stores that cannot, collects them and calls [`MediaStore::put`].
    /// An error of the stream aborts the write: then nothing changes under `key`.
    async fn put_stream(
        &self,
        key: &str,
        content_type: &str,
        mut data: ByteStream,
    ) -> Result<StoredObject, MediaError> {
        let mut all = BytesMut::new();
        while let Some(chunk) = data.next().await {
            all.extend_from_slice(&chunk.map_err(stream_error)?);
        }
        self.put(key, content_type, all.freeze()).await
    }

    /// Reads an object back: `(content_type, bytes)`, `None` when absent.
    async fn get(&self, key: &str) -> Result<Option<(String, Bytes)>, MediaError>;

    /// Reads an object back as it arrives, `None` when absent; never holds
    /// the whole object in memory.
    async fn get_stream(&self, key: &str) -> Result<Option<ObjectStream>, MediaError>;

    /// Removes an object; absent objects are not an error.
    async fn delete(&self, key: &str) -> Result<(), MediaError>;

    /// The permanent public link of `key` (whether or not it exists).
    fn public_url(&self, key: &str) -> String;

    /// Whether the store is reachable and writable now.
    async fn healthy(&self) -> bool;

    /// `"s3"` or `"local"`.
    fn kind(&self) -> &'static str;
}

/// The stream handed to `put_stream` failed.
pub fn stream_error(e: std::io::Error) -> MediaError {
    MediaError::Unavailable(format!("reading the object to store: {e}"))
}

/// A fresh unguessable key: `<prefix>/<32 hex random>[.ext]`.
pub fn new_key(prefix: &str, ext: Option<&str>) -> String {
    use rand::RngCore;
    let mut raw = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut raw);
    let id = hex::encode(raw);
    match ext.filter(|e| !e.is_empty() && e.chars().all(|c| c.is_ascii_alphanumeric())) {
        Some(ext) => format!("{prefix}/{id}.{ext}"),
        None => format!("{prefix}/{id}"),
    }
}

/// Keys are relative paths of safe segments: letters, digits, `-`, `_`, `.`
/// (no leading dot), joined by `/`. Anything else is refused before it reaches a store.
pub fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 512
        && key.split('/').all(|seg| {
            !seg.is_empty()
                && !seg.starts_with('.')
                && seg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        })
}
