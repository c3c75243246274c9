//! The hosted inbox writer: stores every message of a session whose webhook is
//! the hosted receiver, copies media once to the media store under an
//! unguessable key, and answers poll options and quoted previews from history.
//!
//! Writes go through one batching task ([`writer`]); callers await their own outcome.
pub mod convert;
pub mod mirror;
mod sink;
pub mod writer;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::Utc;
use parley_contract::event::{Envelope, Quoted};
use parley_model::ids::ClientId;
use parley_shared::db::history::{NewMediaFile, Write, Written, hosted_inbox_active};
use parley_shared::db::{Db, DbError};
use parley_shared::media::{MediaError, MediaStore, new_key, stream_error};
use parley_shared::metrics::metrics;

use self::convert::Kind;
use self::mirror::{Mirror, MirrorLimits, Mirrored};
use self::writer::Writer;

pub use crate::events::{FileData, MessageFile};

/// What [`History::record`] did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Recorded {
    /// A new row was stored (false for a duplicate delivery and for updates).
    pub new: bool,
    /// A reaction, edit or revoke changed its stored target.
    pub updated: bool,
    /// The permanent link of the stored file; empty without one.
    pub download_url: String,
    /// The media-library record (storage UUID) of the file, when one was made.
    pub media_file_id: Option<String>,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum HistoryError {
    /// The event cannot be stored (no ids, unknown type).
    #[error("not storable: {0}")]
    Invalid(String),
    #[error(transparent)]
    Db(#[from] DbError),
    #[error(transparent)]
    Media(#[from] MediaError),
}

/// Locks of files being stored, by `(clientId, sha256)`.
type StoringLocks = Mutex<HashMap<(String, String), Arc<tokio::sync::Mutex<()>>>>;

/// The hosted inbox of every session of this process.
pub struct History {
    db: Db,
    media: Arc<dyn MediaStore>,
    hosted_receiver_url: Option<String>,
    writer: Writer,
    /// Files being stored, by `(clientId, sha256)`: the same bytes arriving twice
    /// at once wait for the first copy instead of storing a second one.
    storing: StoringLocks,
    mirror: Mirror,
}

/// A message's file, stored or not.
enum FileOutcome {
    Stored(NewMediaFile),
    /// Not stored, and why: the message is stored without it.
    NotStored(String),
}

impl History {
    /// Starts the batching writer on the current Tokio runtime.
    pub fn new(
        db: Db,
        media: Arc<dyn MediaStore>,
        hosted_receiver_url: Option<String>,
    ) -> Arc<History> {
        History::with_limits(db, media, hosted_receiver_url, MirrorLimits::default())
    }

    /// [`History::new`] with the limits of inbound file copies.
    pub fn with_limits(
        db: Db,
        media: Arc<dyn MediaStore>,
        hosted_receiver_url: Option<String>,
        limits: MirrorLimits,
    ) -> Arc<History> {
        Arc::new(History {
            writer: Writer::spawn(db.clone()),
            db,
            media,
            hosted_receiver_url,
            storing: Mutex::new(HashMap::new()),
            mirror: Mirror::new(limits),
        })
    }

    /// Whether a session keeps a hosted inbox: it has an `orgId` and its webhook
    /// is the hosted receiver (`PARLEY_HOSTED_RECEIVER_URL`).
    pub fn enabled_for(&self, org_id: &str, webhook_url: &str) -> bool {
        hosted_inbox_active(org_id, webhook_url, self.hosted_receiver_url.as_deref())
    }

    /// Stores one event. Messages become rows (idempotent on
    /// `(clientId, chatRoomId, messageId)`); reactions, edits and revokes change
    /// their target; `media` is copied once to the media store (a file on the
    /// network streamed there as it downloads).
    #[tracing::instrument(skip_all, fields(client_id = %event.client_id, kind = %event.kind))]
    pub async fn record(
        &self,
        event: &Envelope,
        media: Option<MessageFile>,
    ) -> Result<Recorded, HistoryError> {
        let result = self.record_inner(event, media).await;
        let outcome = if result.is_ok() { "ok" } else { "failed" };
        metrics().history_writes.with_label_values(&[outcome]).inc();
        if let Err(e) = &result {
            tracing::warn!(error = %e, "hosted history write failed");
        }
        result
    }

    async fn record_inner(
        &self,
        e: &Envelope,
        media: Option<MessageFile>,
    ) -> Result<Recorded, HistoryError> {
        if e.client_id.is_empty() || e.chat_room_id.is_empty() || e.message_id.is_empty() {
            return Err(HistoryError::Invalid(
                "clientId, chatRoomId and messageId are required".into(),
            ));
        }
        let kind = e
            .stored_type
            .map(Kind::Message)
            .or_else(|| convert::kind(&e.kind))
            .ok_or_else(|| HistoryError::Invalid(format!("unknown event type {:?}", e.kind)))?;
        let message_type = match kind {
            Kind::Update => {
                let write = convert::update_write(e)
                    .ok_or_else(|| HistoryError::Invalid(format!("{} without a target", e.kind)))?;
                let out = self.writer.write(vec![write]).await?;
                return Ok(Recorded {
                    updated: out.first() == Some(&Written::Updated),
                    ..Recorded::default()
                });
            }
            Kind::Message(t) => t,
        };
        let Some(file) = media.filter(|f| !f.is_empty()) else {
            let writes = convert::message_writes(e, message_type, None);
            let url = written_url(&writes);
            let out = self.writer.write(writes).await?;
            return self.outcome(e, out.first().copied(), url).await;
        };
        // A message stored before keeps its file: nothing is copied again.
        if let Some(row) = self
            .db
            .history_message(&e.client_id, &e.chat_room_id, &e.message_id)
            .await?
        {
            return Ok(Recorded {
                download_url: row.download_url,
                media_file_id: row.media_file_id,
                ..Recorded::default()
            });
        }
        let sha = match &file.data {
            FileData::InHand(body) => match body.sha256().await {
                Ok(sha) => Some(hex::encode(sha)),
                Err(e) => return Err(HistoryError::Media(stream_error(e))),
            },
            FileData::Network(n) => n.declared_sha256(),
        };
        let lock = sha
            .as_ref()
            .map(|sha| (sha, self.lock_for(&e.client_id, sha)));
        let guard = match &lock {
            Some((_, lock)) => Some(lock.lock().await),
            None => None,
        };
        let result = match self.store_file(e, &file, sha.as_deref()).await {
            Ok(FileOutcome::Stored(record)) => {
                let id = record.id.to_string();
                let writes = convert::message_writes(e, message_type, Some(record));
                let url = written_url(&writes);
                match self.writer.write(writes).await {
                    Ok(out) => {
                        let mut rec = self.outcome(e, out.first().copied(), url).await?;
                        if rec.new {
                            rec.media_file_id = Some(id);
                        }
                        Ok(rec)
                    }
                    Err(err) => Err(err.into()),
                }
            }
            Ok(FileOutcome::NotStored(why)) => {
                tracing::warn!(message_id = %e.message_id, reason = %why, "media not stored in history");
                let mut writes = convert::message_writes(e, message_type, None);
                convert::not_stored(&mut writes, &why);
                let out = self.writer.write(writes).await?;
                self.outcome(e, out.first().copied(), String::new()).await
            }
            Err(err) => Err(err),
        };
        drop(guard);
        if let Some((sha, lock)) = lock {
            self.release(&e.client_id, sha, lock);
        }
        result
    }

    /// The answer for a message write: new (with the link just written), or the
    /// stored row's link when it was a duplicate.
    async fn outcome(
        &self,
        e: &Envelope,
        written: Option<Written>,
        written_url: String,
    ) -> Result<Recorded, HistoryError> {
        let new = written == Some(Written::Inserted);
        if new {
            // The row is what was just written: no need to read it back.
            return Ok(Recorded {
                new,
                download_url: written_url,
                ..Recorded::default()
            });
        }
        let row = self
            .db
            .history_message(&e.client_id, &e.chat_room_id, &e.message_id)
            .await?;
        Ok(Recorded {
            new,
            updated: false,
            download_url: row
                .as_ref()
                .map(|r| r.download_url.clone())
                .unwrap_or_default(),
            media_file_id: row.and_then(|r| r.media_file_id),
        })
    }

    /// Copies the file to the media store, unless the session stored the same
    /// bytes before (then that object is reused, and a file on the network is
    /// not downloaded at all), and describes the library record.
    async fn store_file(
        &self,
        e: &Envelope,
        file: &MessageFile,
        sha: Option<&str>,
    ) -> Result<FileOutcome, HistoryError> {
        let mime = if file.mime_type.trim().is_empty() {
            e.media
                .as_ref()
                .map(|m| m.info.mime_type.clone())
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| crate::send::mime::OCTET_STREAM.to_string())
        } else {
            file.mime_type.trim().to_string()
        };
        let found = match sha {
            Some(sha) => self.db.media_by_sha256(&e.client_id, sha).await?,
            None => None,
        };
        let (storage_key, url, size, sha) = match (found, &file.data) {
            (Some((key, url)), data) => {
                let size = match data {
                    FileData::InHand(body) => body.len(),
                    FileData::Network(n) => n.download.file_length,
                };
                (key, url, size, sha.unwrap_or_default().to_string())
            }
            (None, data) => {
                let key = new_key(
                    &format!("history/{}", e.client_id),
                    extension(&file.file_name, &mime),
                );
                match data {
                    FileData::InHand(body) => {
                        let stored = self.media.put_stream(&key, &mime, body.stream()).await?;
                        metrics().media_stored_bytes.inc_by(stored.size);
                        let sha = sha.unwrap_or_default().to_string();
                        (stored.key, stored.url, stored.size, sha)
                    }
                    FileData::Network(n) => {
                        match self.mirror.copy(&*self.media, &key, &mime, n, sha).await? {
                            Mirrored::Stored { object, sha256 } => {
                                (object.key, object.url, object.size, sha256)
                            }
                            Mirrored::NotStored(why) => return Ok(FileOutcome::NotStored(why)),
                        }
                    }
                }
            }
        };
        let m = e.media.as_ref();
        Ok(FileOutcome::Stored(NewMediaFile {
            id: uuid::Uuid::new_v4(),
            storage_key,
            url,
            mime_type: mime,
            media_type: m
                .map(|m| m.media_type.clone())
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| e.kind.clone()),
            file_name: if file.file_name.is_empty() {
                m.map(|m| m.info.file_name.clone()).unwrap_or_default()
            } else {
                file.file_name.clone()
            },
            file_size: size,
            caption: m.map(|m| m.info.caption.clone()).unwrap_or_default(),
            sha256: sha,
            created_at: Utc::now(),
        }))
    }

    fn lock_for(&self, client_id: &str, sha: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut map = self.storing.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(
            map.entry((client_id.to_string(), sha.to_string()))
                .or_default(),
        )
    }

    /// Forgets the lock once nobody else holds or waits for it.
    fn release(&self, client_id: &str, sha: &str, lock: Arc<tokio::sync::Mutex<()>>) {
        let mut map = self.storing.lock().unwrap_or_else(|p| p.into_inner());
        // Two references: the map's and ours.
        if Arc::strong_count(&lock) <= 2 {
            map.remove(&(client_id.to_string(), sha.to_string()));
        }
    }

    /// The options of a stored poll, for resolving votes from history.
    pub async fn poll_options(
        &self,
        client_id: &ClientId,
        poll_message_id: &str,
    ) -> Option<Vec<String>> {
        match self
            .db
            .poll_options(client_id.as_str(), poll_message_id)
            .await
        {
            Ok(options) => options,
            Err(e) => {
                tracing::warn!(error = %e, "poll options from history");
                None
            }
        }
    }

    /// The preview of a stored message, for a reply's `quotedMessageId`.
    pub async fn quoted(
        &self,
        client_id: &ClientId,
        chat_room_id: &str,
        message_id: &str,
    ) -> Option<Quoted> {
        let row = match self
            .db
            .history_message(client_id.as_str(), chat_room_id, message_id)
            .await
        {
            Ok(row) => row?,
            Err(e) => {
                tracing::warn!(error = %e, "quoted message from history");
                return None;
            }
        };
        Some(Quoted {
            message_id: row.message_id,
            participant: Some(row.sender).filter(|s| !s.is_empty()),
            body: row.body,
            kind: convert::event_type(&row.message_type).to_string(),
        })
    }
}

/// The `downloadUrl` of the message among `writes`.
fn written_url(writes: &[Write]) -> String {
    writes
        .iter()
        .find_map(|w| match w {
            Write::Message(m) => Some(m.download_url.clone()),
            Write::Update { .. } => None,
        })
        .unwrap_or_default()
}

/// The stored object's extension: the file name's when it is a known one, else
/// the media type's.
fn extension<'a>(file_name: &'a str, mime: &str) -> Option<&'a str> {
    if crate::send::mime::from_extension(file_name).is_some() {
        return file_name.rsplit_once('.').map(|(_, ext)| ext);
    }
    let ext = match crate::send::mime::essence(mime)?.as_str() {
        "image/jpeg" => "jpg",
        "image/png" => "png",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "video/mp4" => "mp4",
        "video/3gpp" => "3gp",
        "audio/ogg" => "ogg",
        "audio/mpeg" => "mp3",
        "audio/mp4" => "m4a",
        "application/pdf" => "pdf",
        _ => return None,
    };
    Some(ext)
}

#[cfg(test)]
mod tests;
