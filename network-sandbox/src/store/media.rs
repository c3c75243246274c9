//! The sandbox network's CDN: an inbound file is stored encrypted under a fresh
//! media key and direct path, and the message carries only those and the
//! hashes, as the real network's messages do. Downloading checks the encrypted
//! hash, decrypts with the key and checks the plain hash. Generated files
//! ([`super::generated`]) are made again on each download instead,
//! and carry no hashes.
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use futures::StreamExt;
use rand::RngCore;
use sha2::{Digest, Sha256};

use super::entities::media;
use super::generated::{self as generated, Generated};
use parley_shared::db::DbError;

use super::Store;
use parley_contract::spool::ByteStream;
use parley_model::media::MediaDownload;

/// Bytes per chunk of a stored file's download.
const STORED_CHUNK: usize = 64 * 1024;

/// Why a sandbox download failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CdnError {
    #[error("no file at this path")]
    NotFound,
    #[error("the file does not match its hashes or key")]
    Mismatch,
    #[error("the file is larger than {0} bytes")]
    TooLarge(u64),
    #[error(transparent)]
    Db(#[from] DbError),
}

impl Store {
    /// Uploads `plain` for `client_id`; returns what a message carries to fetch it.
    pub async fn put_sandbox_media(
        &self,
        client_id: &str,
        plain: &[u8],
    ) -> Result<MediaDownload, DbError> {
        let mut key = [0u8; 32];
        let mut path = [0u8; 16];
        rand::thread_rng().fill_bytes(&mut key);
        rand::thread_rng().fill_bytes(&mut path);
        let encrypted = apply_keystream(&key, plain);
        let download = MediaDownload {
            direct_path: format!("/sandbox/cdn/{}", hex::encode(path)),
            media_key: STANDARD.encode(key),
            file_sha256: STANDARD.encode(Sha256::digest(plain)),
            file_enc_sha256: STANDARD.encode(Sha256::digest(&encrypted)),
            file_length: plain.len() as u64,
        };
        media::put(&self.db, client_id, &download.direct_path, encrypted).await?;
        Ok(download)
    }

    /// Fetches and decrypts the file `download` points at.
    pub async fn sandbox_media(&self, download: &MediaDownload) -> Result<Vec<u8>, CdnError> {
        let encrypted = media::get(&self.db, &download.direct_path)
            .await?
            .ok_or(CdnError::NotFound)?;
        let key = STANDARD
            .decode(&download.media_key)
            .map_err(|_| CdnError::Mismatch)?;
        if STANDARD.encode(Sha256::digest(&encrypted)) != download.file_enc_sha256 {
            return Err(CdnError::Mismatch);
        }
        let plain = apply_keystream(&key, &encrypted);
        if STANDARD.encode(Sha256::digest(&plain)) != download.file_sha256 {
            return Err(CdnError::Mismatch);
        }
        Ok(plain)
    }

    /// The file `download` points at as a stream of chunks; a file declared
    /// longer than `max_bytes` is refused before any byte is read.
    pub async fn sandbox_media_stream(
        &self,
        download: &MediaDownload,
        max_bytes: u64,
    ) -> Result<ByteStream, CdnError> {
        if download.file_length > max_bytes {
            return Err(CdnError::TooLarge(max_bytes));
        }
        if let Some((seed, len)) = generated::parse(&download.direct_path) {
            if len != download.file_length {
                return Err(CdnError::Mismatch);
            }
            return Ok(generated_stream(seed, len));
        }
        let plain = Bytes::from(self.sandbox_media(download).await?);
        if plain.len() as u64 > max_bytes {
            return Err(CdnError::TooLarge(max_bytes));
        }
        let chunks: Vec<std::io::Result<Bytes>> = (0..plain.len())
            .step_by(STORED_CHUNK)
            .map(|at| Ok(plain.slice(at..plain.len().min(at + STORED_CHUNK))))
            .collect();
        Ok(futures::stream::iter(chunks).boxed())
    }

    /// Deletes a session's sandbox files.
    pub async fn forget_sandbox_media(&self, client_id: &str) -> Result<(), DbError> {
        media::forget(&self.db, client_id).await
    }
}

/// What a generated file's message carries: its path and a key. It carries
/// no hashes: they would cost a pass over the whole file at each injection,
/// and the gateway hashes what it stores anyway.
pub fn generated_media(seed: u64, len: u64) -> MediaDownload {
    let mut key = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut key);
    MediaDownload {
        direct_path: generated::direct_path(seed, len),
        media_key: STANDARD.encode(key),
        file_sha256: String::new(),
        file_enc_sha256: String::new(),
        file_length: len,
    }
}

/// A generated file's chunks.
fn generated_stream(seed: u64, len: u64) -> ByteStream {
    futures::stream::iter(Generated::new(seed, len).map(Ok)).boxed()
}

/// XOR with a SHA-256 counter-mode keystream: symmetric, and useless without the key.
fn apply_keystream(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    for (i, chunk) in data.chunks(32).enumerate() {
        let block = Sha256::new()
            .chain_update(key)
            .chain_update((i as u64).to_be_bytes())
            .finalize();
        out.extend(chunk.iter().zip(block.iter()).map(|(b, k)| b ^ k));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn collect(mut stream: ByteStream) -> std::io::Result<Vec<u8>> {
        let mut all = Vec::new();
        while let Some(chunk) = stream.next().await {
            all.extend_from_slice(&chunk?);
        }
        Ok(all)
    }

    #[tokio::test]
    async fn a_generated_file_streams_its_bytes() {
        let media = generated_media(5, 150_000);
        assert_eq!(media.file_length, 150_000);
        let (seed, len) = generated::parse(&media.direct_path).expect("a generated path");
        let bytes = collect(generated_stream(seed, len)).await.unwrap();
        assert_eq!(bytes, Generated::all(5, 150_000));
    }

    #[test]
    fn the_keystream_round_trips_and_hides_the_bytes() {
        let plain: Vec<u8> = (0..100u8).collect();
        let encrypted = apply_keystream(b"key", &plain);
        assert_ne!(encrypted, plain);
        assert_eq!(apply_keystream(b"key", &encrypted), plain);
        assert_ne!(apply_keystream(b"other", &encrypted), plain);
    }
}
