//! The hosted inbox as the event pipeline sees it.
use async_trait::async_trait;
use parley_contract::event::{Envelope, Quoted};
use parley_model::ids::ClientId;

use super::History;
use crate::events::{HistorySink, MessageFile, Written};

#[async_trait]
impl HistorySink for History {
    fn enabled_for(&self, org_id: &str, webhook_url: &str) -> bool {
        History::enabled_for(self, org_id, webhook_url)
    }

    async fn write(&self, event: &Envelope, file: Option<MessageFile>) -> Result<Written, String> {
        let recorded = self.record(event, file).await.map_err(|e| e.to_string())?;
        Ok(Written {
            download_url: recorded.download_url,
        })
    }

    async fn poll_options(
        &self,
        client_id: &ClientId,
        poll_message_id: &str,
    ) -> Option<Vec<String>> {
        History::poll_options(self, client_id, poll_message_id).await
    }

    async fn quoted(
        &self,
        client_id: &ClientId,
        chat_room_id: &str,
        message_id: &str,
    ) -> Option<Quoted> {
        History::quoted(self, client_id, chat_room_id, message_id).await
    }

    async fn name_rooms(&self, client_id: &ClientId) -> Result<u64, String> {
        self.db
            .name_rooms_after_contacts(client_id.as_str())
            .await
            .map_err(|e| e.to_string())
    }
}
