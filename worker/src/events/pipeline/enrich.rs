//! What an activity's event needs that its message does not carry: a group's
//! subject, a contact's phone, a poll's options, a reply's preview and the
//! file history stores.
use std::sync::Arc;

use parley_contract::event::Envelope;
use parley_model::ids::ClientId;

use super::{Activity, EventPipeline, SessionEvents, SessionSettings};
use crate::events::SessionFacts;
use crate::events::history::{FileData, HistorySink, MessageFile, NetworkFile};
use parley_model::inbound::{Content, InboundMessage};

impl EventPipeline {
    /// A group message's subject: the one it carries (then stored), else the
    /// one stored for the group, else the network's group metadata.
    pub(super) async fn group_subject(&self, facts: &SessionFacts, activity: &mut Activity) {
        // Group messages are delivered only when enabled, a group's member
        // changes only when turned on: no lookup for the others.
        let msg = &activity.msg;
        let wanted = msg.is_group() && facts.takes(&msg.content, true);
        let (Some(groups), true) = (&self.groups, wanted) else {
            return;
        };
        let msg = &mut activity.msg;
        match msg.group_subject.as_deref().filter(|s| !s.is_empty()) {
            Some(subject) => {
                groups
                    .learn(&facts.client_id, msg.chat.as_str(), subject)
                    .await
            }
            None => {
                let subject = groups
                    .subject(
                        &facts.client_id,
                        msg.chat.as_str(),
                        activity.connection.as_ref(),
                    )
                    .await;
                msg.group_subject = Some(subject).filter(|s| !s.is_empty());
            }
        }
    }

    /// A group's subject changed: later events name it so.
    pub async fn subject_changed(&self, client_id: &ClientId, group: &str, subject: &str) {
        if let Some(groups) = &self.groups {
            groups.learn(client_id, group, subject).await;
        }
    }

    /// The contact's phone in a direct chat: revealed by the message (and then
    /// learned), or learned before.
    pub(super) async fn remote_phone(&self, facts: &SessionFacts, msg: &InboundMessage) -> String {
        let Some(contacts) = &self.contacts else {
            return msg.sender_phone.clone().unwrap_or_default();
        };
        match &msg.sender_phone {
            Some(phone) => {
                contacts
                    .learn(&facts.client_id, &msg.chat_lid, phone, &msg.push_name)
                    .await;
                phone.clone()
            }
            None => contacts
                .phone(&facts.client_id, &msg.chat_lid)
                .await
                .unwrap_or_default(),
        }
    }

    /// A poll's options, as the spec orders it: stored in the session's hosted
    /// history, else the customer's lookup (nothing when neither knows them).
    /// Never from a worker's memory: every worker answers the same.
    pub(super) async fn poll_options(
        &self,
        session: &SessionEvents,
        settings: &SessionSettings,
        history: Option<&Arc<dyn HistorySink>>,
        msg: &InboundMessage,
        poll_message_id: &str,
    ) -> Option<Vec<String>> {
        let facts = &settings.facts;
        if let Some(history) = history
            && let Some(options) = history
                .poll_options(&facts.client_id, poll_message_id)
                .await
        {
            return Some(options);
        }
        let token = session.target.borrow().token.clone();
        let room = super::normalize::chat_room(facts, msg);
        self.lookup
            .options(
                &settings.poll_lookup_url,
                &token,
                &facts.client_id,
                room.as_str(),
                poll_message_id,
            )
            .await
    }
}

/// A reply's preview from history when the network carried no text
/// (`client_id`: the session the envelope is of).
pub(super) async fn fill_quoted(
    history: &dyn HistorySink,
    client_id: &ClientId,
    envelope: &mut Envelope,
) {
    let Some(quoted) = envelope.quoted.as_mut() else {
        return;
    };
    if !quoted.body.is_empty() {
        return;
    }
    if let Some(stored) = history
        .quoted(client_id, &envelope.chat_room_id, &quoted.message_id)
        .await
    {
        quoted.body = stored.body;
        quoted.kind = stored.kind;
        if quoted.participant.is_none() {
            quoted.participant = stored.participant;
        }
    }
}

/// The file of a media message: in hand, or on the network (then history
/// downloads it only if it has to store it).
pub(super) fn file_of(activity: &Activity) -> Option<MessageFile> {
    let Content::Media {
        kind,
        info,
        download,
    } = &activity.msg.content
    else {
        return None;
    };
    if let Some(file) = &activity.file {
        return Some(MessageFile {
            mime_type: file.mime_type.clone(),
            file_name: file.file_name.clone(),
            data: FileData::InHand(file.bytes.clone()),
        });
    }
    let connection = activity.connection.as_ref()?;
    Some(MessageFile {
        mime_type: info.mime_type.clone(),
        file_name: info.file_name.clone(),
        data: FileData::Network(NetworkFile {
            connection: Arc::clone(connection),
            kind: *kind,
            download: download.clone(),
        }),
    })
}
