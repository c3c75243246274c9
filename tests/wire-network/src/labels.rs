//! A phone's chat labels as app-state mutations of its `regular`
//! collection, as WhatsApp's clients write them: `label_edit/<id>` carries a
//! label's name and colour (or its deletion), `label_jid/<id>/<chat>` puts it
//! on a chat or takes it off, a contact's chat named by its LID
//! (whatsapp-rust `features/labels.rs`; Baileys `chatModificationToAppPatch`).
//! Action timestamps are in milliseconds: a device keeps an index's latest
//! change by it.
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

#[cfg(test)]
mod tests {
    use super::*;
    use parley_model::recipients::Recipient;

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
