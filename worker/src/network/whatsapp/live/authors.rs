//! Who wrote the recent group messages this connection received. A reaction
//! to, or a read receipt for, another member's message in a group must name
//! its author; the API only names the message, so the connection remembers
//! the author when the message arrives.
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// Messages remembered before the memory starts over.
const REMEMBERED: usize = 20_000;

/// Shared by the event pump (which notes) and the connection (which asks).
#[derive(Clone, Default)]
pub(super) struct Authors {
    /// `(chat JID, message id)` -> the author's JID.
    known: Arc<Mutex<HashMap<(String, String), String>>>,
}

impl Authors {
    pub fn note(&self, chat: &str, message_id: &str, author: &str) {
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if known.len() >= REMEMBERED {
            known.clear();
        }
        known.insert(
            (chat.to_string(), message_id.to_string()),
            author.to_string(),
        );
    }

    /// The author of `message_id` in `chat`, when this connection received it.
    pub fn of(&self, chat: &str, message_id: &str) -> Option<String> {
        let known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        known
            .get(&(chat.to_string(), message_id.to_string()))
            .cloned()
    }

    /// `message_ids` grouped by author (`None`: not known), in first-seen order.
    pub fn group_by_author<'a>(
        &self,
        chat: &str,
        message_ids: &'a [String],
    ) -> Vec<(Option<String>, Vec<&'a str>)> {
        let mut groups: Vec<(Option<String>, Vec<&'a str>)> = Vec::new();
        for id in message_ids {
            let author = self.of(chat, id);
            match groups.iter_mut().find(|(a, _)| *a == author) {
                Some((_, ids)) => ids.push(id),
                None => groups.push((author, vec![id])),
            }
        }
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authors_are_remembered_per_chat_and_group_receipts() {
        let authors = Authors::default();
        let group = "120363000000000001@g.us";
        authors.note(group, "A1", "111@lid");
        authors.note(group, "A2", "222@lid");
        authors.note(group, "A3", "111@lid");
        assert_eq!(authors.of(group, "A1").as_deref(), Some("111@lid"));
        assert_eq!(authors.of("other@g.us", "A1"), None);
        let ids: Vec<String> = ["A1", "A2", "X", "A3"].map(String::from).to_vec();
        assert_eq!(
            authors.group_by_author(group, &ids),
            vec![
                (Some("111@lid".to_string()), vec!["A1", "A3"]),
                (Some("222@lid".to_string()), vec!["A2"]),
                (None, vec!["X"]),
            ]
        );
    }
}
