//! Chat labels changed on one of the account's devices (its phone): every
//! session keeps them (`GET /labels`, the inbox's rooms by label), whether
//! or not it turned their events on. A change that changes nothing stored
//! (the account's labels as they were at linking, or the network echoing a
//! change the session made itself through the API) is no event.
use parley_model::inbound::{LabelChange, LabelNotice};
use parley_model::outgoing::Label;
use parley_shared::db::DbError;

use super::actor::Actor;

impl Actor {
    /// Keeps the label change; whether it is news (an event for sessions
    /// that turned label events on).
    pub(super) async fn on_label(&self, notice: &LabelNotice) -> bool {
        match self.keep_label(notice).await {
            Ok(changed) => changed && !notice.from_full_sync,
            Err(e) => {
                tracing::warn!(client_id = %self.id, label_id = %notice.label_id, error = %e,
                    "a label change was not stored");
                !notice.from_full_sync
            }
        }
    }

    /// Stores the change; whether it changed what was stored.
    async fn keep_label(&self, notice: &LabelNotice) -> Result<bool, DbError> {
        let db = &self.deps.db;
        let client_id = self.id.as_str();
        let id = notice.label_id.as_str();
        let stored = db
            .labels(client_id)
            .await?
            .into_iter()
            .find(|l| l.label.id == id);
        match &notice.change {
            LabelChange::Saved { name, color } => {
                let label = Label {
                    id: id.to_string(),
                    name: name.clone(),
                    color: *color,
                };
                if stored.is_some_and(|s| s.label == label) {
                    return Ok(false);
                }
                db.save_label(client_id, &label).await?;
            }
            LabelChange::Deleted => {
                if stored.is_none() {
                    return Ok(false);
                }
                db.delete_label(client_id, id).await?;
            }
            LabelChange::Chat { chat, labeled } => {
                let on = stored
                    .as_ref()
                    .is_some_and(|s| s.chats.iter().any(|c| c == chat.as_str()));
                if on == *labeled {
                    return Ok(false);
                }
                db.label_chat(client_id, id, chat.as_str(), *labeled)
                    .await?;
            }
        }
        Ok(true)
    }
}
