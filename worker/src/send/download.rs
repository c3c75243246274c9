//! Fetching a customer's `downloadUrl` through the egress guard: one deadline
//! for the whole download, a size cap enforced on the running byte count (and
//! on a declared Content-Length before any byte is read), files within the
//! attachment limit written to an unnamed temporary file as they arrive, and
//! files above it counted but not kept (they go out as a link).
use std::time::Duration;

use futures::StreamExt;
use parley_contract::error::ApiError;
use parley_contract::spool::{FileBody, Spool};
use parley_shared::egress::{Egress, EgressError, refusal};

use super::transfers::Transfers;

/// One mebibyte; the spec's "MB".
pub const MB: u64 = 1024 * 1024;

/// How much and how long the gateway fetches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The whole download, from connecting to the last byte.
    pub timeout: Duration,
    /// Larger files fail.
    pub max_bytes: u64,
    /// Larger files are not attached (they are sent as a link).
    pub attach_max: u64,
}

impl Limits {
    /// The spec's limits: 60 s, 100 MB, attachments up to 60 MB.
    pub const SPEC: Limits = Limits {
        timeout: Duration::from_secs(60),
        max_bytes: 100 * MB,
        attach_max: 60 * MB,
    };
}

/// What a fetch brought.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// The file, with the response's Content-Type.
    File {
        data: FileBody,
        content_type: Option<String>,
    },
    /// A file over the attachment limit (not kept).
    TooLargeToAttach { size: u64 },
}

/// Why a fetch failed; each message names `downloadUrl`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("downloadUrl was refused by the egress guard: {0}")]
    Refused(EgressError),
    #[error("downloadUrl answered HTTP {0}")]
    Status(u16),
    #[error("downloadUrl did not deliver the file within {0} s")]
    Timeout(u64),
    #[error("downloadUrl is larger than {0} MB")]
    TooLarge(u64),
    #[error("downloadUrl could not be fetched: {0}")]
    Failed(String),
}

/// Downloads files for sends, and holds the worker's media-send slots.
/// Cheap to clone (one connection pool, one set of slots).
#[derive(Debug, Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    egress: Egress,
    limits: Limits,
    transfers: Transfers,
}

/// Media sends at once per worker unless configured.
pub const DEFAULT_TRANSFERS: usize = 8;

/// Redirects followed (each one checked by the egress guard).
const REDIRECTS: usize = 5;

impl Fetcher {
    /// The destination policy it fetches under.
    pub fn egress(&self) -> &Egress {
        &self.egress
    }

    pub fn new(egress: Egress, limits: Limits) -> Result<Fetcher, EgressError> {
        Ok(Fetcher {
            client: egress.client(limits.timeout, REDIRECTS)?,
            egress,
            limits,
            transfers: Transfers::new(DEFAULT_TRANSFERS),
        })
    }

    /// The same, with `slots` media sends at once (`PARLEY_MEDIA_SEND_TRANSFERS`).
    pub fn with_transfers(mut self, slots: usize) -> Fetcher {
        self.transfers = Transfers::new(slots);
        self
    }

    /// A media-send slot of this worker (see [`Transfers`]).
    pub async fn slot(&self) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
        self.transfers.slot().await
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Fetches `url` within the limits.
    pub async fn fetch(&self, url: &str) -> Result<Fetched, FetchError> {
        let parsed = url::Url::parse(url)
            .map_err(|e| FetchError::Refused(EgressError::Invalid(e.to_string())))?;
        self.egress
            .check_url(&parsed)
            .map_err(FetchError::Refused)?;
        let deadline = self.limits.timeout;
        tokio::time::timeout(deadline, self.download(parsed))
            .await
            .unwrap_or(Err(FetchError::Timeout(deadline.as_secs())))
    }

    async fn download(&self, url: url::Url) -> Result<Fetched, FetchError> {
        let limits = self.limits;
        let response = self
            .client
            .get(url)
            .send()
            .await
            .map_err(|e| self.failure(&e))?;
        let status = response.status().as_u16();
        if status != 200 {
            return Err(FetchError::Status(status));
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let declared = response.content_length();
        if declared.is_some_and(|n| n > limits.max_bytes) {
            return Err(self.too_large());
        }
        if let Some(size) = declared.filter(|n| *n > limits.attach_max) {
            return Ok(Fetched::TooLargeToAttach { size });
        }
        let mut spool = Spool::new(limits.attach_max).await.map_err(spool_failed)?;
        let mut body = response.bytes_stream();
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| self.failure(&e))?;
            if spool.seen() + chunk.len() as u64 > limits.max_bytes {
                return Err(self.too_large());
            }
            spool.write(&chunk).await.map_err(spool_failed)?;
        }
        let size = spool.seen();
        match spool.finish().await.map_err(spool_failed)? {
            Some(data) => Ok(Fetched::File { data, content_type }),
            None => Ok(Fetched::TooLargeToAttach { size }),
        }
    }

    fn too_large(&self) -> FetchError {
        FetchError::TooLarge(self.limits.max_bytes / MB)
    }

    fn failure(&self, e: &reqwest::Error) -> FetchError {
        if let Some(refused) = refusal(e) {
            return FetchError::Refused(refused);
        }
        if e.is_timeout() {
            return FetchError::Timeout(self.limits.timeout.as_secs());
        }
        FetchError::Failed(chain(e))
    }
}

/// The temporary file a download is written to failed.
fn spool_failed(e: std::io::Error) -> FetchError {
    FetchError::Failed(format!("keeping the file on disk: {e}"))
}

/// An error and its sources, `a: b: c`.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests;
