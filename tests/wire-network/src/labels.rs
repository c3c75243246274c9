//! A phone's chat labels as app-state mutations of its `regular`
//! collection, as WhatsApp's clients write them: `label_edit/<id>` carries a
//! label's name and colour (or its deletion), `label_jid/<id>/<chat>` puts it
//! on a chat or takes it off, a contact's chat named by its LID
//! (whatsapp-rust `features/labels.rs`; Baileys `chatModificationToAppPatch`).
//! Action timestamps are in milliseconds: a device keeps an index's latest
//! change by it.
use std::collections::BTreeSet;

use parley_contract::wire::sandbox::SandboxPastLabel;
use parley_model::recipients::Recipient;
use parley_network::test_network::PhoneLabelChange;
use whatsapp_rust::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

/// One mutation: its index and value.
pub type Mutation = (Vec<String>, wa::SyncActionValue);

/// The mutation of `change` to the label `label_id`, made at `at_ms`;
/// `lid_of` names a contact's LID by its phone.
pub fn mutation(
    label_id: &str,
    change: PhoneLabelChange,
    at_ms: i64,
    lid_of: &dyn Fn(&str) -> String,
) -> Mutation {
    let mut value = wa::SyncActionValue {
        timestamp: Some(at_ms),
        ..Default::default()
    };
    let index = match change {
        PhoneLabelChange::Chat { chat, labeled } => {
            let chat = chat.jid().to_string();
            let chat = match chat.strip_suffix("@s.whatsapp.net") {
                Some(user) => format!("{}@lid", lid_of(user)),
                None => chat,
            };
            value.label_association_action =
                MessageField::some(wa::sync_action_value::LabelAssociationAction {
                    labeled: Some(labeled),
                    ..Default::default()
                });
            vec!["label_jid".to_string(), label_id.to_string(), chat]
        }
        PhoneLabelChange::Deleted => {
            value.label_edit_action = MessageField::some(wa::sync_action_value::LabelEditAction {
                deleted: Some(true),
                ..Default::default()
            });
            vec!["label_edit".to_string(), label_id.to_string()]
        }
        PhoneLabelChange::Saved { name, color } => {
            value.label_edit_action = MessageField::some(wa::sync_action_value::LabelEditAction {
                name: Some(name),
                color: Some(color),
                deleted: Some(false),
                ..Default::default()
            });
            vec!["label_edit".to_string(), label_id.to_string()]
        }
    };
    (index, value)
}

/// The changes that take a phone's labels from `before` to `now` (both
/// checked, as `/sandbox/history` passes them): every label of `now` saved
/// and put on its chats, the chats a kept label left taken off, the labels
/// gone deleted.
pub fn changes(
    before: &[SandboxPastLabel],
    now: &[SandboxPastLabel],
) -> Vec<(String, PhoneLabelChange)> {
    let chats = |l: &SandboxPastLabel| -> BTreeSet<String> { l.chats.iter().cloned().collect() };
    let mut out = Vec::new();
    for label in now {
        out.push((
            label.label_id.clone(),
            PhoneLabelChange::Saved {
                name: label.name.clone(),
                color: i32::try_from(label.color).unwrap_or_default(),
            },
        ));
        let had = before
            .iter()
            .find(|b| b.label_id == label.label_id)
            .map(chats)
            .unwrap_or_default();
        let has = chats(label);
        let on = has.iter().map(|c| (c, true));
        let off = had.difference(&has).map(|c| (c, false));
        for (chat, labeled) in on.chain(off) {
            if let Ok(chat) = Recipient::parse("chat", chat) {
                out.push((
                    label.label_id.clone(),
                    PhoneLabelChange::Chat { chat, labeled },
                ));
            }
        }
    }
    for gone in before
        .iter()
        .filter(|b| !now.iter().any(|l| l.label_id == b.label_id))
    {
        out.push((gone.label_id.clone(), PhoneLabelChange::Deleted));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(id: &str, chats: &[&str]) -> SandboxPastLabel {
        SandboxPastLabel {
            label_id: id.into(),
            name: format!("L{id}"),
            color: 1,
            chats: chats.iter().map(|c| c.to_string()).collect(),
        }
    }

    #[test]
    fn a_phones_labels_are_saved_put_on_chats_and_the_ones_gone_undone() {
        let (a, b) = ("4915100000002@s.whatsapp.net", "120363000000000001@g.us");
        let before = [label("1", &[a, b]), label("2", &[])];
        let now = [label("1", &[b])];
        let chat = |jid: &str, labeled| PhoneLabelChange::Chat {
            chat: Recipient::parse("chat", jid).unwrap(),
            labeled,
        };
        let saved = PhoneLabelChange::Saved {
            name: "L1".into(),
            color: 1,
        };
        let expected = vec![
            ("1".to_string(), saved),
            ("1".to_string(), chat(b, true)),
            ("1".to_string(), chat(a, false)),
            ("2".to_string(), PhoneLabelChange::Deleted),
        ];
        assert_eq!(changes(&before, &now), expected);
    }

    #[test]
    fn a_contacts_chat_is_named_by_its_lid() {
        let chat = Recipient::parse("chat", "+4915100000002").unwrap();
        let (index, value) = mutation(
            "7",
            PhoneLabelChange::Chat {
                chat,
                labeled: true,
            },
            1_700_000_000_123,
            &|phone| format!("lid-of-{phone}"),
        );
        assert_eq!(index, ["label_jid", "7", "lid-of-4915100000002@lid"]);
        assert_eq!(value.timestamp, Some(1_700_000_000_123));
        assert_eq!(
            value
                .label_association_action
                .as_option()
                .and_then(|a| a.labeled),
            Some(true)
        );
    }
}
