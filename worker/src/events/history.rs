//! What the event pipeline needs from the hosted inbox: whether a session's
//! events are written, the write itself (before the webhook, so the event can
//! carry the stored file's permanent link), and the lookups that fill events
//! from history (poll options for votes, quoted previews).
use async_trait::async_trait;
use bytes::Bytes;
use parley_shared::event::{Envelope, Quoted};

/// A file's bytes in hand (downloaded from the network, or the one just sent).
#[derive(Clone)]
pub struct FileBytes {
    pub bytes: Bytes,
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
    async fn write(&self, event: &Envelope, file: Option<FileBytes>) -> Result<Written, String>;

    /// The options of a stored poll.
    async fn poll_options(&self, client_id: &str, poll_message_id: &str) -> Option<Vec<String>>;

    /// The preview of a stored message, for a reply that quotes it.
    async fn quoted(&self, client_id: &str, chat_room_id: &str, message_id: &str)
    -> Option<Quoted>;
}
