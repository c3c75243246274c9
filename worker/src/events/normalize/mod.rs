//! The normalizer: a pure function from a network message to the webhook envelope.
use parley_contract::event::{
    CALL, CALL_ENDED, CALL_OFFER, CHAT_TYPING, CONTACT_PRESENCE, CallInfo, Contact, Edit, Envelope,
    GROUP_PARTICIPANTS, GROUP_PARTICIPANTS_CHANGED, GROUP_UPDATE, GROUP_UPDATED, Group,
    GroupChange, GroupUpdate, InteractiveReply, LABEL, LABEL_CHAT, LABEL_DELETED, LABEL_SAVED,
    LabelInfo, Location, MESSAGE_RECEIPT, MESSAGE_RECEIVED, Media, Meta, PRESENCE, Poll, PollVote,
    PresenceInfo, Quoted, RECEIPT, Reaction, ReceiptInfo, Revoke, STATUS, STATUS_RECEIVED,
    StatusInfo, TYPING, TypingInfo,
};
use parley_model::ids::ChatRoomId;
use parley_model::ids::ClientId;

use super::poll::resolve_vote;
use parley_model::inbound::{CallPhase, Content, GroupSetting, InboundMessage, LabelChange};

/// What the session knows about itself.
#[derive(Debug, Clone)]
pub struct SessionFacts {
    pub client_id: ClientId,
    pub org_id: String,
    /// The session's own LID user-part.
    pub my_lid: String,
    pub enable_group_ai: bool,
    /// The events it turned on beside its messages (`/set-events`).
    pub events: Vec<String>,
}

impl SessionFacts {
    /// Whether the session turned on the opt-in event `name`.
    pub fn wants(&self, name: &str) -> bool {
        self.events.iter().any(|e| e == name)
    }

    /// Whether the session delivers `content` at all as far as its switches
    /// go: a notice (a group's member change, a receipt) when its event is
    /// turned on, whatever `/set-enable-group-ai` says; a message of a group
    /// when group messages are on; other messages always.
    pub fn takes(&self, content: &Content, in_group: bool) -> bool {
        match opt_in_event(content) {
            Some(name) => self.wants(name),
            None => !in_group || self.enable_group_ai,
        }
    }
}

/// The opt-in event a notice is delivered as (`None` for messages).
pub fn opt_in_event(content: &Content) -> Option<&'static str> {
    match content {
        Content::GroupChange { .. } => Some(GROUP_PARTICIPANTS),
        Content::GroupUpdate(_) => Some(GROUP_UPDATE),
        Content::Receipt { .. } => Some(RECEIPT),
        Content::Typing { .. } => Some(TYPING),
        Content::Presence { .. } => Some(PRESENCE),
        Content::Call(_) => Some(CALL),
        Content::Label(_) => Some(LABEL),
        _ => None,
    }
}

/// What was looked up around the message (contacts, avatars, polls, the send's metadata).
#[derive(Debug, Clone, Default)]
pub struct Extras {
    pub remote_name: String,
    pub remote_phone: String,
    pub remote_username: String,
    pub avatar_url: String,
    /// For a vote: the poll's options, when known (history or lookup).
    pub poll_options: Option<Vec<String>>,
    /// For a `fromMe` message sent through the API: its `metaData`.
    pub meta: Option<serde_json::Value>,
    /// Permanent link of the stored file (hosted inbox), when there is one.
    pub download_url: String,
}

/// The event for `msg`, or `None` when it is never delivered (broadcast
/// lists, channels; status updates unless the session turned `status` on;
/// groups unless `enableGroupAi`).
/// The other party of the message's chat: the contact's LID user-part, or
/// the group's id.
fn other_party(msg: &InboundMessage) -> &str {
    if msg.is_group() {
        msg.chat.bare_user()
    } else {
        &msg.chat_lid
    }
}

/// A message's event id: one per network message, so a message the network
/// delivers again is logged once. A delete for everyone sent through the
/// real adapter carries the deleted message's id (whatsapp-rust does not
/// return the delete's own): its event is told apart from that message's.
pub fn event_id(client_id: &ClientId, msg: &InboundMessage) -> String {
    if msg.is_status() {
        return format!("sts_{client_id}_{}", msg.id);
    }
    match &msg.content {
        // Not a message: ids of their own, never a message's.
        Content::GroupChange { .. } => format!("grp_{client_id}_{}", msg.id),
        Content::GroupUpdate(_) => format!("grpu_{client_id}_{}", msg.id),
        // One per reader (the contact's LID; a group's member), status and
        // message.
        Content::Receipt { status, .. } => {
            let reader = if msg.is_group() || msg.chat_lid.is_empty() {
                msg.sender.bare_user()
            } else {
                &msg.chat_lid
            };
            format!("rcpt_{client_id}_{}_{reader}_{}", status.as_str(), msg.id)
        }
        // A chat state has no id on the network: the port gives it one.
        Content::Typing { .. } => format!("typ_{client_id}_{}", msg.id),
        Content::Presence { .. } => format!("prs_{client_id}_{}", msg.id),
        // One for the offer and one for the end of each call.
        Content::Call(call) => format!("call_{client_id}_{}_{}", msg.id, call.phase.as_str()),
        // The port names each label change uniquely.
        Content::Label(_) => format!("lbl_{client_id}_{}", msg.id),
        Content::Revoke { target_id } if msg.from_me && *target_id == msg.id => {
            format!("msg_{client_id}_{}_revoke", msg.id)
        }
        _ => format!("msg_{client_id}_{}", msg.id),
    }
}

/// The event's `groupUpdate`: the one setting that changed.
fn group_update(setting: &GroupSetting) -> GroupUpdate {
    let mut update = GroupUpdate::default();
    match setting {
        GroupSetting::Subject(subject) => update.subject = Some(subject.clone()),
        GroupSetting::Description(text) => update.description = Some(text.clone()),
        GroupSetting::Announce(on) => update.announce = Some(*on),
        GroupSetting::Locked(on) => update.locked = Some(*on),
        GroupSetting::Ephemeral(seconds) => update.ephemeral_seconds = Some(*seconds),
    }
    update
}

/// The hosted inbox's room of the message's chat.
pub fn chat_room(facts: &SessionFacts, msg: &InboundMessage) -> ChatRoomId {
    ChatRoomId::new(facts.client_id.as_str(), &facts.my_lid, other_party(msg))
}

pub fn normalize(facts: &SessionFacts, msg: &InboundMessage, extras: &Extras) -> Option<Envelope> {
    let status = msg.is_status();
    if status {
        if !facts.wants(STATUS) {
            return None;
        }
    } else if msg.is_broadcast_or_channel() || !facts.takes(&msg.content, msg.is_group()) {
        return None;
    }
    let is_group = msg.is_group();
    let (other, remote_jid) = if status {
        author(msg)
    } else if is_group {
        (other_party(msg).to_string(), msg.chat.to_string())
    } else {
        let other = other_party(msg).to_string();
        let jid = format!("{other}@lid");
        (other, jid)
    };
    let mut e = Envelope {
        event: MESSAGE_RECEIVED.into(),
        client_id: facts.client_id.to_string(),
        org_id: facts.org_id.clone(),
        timestamp: msg
            .timestamp
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        chat_room_id: ChatRoomId::new(facts.client_id.as_str(), &facts.my_lid, &other)
            .into_string(),
        my_lid: facts.my_lid.clone(),
        client_lid: other,
        remote_jid,
        remote_name: extras.remote_name.clone(),
        remote_phone: extras.remote_phone.clone(),
        remote_username: extras.remote_username.clone(),
        push_name: msg.push_name.clone(),
        avatar_url: extras.avatar_url.clone(),
        from_me: msg.from_me,
        is_group,
        message_id: msg.id.to_string(),
        quoted: msg.quoted.as_ref().map(|q| Quoted {
            message_id: q.message_id.to_string(),
            participant: q.participant.as_ref().map(ToString::to_string),
            body: q.body.clone(),
            kind: q.kind.clone(),
        }),
        mentions: msg.mentions.clone(),
        is_forwarded: msg.is_forwarded,
        meta: if msg.from_me {
            extras.meta.as_ref().map(Meta::from_metadata)
        } else {
            None
        },
        group: is_group.then(|| Group {
            jid: msg.chat.to_string(),
            subject: msg.group_subject.clone().unwrap_or_default(),
            participant: msg.sender.to_string(),
            participant_phone: msg.sender_phone.clone(),
            participant_username: None,
        }),
        ..Envelope::default()
    };
    fill_content(&mut e, &msg.content, extras);
    if status {
        e.status = Some(StatusInfo {
            kind: std::mem::replace(&mut e.kind, STATUS.into()),
        });
        e.event = STATUS_RECEIVED.into();
    }
    Some(e)
}

/// A status's author (the chat is `status@broadcast`): its LID user-part
/// when the network named it, and its JID.
fn author(msg: &InboundMessage) -> (String, String) {
    if msg.sender.server() == "lid" {
        let lid = msg.sender.bare_user().to_string();
        let jid = format!("{lid}@lid");
        (lid, jid)
    } else if !msg.chat_lid.is_empty() {
        (msg.chat_lid.clone(), format!("{}@lid", msg.chat_lid))
    } else {
        (msg.sender.bare_user().to_string(), msg.sender.to_string())
    }
}

fn fill_content(e: &mut Envelope, content: &Content, extras: &Extras) {
    let (kind, body) = match content {
        Content::Text { body } => ("text", body.clone()),
        Content::Media {
            kind,
            info,
            download,
        } => {
            e.media = Some(Media {
                media_type: kind.as_str().into(),
                info: info.clone(),
                file_size: download.file_length,
                download: download.clone(),
                download_url: extras.download_url.clone(),
            });
            (kind.as_str(), info.caption.clone())
        }
        Content::Location {
            latitude,
            longitude,
            name,
            address,
            live,
        } => {
            e.location = Some(Location {
                latitude: *latitude,
                longitude: *longitude,
                name: name.clone(),
                address: address.clone(),
                live: *live,
            });
            let body = if name.is_empty() {
                format!("{latitude},{longitude}")
            } else {
                name.clone()
            };
            ("location", body)
        }
        Content::Contact {
            display_name,
            vcard,
        } => {
            e.contact = Some(Contact {
                display_name: display_name.clone(),
                vcard: vcard.clone(),
            });
            ("contact", display_name.clone())
        }
        Content::Poll {
            name,
            options,
            selectable_count,
        } => {
            e.poll = Some(Poll {
                name: name.clone(),
                options: options.clone(),
                selectable_count: *selectable_count,
            });
            ("poll_creation", name.clone())
        }
        Content::Vote {
            poll_message_id,
            selected_hashes,
        } => {
            let names = extras
                .poll_options
                .as_deref()
                .and_then(|o| resolve_vote(o, selected_hashes));
            let body = names.as_ref().map(|n| n.join(", ")).unwrap_or_default();
            e.poll_vote = Some(PollVote {
                poll_message_id: poll_message_id.to_string(),
                resolved: names.is_some(),
                selected_options: names.unwrap_or_default(),
                selected_hashes: selected_hashes.iter().map(hex::encode).collect(),
            });
            ("vote_update", body)
        }
        Content::InteractiveReply {
            target_id,
            button_id,
            display_text,
        } => {
            e.interactive = Some(InteractiveReply {
                target_id: target_id
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default(),
                button_id: button_id.clone(),
                display_text: display_text.clone(),
            });
            ("interactive_reply", display_text.clone())
        }
        Content::Reaction { target_id, emoji } => {
            e.reaction = Some(Reaction {
                target_id: target_id.to_string(),
                emoji: emoji.clone(),
            });
            ("reaction", emoji.clone())
        }
        Content::Edit { target_id, body } => {
            e.edit = Some(Edit {
                target_id: target_id.to_string(),
                body: body.clone(),
            });
            ("edit", body.clone())
        }
        Content::Revoke { target_id } => {
            e.revoke = Some(Revoke {
                target_id: target_id.to_string(),
            });
            ("revoke", String::new())
        }
        Content::GroupChange {
            action,
            participants,
        } => {
            e.event = GROUP_PARTICIPANTS_CHANGED.into();
            e.group_change = Some(GroupChange {
                action: action.as_str().into(),
                participants: participants.iter().map(ToString::to_string).collect(),
            });
            (GROUP_PARTICIPANTS, String::new())
        }
        Content::GroupUpdate(setting) => {
            e.event = GROUP_UPDATED.into();
            e.group_update = Some(group_update(setting));
            (GROUP_UPDATE, String::new())
        }
        Content::Receipt {
            status,
            message_ids,
        } => {
            e.event = MESSAGE_RECEIPT.into();
            e.receipt = Some(ReceiptInfo {
                status: status.as_str().into(),
                message_ids: message_ids.iter().map(ToString::to_string).collect(),
            });
            (RECEIPT, String::new())
        }
        Content::Typing { state } => {
            e.event = CHAT_TYPING.into();
            e.typing = Some(TypingInfo {
                state: state.as_str().into(),
            });
            (TYPING, String::new())
        }
        Content::Presence {
            available,
            last_seen,
        } => {
            e.event = CONTACT_PRESENCE.into();
            e.presence = Some(PresenceInfo {
                state: if *available {
                    "available"
                } else {
                    "unavailable"
                }
                .into(),
                last_seen: last_seen.map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
            });
            (PRESENCE, String::new())
        }
        Content::Call(call) => {
            let reason = match &call.phase {
                CallPhase::Offer => {
                    e.event = CALL_OFFER.into();
                    None
                }
                CallPhase::Ended { reason } => {
                    e.event = CALL_ENDED.into();
                    reason.clone()
                }
            };
            e.call = Some(CallInfo {
                call_id: call.call.id.clone(),
                state: call.phase.as_str().into(),
                video: call.video,
                group_jid: call.group.as_ref().map(ToString::to_string),
                rejected: call.rejected,
                reason,
            });
            (CALL, String::new())
        }
        Content::Label(notice) => {
            let mut info = LabelInfo {
                label_id: notice.label_id.clone(),
                ..LabelInfo::default()
            };
            e.event = match &notice.change {
                LabelChange::Saved { name, color } => {
                    info.name = Some(name.clone());
                    info.color = Some(*color);
                    LABEL_SAVED
                }
                LabelChange::Deleted => LABEL_DELETED,
                LabelChange::Chat { chat, labeled } => {
                    info.chat_jid = Some(chat.to_string());
                    info.labeled = Some(*labeled);
                    LABEL_CHAT
                }
            }
            .into();
            e.label = Some(info);
            (LABEL, String::new())
        }
    };
    e.kind = kind.into();
    e.body = body;
}

#[cfg(test)]
mod tests;
