//! The hosted inbox as the event pipeline sees it.
use async_trait::async_trait;
use parley_shared::event::{Envelope, Quoted};

use super::{History, MediaFile};
use crate::events::{FileBytes, HistorySink, Written};

#[async_trait]
impl HistorySink for History {
    fn enabled_for(&self, org_id: &str, webhook_url: &str) -> bool {
        History::enabled_for(self, org_id, webhook_url)
    }

    async fn write(&self, event: &Envelope, file: Option<FileBytes>) -> Result<Written, String> {
        let media = file.map(|f| MediaFile {
            bytes: f.bytes,
            mime_type: f.mime_type,
            file_name: f.file_name,
        });
        let recorded = self.record(event, media).await.map_err(|e| e.to_string())?;
        Ok(Written {
            download_url: recorded.download_url,
        })
    }

    async fn poll_options(&self, client_id: &str, poll_message_id: &str) -> Option<Vec<String>> {
        History::poll_options(self, client_id, poll_message_id).await
    }

    async fn quoted(
        &self,
        client_id: &str,
        chat_room_id: &str,
        message_id: &str,
    ) -> Option<Quoted> {
        History::quoted(self, client_id, chat_room_id, message_id).await
    }
}
