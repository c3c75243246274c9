//! Who wrote the group messages this connection received. A reaction to, or a
//! read receipt for, another member's message in a group must name its author;
//! the API only names the message, so the connection notes the author when the
//! message arrives: in memory, and in the session's device store (written in
//! batches by a task of its own), where the next owner of a moved session
//! finds it.
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use parley_network::MessageId;
use tokio::sync::mpsc;

use crate::store::{GroupAuthor, SeaOrmDeviceStore, is_fence_rejected};

/// Messages remembered in memory before the memory starts over.
const REMEMBERED: usize = 20_000;
/// Notes waiting for the store; past that they are kept in memory only.
const WAITING: usize = 4096;
/// Notes written in one statement at most.
const BATCH: usize = 256;
/// How long the store keeps an author.
const KEEP: Duration = Duration::from_secs(30 * 24 * 3600);
/// How often the writer forgets what is older than [`KEEP`].
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// Shared by the event pump (which notes) and the connection (which asks).
#[derive(Clone, Default)]
pub(super) struct Authors {
    /// `(chat JID, message id)` -> the author's JID.
    known: Arc<Mutex<HashMap<(String, String), String>>>,
    stored: Option<Stored>,
}

#[derive(Clone)]
struct Stored {
    store: SeaOrmDeviceStore,
    notes: mpsc::Sender<GroupAuthor>,
}

impl Authors {
    /// Authors kept in memory and in `store`; the writer task ends when the
    /// last handle is gone, after writing what was noted.
    pub fn stored(store: SeaOrmDeviceStore) -> Authors {
        let (notes, waiting) = mpsc::channel(WAITING);
        tokio::spawn(write_notes(store.clone(), waiting));
        Authors {
            known: Arc::default(),
            stored: Some(Stored { store, notes }),
        }
    }

    pub fn note(&self, chat: &str, message_id: &str, author: &str) {
        {
            let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
            if known.len() >= REMEMBERED {
                known.clear();
            }
            known.insert(
                (chat.to_string(), message_id.to_string()),
                author.to_string(),
            );
        }
        if let Some(stored) = &self.stored {
            let note = GroupAuthor {
                chat: chat.to_string(),
                message_id: message_id.to_string(),
                author: author.to_string(),
            };
            if stored.notes.try_send(note).is_err() {
                tracing::debug!(client_id = %stored.store.client_id(), "group author kept in memory only");
            }
        }
    }

    /// The author of `message_id` in `chat`, when this session received it.
    pub async fn of(&self, chat: &str, message_id: &str) -> Option<String> {
        self.of_each(chat, &[message_id]).await.remove(message_id)
    }

    /// The authors of `message_ids` in `chat` that this session received, by
    /// message id: from memory, then one store query for the rest.
    async fn of_each(&self, chat: &str, message_ids: &[&str]) -> HashMap<String, String> {
        let mut found = HashMap::new();
        let mut missing = Vec::new();
        {
            let known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
            for id in message_ids {
                match known.get(&(chat.to_string(), id.to_string())) {
                    Some(author) => drop(found.insert(id.to_string(), author.clone())),
                    None => missing.push(*id),
                }
            }
        }
        if let Some(stored) = &self.stored
            && !missing.is_empty()
        {
            match stored.store.group_authors(chat, &missing).await {
                Ok(more) => found.extend(more),
                Err(e) => {
                    tracing::warn!(client_id = %stored.store.client_id(), error = %e, "group authors not read");
                }
            }
        }
        found
    }

    /// `message_ids` grouped by author (`None`: not known), in first-seen order.
    pub async fn group_by_author<'a>(
        &self,
        chat: &str,
        message_ids: &'a [MessageId],
    ) -> Vec<(Option<String>, Vec<&'a str>)> {
        let ids: Vec<&str> = message_ids.iter().map(MessageId::as_str).collect();
        let authors = self.of_each(chat, &ids).await;
        let mut groups: Vec<(Option<String>, Vec<&'a str>)> = Vec::new();
        for id in message_ids {
            let author = authors.get(id.as_str()).cloned();
            match groups.iter_mut().find(|(a, _)| *a == author) {
                Some((_, ids)) => ids.push(id.as_str()),
                None => groups.push((author, vec![id.as_str()])),
            }
        }
        groups
    }
}

/// Writes the notes in batches; forgets old ones now and then. A stale owner
/// (its fence refused) stops writing: the session runs elsewhere.
async fn write_notes(store: SeaOrmDeviceStore, mut waiting: mpsc::Receiver<GroupAuthor>) {
    let mut batch = Vec::with_capacity(BATCH);
    let mut pruned: Option<tokio::time::Instant> = None;
    while waiting.recv_many(&mut batch, BATCH).await > 0 {
        if let Err(e) = store.put_group_authors(std::mem::take(&mut batch)).await {
            if is_fence_rejected(&e) {
                return;
            }
            tracing::warn!(client_id = %store.client_id(), error = %e, "group authors not stored");
        }
        if pruned.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
            pruned = Some(tokio::time::Instant::now());
            let before = chrono::Utc::now().timestamp() - KEEP.as_secs() as i64;
            if let Err(e) = store.prune_group_authors(before).await {
                tracing::warn!(client_id = %store.client_id(), error = %e, "old group authors not pruned");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn authors_are_remembered_per_chat_and_group_receipts() {
        let authors = Authors::default();
        let group = "120363000000000001@g.us";
        authors.note(group, "A1", "111@lid");
        authors.note(group, "A2", "222@lid");
        authors.note(group, "A3", "111@lid");
        assert_eq!(authors.of(group, "A1").await.as_deref(), Some("111@lid"));
        assert_eq!(authors.of("other@g.us", "A1").await, None);
        let ids: Vec<MessageId> = ["A1", "A2", "X", "A3"]
            .into_iter()
            .filter_map(MessageId::new)
            .collect();
        assert_eq!(
            authors.group_by_author(group, &ids).await,
            vec![
                (Some("111@lid".to_string()), vec!["A1", "A3"]),
                (Some("222@lid".to_string()), vec!["A2"]),
                (None, vec!["X"]),
            ]
        );
    }
}
