//! Mirroring an inbound file: streamed from the network into the media store
//! as it downloads, so memory per transfer stays a few chunks (and, on S3, two
//! multipart parts) whatever the file's size. A file larger than the cap is
//! not downloaded (or stops being, when it turns out larger than it declared),
//! a limited number of transfers run at once, and a file that does not match
//! its declared hash is removed again. A file that is not stored for one of
//! these reasons (or because the download failed) is no error: the message is
//! stored without its file, with the reason.
use std::future::Future;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use parley_contract::spool::ByteStream;
use parley_shared::media::{MediaError, MediaStore, StoredObject};
use parley_shared::metrics::metrics;
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

use crate::events::NetworkFile;
use crate::network::NetworkError;

/// How large and how many files are mirrored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MirrorLimits {
    /// Larger files are not stored (`PARLEY_MEDIA_MIRROR_MAX_BYTES`).
    pub max_bytes: u64,
    /// Transfers at once per process (`PARLEY_MEDIA_MIRROR_TRANSFERS`); the
    /// others wait for a turn.
    pub transfers: usize,
}

impl Default for MirrorLimits {
    /// The network's largest document (2 GiB), four transfers at once.
    fn default() -> Self {
        MirrorLimits {
            max_bytes: 2 << 30,
            transfers: 4,
        }
    }
}

/// The outcome of a mirror.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mirrored {
    /// Stored, with the hex SHA-256 of the bytes.
    Stored {
        object: StoredObject,
        sha256: String,
    },
    /// Not stored, and why (said to the customer in history).
    NotStored(String),
}

/// Where a mirrored file goes.
struct Target<'a> {
    store: &'a dyn MediaStore,
    key: &'a str,
    content_type: &'a str,
}

pub struct Mirror {
    limits: MirrorLimits,
    turns: Arc<Semaphore>,
}

impl Mirror {
    pub fn new(limits: MirrorLimits) -> Mirror {
        Mirror {
            limits,
            turns: Arc::new(Semaphore::new(limits.transfers.max(1))),
        }
    }

    /// Copies `file` to `key`; `declared` is the hex SHA-256 the message
    /// declares, checked against the bytes. An error is the store's own.
    pub async fn copy(
        &self,
        store: &dyn MediaStore,
        key: &str,
        content_type: &str,
        file: &NetworkFile,
        declared: Option<&str>,
    ) -> Result<Mirrored, MediaError> {
        let max = self.limits.max_bytes;
        let open = || {
            file.connection
                .download_media(file.kind, &file.download, max)
        };
        let target = Target {
            store,
            key,
            content_type,
        };
        self.copy_from(target, file.download.file_length, declared, open)
            .await
    }

    /// [`Mirror::copy`] of whatever stream `open` gives.
    async fn copy_from<F, Fut>(
        &self,
        target: Target<'_>,
        declared_len: u64,
        declared: Option<&str>,
        open: F,
    ) -> Result<Mirrored, MediaError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<ByteStream, NetworkError>>,
    {
        let Target {
            store,
            key,
            content_type,
        } = target;
        let max = self.limits.max_bytes;
        if declared_len > max {
            return Ok(not_stored("too_large", too_large(max)));
        }
        let _turn = self.turns.acquire().await.ok();
        let _running = Running::start();
        let stream = match open().await {
            Ok(stream) => stream,
            Err(e) => return Ok(not_stored("download", format!("the download failed: {e}"))),
        };
        let (watched, seen) = watch(stream, max);
        let object = match store.put_stream(key, content_type, watched).await {
            Ok(object) => object,
            Err(e) => {
                let seen = seen.lock().unwrap_or_else(|p| p.into_inner());
                return match &seen.failure {
                    Some((reason, why)) => Ok(not_stored(reason, why.clone())),
                    None => Err(e),
                };
            }
        };
        let (sha256, size) = {
            let mut seen = seen.lock().unwrap_or_else(|p| p.into_inner());
            let hash = std::mem::take(&mut seen.hash);
            (hex::encode(hash.finalize()), seen.bytes)
        };
        if declared.is_some_and(|d| d != sha256) {
            if let Err(e) = store.delete(key).await {
                tracing::warn!(key, error = %e, "a mismatched file stays in the media store");
            }
            return Ok(not_stored(
                "mismatch",
                "the file does not match its declared hash".into(),
            ));
        }
        metrics().media_stored_bytes.inc_by(size);
        Ok(Mirrored::Stored {
            object: StoredObject { size, ..object },
            sha256,
        })
    }
}

fn too_large(max: u64) -> String {
    format!("the file is larger than the mirroring limit of {max} bytes")
}

fn not_stored(reason: &str, why: String) -> Mirrored {
    metrics()
        .media_not_stored
        .with_label_values(&[reason])
        .inc();
    Mirrored::NotStored(why)
}

/// What passed through a watched stream.
#[derive(Default)]
struct Seen {
    bytes: u64,
    hash: Sha256,
    /// Why the stream failed: `(metric reason, text)`.
    failure: Option<(&'static str, String)>,
}

/// The stream counted and hashed on its way to the store; past `max` bytes,
/// or on a download error, it ends with an error (the store aborts the
/// write) and says why in `Seen`.
fn watch(stream: ByteStream, max: u64) -> (ByteStream, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let state = Arc::clone(&seen);
    let watched = stream.map(move |item| {
        let mut seen = state.lock().unwrap_or_else(|p| p.into_inner());
        match item {
            Ok(chunk) => {
                seen.bytes += chunk.len() as u64;
                if seen.bytes > max {
                    seen.failure = Some(("too_large", too_large(max)));
                    return Err(std::io::Error::other("over the mirroring cap"));
                }
                seen.hash.update(&chunk);
                Ok(chunk)
            }
            Err(e) => {
                seen.failure = Some(("download", format!("the download failed: {e}")));
                Err(e)
            }
        }
    });
    (watched.boxed(), seen)
}

/// A transfer counted in `parley_media_mirrors_active` while it lives.
struct Running;

impl Running {
    fn start() -> Running {
        metrics().media_mirrors_active.inc();
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        metrics().media_mirrors_active.dec();
    }
}

#[cfg(test)]
#[path = "mirror_tests.rs"]
mod tests;
