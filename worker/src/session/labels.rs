//! Chat labels changed on one of the account's devices (its phone): every
//! session keeps them (`GET /labels`, the inbox's rooms by label), whether
//! or not it turned their events on. The account's labels as they were at
//! linking, a change that changes nothing stored, and the echo of a change
//! the session made itself through the API (the client library applies its
//! own patch as it sends it) are no events.
use std::collections::VecDeque;

use parley_model::inbound::{LabelChange, LabelNotice};
use parley_model::outgoing::{ChatAction, Label};
use parley_shared::db::DbError;
use tokio::time::{Duration, Instant};

use super::actor::Actor;

/// How long a change the session sent waits for its echo.
const ECHO_WAIT: Duration = Duration::from_secs(60);

/// The label changes the session sent lately: the label, and what changed
/// (a chat's by whether the label is on it: its JID is the network's).
#[derive(Default)]
pub(super) struct OwnLabels {
    sent: VecDeque<(Instant, String, Echo)>,
}

#[derive(Debug, PartialEq)]
enum Echo {
    Saved(String, i32),
    Deleted,
    Chat(bool),
}

impl OwnLabels {
    /// Notes a label change the session is about to send.
    pub(super) fn sending(&mut self, action: &ChatAction, now: Instant) {
        let (id, echo) = match action {
            ChatAction::SaveLabel { label } => {
                (&label.id, Echo::Saved(label.name.clone(), label.color))
            }
            ChatAction::DeleteLabel { label_id } => (label_id, Echo::Deleted),
            ChatAction::LabelChat {
                label_id, labeled, ..
            } => (label_id, Echo::Chat(*labeled)),
            _ => return,
        };
        self.forget_old(now);
        self.sent.push_back((now, id.clone(), echo));
    }

    /// Whether `notice` is the echo of a change the session sent (then
    /// forgotten: a second one is news).
    fn echoes(&mut self, notice: &LabelNotice, now: Instant) -> bool {
        self.forget_old(now);
        let echo = match &notice.change {
            LabelChange::Saved { name, color } => Echo::Saved(name.clone(), *color),
            LabelChange::Deleted => Echo::Deleted,
            LabelChange::Chat { labeled, .. } => Echo::Chat(*labeled),
        };
        let found = self
            .sent
            .iter()
            .position(|(_, id, sent)| *id == notice.label_id && *sent == echo);
        found.map(|i| self.sent.remove(i)).is_some()
    }

    fn forget_old(&mut self, now: Instant) {
        while self
            .sent
            .front()
            .is_some_and(|(at, _, _)| now.duration_since(*at) > ECHO_WAIT)
        {
            self.sent.pop_front();
        }
    }
}

impl Actor {
    /// Keeps the label change; whether it is news (an event for sessions
    /// that turned label events on).
    pub(super) async fn on_label(&mut self, notice: &LabelNotice) -> bool {
        let echo = self.own_labels.echoes(notice, Instant::now());
        match self.keep_label(notice).await {
            Ok(changed) => changed && !notice.from_full_sync && !echo,
            Err(e) => {
                tracing::warn!(client_id = %self.id, label_id = %notice.label_id, error = %e,
                    "a label change was not stored");
                !notice.from_full_sync && !echo
            }
        }
    }

    /// Stores the change; whether it changed what was stored.
    async fn keep_label(&self, notice: &LabelNotice) -> Result<bool, DbError> {
        let db = &self.deps.db;
        let client_id = self.id.as_str();
        let id = notice.label_id.as_str();
        match &notice.change {
            LabelChange::Saved { name, color } => {
                let label = Label {
                    id: id.to_string(),
                    name: name.clone(),
                    color: *color,
                };
                if db.label(client_id, id).await?.as_ref() == Some(&label) {
                    return Ok(false);
                }
                db.save_label(client_id, &label).await?;
            }
            LabelChange::Deleted => {
                if db.label(client_id, id).await?.is_none() {
                    return Ok(false);
                }
                db.delete_label(client_id, id).await?;
            }
            LabelChange::Chat { chat, labeled } => {
                let on = db.is_label_on_chat(client_id, id, chat.as_str()).await?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use parley_model::recipients::Recipient;

    fn notice(id: &str, change: LabelChange) -> LabelNotice {
        LabelNotice {
            label_id: id.into(),
            change,
            from_full_sync: false,
        }
    }

    #[test]
    fn a_sent_change_echoes_once_and_only_for_a_while() {
        let mut own = OwnLabels::default();
        let now = Instant::now();
        let label = Label {
            id: "8".into(),
            name: "From the API".into(),
            color: 0,
        };
        own.sending(&ChatAction::SaveLabel { label }, now);
        own.sending(
            &ChatAction::LabelChat {
                to: Recipient::parse("to", "+4917600000301").unwrap(),
                label_id: "8".into(),
                labeled: true,
            },
            now,
        );
        let saved = || {
            notice(
                "8",
                LabelChange::Saved {
                    name: "From the API".into(),
                    color: 0,
                },
            )
        };
        let other = notice(
            "8",
            LabelChange::Saved {
                name: "Renamed on the phone".into(),
                color: 0,
            },
        );
        assert!(!own.echoes(&other, now), "another change is news");
        assert!(own.echoes(&saved(), now));
        assert!(!own.echoes(&saved(), now), "once");
        let on = notice(
            "8",
            LabelChange::Chat {
                chat: parley_model::address::Jid::parse("1@lid").unwrap(),
                labeled: true,
            },
        );
        assert!(!own.echoes(&on, now + ECHO_WAIT * 2), "too late");
    }
}
