//! Chat labels: app-state patches of the `regular` collection
//! (whatsapp-rust's `labels()`: `label_edit` for a label, `label_jid` for a
//! label on a chat), seen by the account's other devices.
use parley_network::{Jid, Label, NetworkError};

use super::connection::LiveConnection;
use super::errors::{failed, jid, ready};

impl LiveConnection {
    pub async fn set_label(&self, label: &Label) -> Result<(), NetworkError> {
        ready(&self.client).await?;
        self.client
            .labels()
            .create_label(&label.id, &label.name, label.color)
            .await
            .map_err(|e| failed(&self.client, "label", e))
    }

    pub async fn remove_label(&self, label_id: &str) -> Result<(), NetworkError> {
        ready(&self.client).await?;
        self.client
            .labels()
            .delete_label(label_id)
            .await
            .map_err(|e| failed(&self.client, "label deletion", e))
    }

    pub async fn set_chat_label(
        &self,
        chat: &Jid,
        label_id: &str,
        labeled: bool,
    ) -> Result<(), NetworkError> {
        ready(&self.client).await?;
        let chat = jid(chat.as_str())?;
        let labels = self.client.labels();
        let done = if labeled {
            labels.add_chat_label(label_id, &chat).await
        } else {
            labels.remove_chat_label(label_id, &chat).await
        };
        done.map_err(|e| failed(&self.client, "chat label", e))
    }
}
