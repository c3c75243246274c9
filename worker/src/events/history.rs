//! What the event pipeline needs from the hosted inbox: whether a session's
//! events are written, the write itself (before the webhook, so the event can
//! carry the stored file's permanent link), and the lookups that fill events
//! from history (poll options for votes, quoted previews).
use std::sync::Arc;

use async_trait::async_trait;
use parley_contract::event::{Envelope, Quoted};
use parley_contract::spool::FileBody;
use parley_model::ids::ClientId;
use parley_model::media::MediaDownload;

use crate::network::Connection;
use parley_model::media::MediaKind;

/// A file's bytes in hand (the one just sent), spooled on disk.
#[derive(Clone)]
pub struct FileBytes {
    pub bytes: FileBody,
    pub mime_type: String,
    pub file_name: String,
}

impl std::fmt::Debug for FileBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileBytes")
            .field("len", &self.bytes.len())
            .field("mime_type", &self.mime_type)
            .finish_non_exhaustive()
    }
}

/// A message's file as the hosted inbox gets it.
#[derive(Debug)]
pub struct MessageFile {
    pub mime_type: String,
    pub file_name: String,
    pub data: FileData,
}

/// Where a message's bytes are.
pub enum FileData {
    /// In hand: a file just sent.
    InHand(FileBody),
    /// Still on the network: downloaded only when history has to copy it,
    /// and then streamed into the media store.
    Network(NetworkFile),
}

impl std::fmt::Debug for FileData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileData::InHand(bytes) => write!(f, "InHand({} bytes)", bytes.len()),
            FileData::Network(n) => write!(f, "Network({:?})", n.download),
        }
    }
}

/// An inbound file on the network, and the connection to fetch it through.
pub struct NetworkFile {
    pub connection: Arc<dyn Connection>,
    pub kind: MediaKind,
    pub download: MediaDownload,
}

impl NetworkFile {
    /// The SHA-256 the message declares for the plain file, in hex.
    pub fn declared_sha256(&self) -> Option<String> {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode(self.download.file_sha256.trim())
            .ok()
            .filter(|raw| raw.len() == 32)
            .map(hex::encode)
    }
}

impl MessageFile {
    /// A file of no bytes is not a file.
    pub fn is_empty(&self) -> bool {
        match &self.data {
            FileData::InHand(bytes) => bytes.is_empty(),
            FileData::Network(n) => {
                n.download.file_length == 0 && n.download.direct_path.is_empty()
            }
        }
    }
}

/// What a history write stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// Permanent link of the stored file, empty when the event carries none.
    pub download_url: String,
}

#[async_trait]
pub trait HistorySink: Send + Sync + 'static {
    /// Whether a session with this `orgId` and webhook URL keeps hosted history.
    fn enabled_for(&self, org_id: &str, webhook_url: &str) -> bool;

    /// Writes one event (a message, or an update of an earlier one).
    async fn write(&self, event: &Envelope, file: Option<MessageFile>) -> Result<Written, String>;

    /// The options of a stored poll.
    async fn poll_options(
        &self,
        client_id: &ClientId,
        poll_message_id: &str,
    ) -> Option<Vec<String>>;

    /// The preview of a stored message, for a reply that quotes it.
    async fn quoted(
        &self,
        client_id: &ClientId,
        chat_room_id: &str,
        message_id: &str,
    ) -> Option<Quoted>;

    /// Names the session's unnamed direct rooms after the names learned for
    /// their contacts; how many it named.
    async fn name_rooms(&self, client_id: &ClientId) -> Result<u64, String>;
}
