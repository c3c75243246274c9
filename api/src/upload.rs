//! Multipart uploads of `/send-media-message`: the form read as a stream, the
//! `file` part streamed into the media store under a temporary key as its chunks
//! arrive (never held whole in memory), the small text parts kept, the request
//! cut off past the ingress cap (413).
use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;

use actix_multipart::{Field, Multipart};
use actix_web::error::PayloadError;
use actix_web::{HttpRequest, web};
use bytes::Bytes;
use futures::StreamExt;
use parley_contract::error::ApiError;
use parley_contract::spool::ByteStream;
use parley_shared::media::{MediaStore, new_key};
use tokio::sync::mpsc;

use crate::UPLOAD_LIMIT;

/// Longest text part.
const FIELD_MAX: usize = 64 * 1024;
/// Chunks in flight between the request and the store.
const CHUNKS_IN_FLIGHT: usize = 4;
/// Where uploads wait for their send.
pub const TEMP_PREFIX: &str = "tmp";

/// A file stored for a send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upload {
    pub key: String,
    /// The part's Content-Type (`application/octet-stream` without one).
    pub content_type: String,
    pub file_name: Option<String>,
}

/// The parts of the form.
#[derive(Debug, Default)]
pub struct Form {
    pub file: Option<Upload>,
    /// Text parts by name (a repeated name keeps the last).
    pub fields: HashMap<String, String>,
}

/// Reads the form of `req`. On failure nothing stays in the store.
pub async fn read_form(
    req: &HttpRequest,
    payload: web::Payload,
    store: &dyn MediaStore,
) -> Result<Form, ApiError> {
    let declared = req
        .headers()
        .get(actix_web::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > UPLOAD_LIMIT as u64) {
        return Err(too_large());
    }
    let over = Rc::new(Cell::new(false));
    let flag = Rc::clone(&over);
    let mut seen: u64 = 0;
    let capped = payload.map(move |chunk| {
        let chunk = chunk?;
        seen += chunk.len() as u64;
        if seen > UPLOAD_LIMIT as u64 {
            flag.set(true);
            return Err(PayloadError::Overflow);
        }
        Ok(chunk)
    });
    let mut multipart = Multipart::new(req.headers(), capped);
    let mut form = Form::default();
    let read = async {
        while let Some(field) = multipart.next().await {
            let field = field.map_err(|e| malformed(&over, &e))?;
            let Some(name) = field.name().map(str::to_string) else {
                continue;
            };
            if name == "file" {
                if form.file.is_some() {
                    return Err(ApiError::bad_request("only one file part is allowed"));
                }
                form.file = Some(store_file(field, store, &over).await?);
            } else {
                let value = read_text(&name, field, &over).await?;
                form.fields.insert(name, value);
            }
        }
        if over.get() {
            return Err(too_large());
        }
        Ok(())
    };
    match read.await {
        Ok(()) => Ok(form),
        Err(e) => {
            if let Some(file) = form.file {
                discard(store, &file.key).await;
            }
            Err(e)
        }
    }
}

/// Removes an upload that will not be sent.
pub async fn discard(store: &dyn MediaStore, key: &str) {
    if let Err(e) = store.delete(key).await {
        tracing::warn!(key, error = %e, "an unused upload was not deleted");
    }
}

/// Streams the `file` part into the store under a fresh temporary key.
async fn store_file(
    mut field: Field,
    store: &dyn MediaStore,
    over: &Cell<bool>,
) -> Result<Upload, ApiError> {
    let content_type = field
        .content_type()
        .map(|m| m.essence_str().to_ascii_lowercase())
        .unwrap_or_else(|| "application/octet-stream".to_string());
    let file_name = field
        .content_disposition()
        .and_then(|cd| cd.get_filename())
        // Some clients send a whole path: the name is its last segment.
        .and_then(|n| n.rsplit(['/', '\\']).next())
        .map(str::to_string)
        .filter(|n| !n.is_empty());
    let key = new_key(TEMP_PREFIX, None);
    // The part is read here (it is not `Send`); the store reads a channel.
    let (tx, rx) = mpsc::channel::<std::io::Result<Bytes>>(CHUNKS_IN_FLIGHT);
    let chunks: ByteStream = Box::pin(futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    }));
    let pump = async move {
        while let Some(chunk) = field.next().await {
            match chunk {
                Ok(bytes) => {
                    if tx.send(Ok(bytes)).await.is_err() {
                        // The store gave up; its error says why.
                        return Ok(());
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(std::io::Error::other(e.to_string()))).await;
                    return Err(e);
                }
            }
        }
        Ok(())
    };
    let (stored, pumped) = tokio::join!(store.put_stream(&key, &content_type, chunks), pump);
    let outcome = match (stored, pumped) {
        (_, Err(e)) => Err(malformed(over, &e)),
        (Err(e), Ok(())) => {
            tracing::error!(error = %e, "media store: storing an upload");
            Err(ApiError::unavailable("media store unavailable"))
        }
        (Ok(stored), Ok(())) if stored.size == 0 => Err(ApiError::bad_request("file is empty")),
        (Ok(_), Ok(())) => Ok(Upload {
            key: key.clone(),
            content_type,
            file_name,
        }),
    };
    if outcome.is_err() {
        discard(store, &key).await;
    }
    outcome
}

/// A text part, at most [`FIELD_MAX`] bytes of UTF-8.
async fn read_text(name: &str, mut field: Field, over: &Cell<bool>) -> Result<String, ApiError> {
    let mut value = Vec::new();
    while let Some(chunk) = field.next().await {
        let chunk = chunk.map_err(|e| malformed(over, &e))?;
        if value.len() + chunk.len() > FIELD_MAX {
            return Err(ApiError::bad_request(format!(
                "{name} is longer than {FIELD_MAX} bytes"
            )));
        }
        value.extend_from_slice(&chunk);
    }
    String::from_utf8(value).map_err(|_| ApiError::bad_request(format!("{name} is not UTF-8 text")))
}

fn too_large() -> ApiError {
    ApiError::payload_too_large(format!(
        "request body is larger than {} MiB",
        UPLOAD_LIMIT / (1024 * 1024)
    ))
}

/// A broken form, or one cut off at the cap.
fn malformed(over: &Cell<bool>, e: &actix_multipart::MultipartError) -> ApiError {
    if over.get() {
        too_large()
    } else {
        ApiError::bad_request(format!("malformed multipart body: {e}"))
    }
}
