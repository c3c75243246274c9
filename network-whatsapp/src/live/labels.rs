//! Chat labels: app-state patches of the `regular` collection
//! (whatsapp-rust's `labels()`: `label_edit` for a label, `label_jid` for a
//! label on a chat), seen by the account's other devices.
use parley_model::inbound::{InboundMessage, LabelChange, LabelNotice};
use parley_network::{Jid, Label, NetworkError};
use whatsapp_rust::types::events::{LabelAssociationUpdate, LabelEditUpdate};

use super::connection::LiveConnection;
use super::errors::{failed, jid, port_jid, ready};

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

/// A label change from app-state sync (made on another of the account's
/// devices, or part of the labels it had when this one linked), as a
/// notice from the account `own` in its own chat; `None` when its ids do
/// not make a message id.
pub fn edit_notice(update: &LabelEditUpdate, own: &Jid) -> Option<InboundMessage> {
    let action = &update.action;
    let change = if action.deleted == Some(true) {
        LabelChange::Deleted
    } else {
        LabelChange::Saved {
            name: action.name.clone().unwrap_or_default(),
            color: action.color.unwrap_or(0),
        }
    };
    LabelNotice {
        label_id: update.label_id.clone(),
        change,
        from_full_sync: update.from_full_sync,
    }
    .into_message(own, update.timestamp.timestamp_millis())
}

/// A label put on a chat or taken off it, from app-state sync.
pub fn chat_notice(update: &LabelAssociationUpdate, own: &Jid) -> Option<InboundMessage> {
    let chat = port_jid(&update.chat_jid.to_non_ad()).ok()?;
    LabelNotice {
        label_id: update.label_id.clone(),
        change: LabelChange::Chat {
            chat,
            labeled: update.action.labeled.unwrap_or(true),
        },
        from_full_sync: update.from_full_sync,
    }
    .into_message(own, update.timestamp.timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};
    use parley_model::inbound::Content;
    use whatsapp_rust::waproto::whatsapp as wa;

    fn own() -> Jid {
        Jid::parse("4915100000300@s.whatsapp.net").unwrap()
    }

    fn edit(action: wa::sync_action_value::LabelEditAction, full: bool) -> LabelEditUpdate {
        LabelEditUpdate::builder()
            .label_id("7".to_string())
            .timestamp(Utc.timestamp_millis_opt(1_700_000_000_123).unwrap())
            .action(Box::new(action))
            .from_full_sync(full)
            .build()
    }

    fn label_of(m: &InboundMessage) -> &LabelNotice {
        match &m.content {
            Content::Label(notice) => notice,
            other => panic!("not a label notice: {other:?}"),
        }
    }

    #[test]
    fn label_edits_and_deletions_become_notices_in_the_accounts_own_chat() {
        let saved = wa::sync_action_value::LabelEditAction {
            name: Some("VIP".into()),
            color: Some(5),
            deleted: Some(false),
            ..Default::default()
        };
        let m = edit_notice(&edit(saved, true), &own()).expect("a notice");
        assert_eq!((m.chat.clone(), m.from_me), (own(), true));
        assert_eq!(m.id.as_str(), "7-1700000000123");
        assert_eq!(
            label_of(&m),
            &LabelNotice {
                label_id: "7".into(),
                change: LabelChange::Saved {
                    name: "VIP".into(),
                    color: 5
                },
                from_full_sync: true,
            }
        );
        let deleted = wa::sync_action_value::LabelEditAction {
            deleted: Some(true),
            ..Default::default()
        };
        let m = edit_notice(&edit(deleted, false), &own()).expect("a notice");
        assert_eq!(label_of(&m).change, LabelChange::Deleted);
    }

    #[test]
    fn a_label_on_a_chat_names_the_chat() {
        let chat: whatsapp_rust::Jid = "163963043973956:3@lid".parse().unwrap();
        let update = LabelAssociationUpdate::builder()
            .label_id("7".to_string())
            .chat_jid(chat)
            .timestamp(Utc.timestamp_millis_opt(1_700_000_000_000).unwrap())
            .action(Box::new(wa::sync_action_value::LabelAssociationAction {
                labeled: Some(false),
                ..Default::default()
            }))
            .from_full_sync(false)
            .build();
        let m = chat_notice(&update, &own()).expect("a notice");
        let chat = Jid::parse("163963043973956@lid").unwrap();
        assert_eq!(m.chat, chat, "the chat, without the device");
        assert_eq!(
            label_of(&m).change,
            LabelChange::Chat {
                chat,
                labeled: false
            }
        );
    }
}
