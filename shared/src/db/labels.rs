//! Each session's chat labels and the chats they are on, as the session's
//! devices set them (the API's changes once the network took them).
use std::collections::BTreeMap;

use parley_model::outgoing::Label;

use super::entities::labels;
use super::{Db, DbError};

/// A label with the chats (JIDs) it is on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelOnChats {
    pub label: Label,
    pub chats: Vec<String>,
}

impl Db {
    /// Creates or changes label `label` of `client_id`.
    pub async fn save_label(&self, client_id: &str, label: &Label) -> Result<(), DbError> {
        labels::save(self.conn(), client_id, &label.id, &label.name, label.color).await
    }

    /// Deletes label `label_id` of `client_id`, and takes it off its chats.
    pub async fn delete_label(&self, client_id: &str, label_id: &str) -> Result<(), DbError> {
        let txn = self.begin_write().await?;
        labels::delete(&txn, client_id, label_id).await?;
        txn.commit().await?;
        Ok(())
    }

    /// Puts label `label_id` of `client_id` on `chat` (a JID), or takes it off.
    pub async fn label_chat(
        &self,
        client_id: &str,
        label_id: &str,
        chat: &str,
        labeled: bool,
    ) -> Result<(), DbError> {
        labels::set_on_chat(self.conn(), client_id, label_id, chat, labeled).await
    }

    /// The labels of `client_id` with their chats, by id (numerically).
    pub async fn labels(&self, client_id: &str) -> Result<Vec<LabelOnChats>, DbError> {
        let mut on: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for row in labels::chats(self.conn(), client_id).await? {
            on.entry(row.label_id).or_default().push(row.chat);
        }
        let mut all: Vec<LabelOnChats> = labels::all(self.conn(), client_id)
            .await?
            .into_iter()
            .map(|row| {
                let mut chats = on.remove(&row.label_id).unwrap_or_default();
                chats.sort_unstable();
                LabelOnChats {
                    label: Label {
                        id: row.label_id,
                        name: row.name,
                        color: row.color,
                    },
                    chats,
                }
            })
            .collect();
        all.sort_by_key(|l| {
            (
                l.label.id.parse::<u64>().unwrap_or(u64::MAX),
                l.label.id.clone(),
            )
        });
        Ok(all)
    }

    /// The label `label_id` of `client_id`, if it has one.
    pub async fn label(&self, client_id: &str, label_id: &str) -> Result<Option<Label>, DbError> {
        Ok(labels::one(self.conn(), client_id, label_id)
            .await?
            .map(|row| Label {
                id: row.label_id,
                name: row.name,
                color: row.color,
            }))
    }

    /// The chats (JIDs, sorted) label `label_id` of `client_id` is on;
    /// `None` when it has no such label.
    pub async fn label_chats(
        &self,
        client_id: &str,
        label_id: &str,
    ) -> Result<Option<Vec<String>>, DbError> {
        if labels::one(self.conn(), client_id, label_id)
            .await?
            .is_none()
        {
            return Ok(None);
        }
        let mut chats = labels::chats_of_label(self.conn(), client_id, label_id).await?;
        chats.sort_unstable();
        Ok(Some(chats))
    }

    /// Whether label `label_id` of `client_id` is on `chat` (a JID).
    pub async fn is_label_on_chat(
        &self,
        client_id: &str,
        label_id: &str,
        chat: &str,
    ) -> Result<bool, DbError> {
        labels::is_on_chat(self.conn(), client_id, label_id, chat).await
    }

    /// An id for a new label of `client_id`: one past the largest number
    /// its labels have (the account's devices number them so too).
    pub async fn next_label_id(&self, client_id: &str) -> Result<String, DbError> {
        let largest = labels::all(self.conn(), client_id)
            .await?
            .iter()
            .filter_map(|l| l.label_id.parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        Ok((largest + 1).to_string())
    }
}
