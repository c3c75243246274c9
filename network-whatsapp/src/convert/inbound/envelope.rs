//! Who sent a message, where and when: the facts of the stanza around it, taken
//! from whatsapp-rust's `MessageInfo` (LID and phone forms sorted out).
use chrono::{DateTime, Utc};
use whatsapp_rust::wacore::types::message::{MessageInfo, MessageSource};
use whatsapp_rust::wacore_binary::JidExt;

use crate::convert::ConvertError;
use parley_network::{Jid, MessageId};

/// The envelope of one received (or phone-sent) message.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// The stanza id (for reactions, edits and revokes: the update's own id).
    pub id: MessageId,
    /// The chat JID without device.
    pub chat: Jid,
    /// The other party's LID user-part in a direct chat, empty for groups and
    /// when the stanza did not reveal it (the adapter fills it from its LID-PN
    /// mappings then).
    pub chat_lid: String,
    /// The author's JID without device (in groups the participant).
    pub sender: Jid,
    /// The author's phone digits when the stanza revealed them.
    pub sender_phone: Option<String>,
    pub from_me: bool,
    pub push_name: String,
    /// The group's subject (the adapter knows it from group metadata).
    pub group_subject: Option<String>,
    pub timestamp: DateTime<Utc>,
}

impl Envelope {
    /// The envelope of a message the library dispatched with `info`; an
    /// empty id or a malformed address is an error.
    pub fn from_info(
        info: &MessageInfo,
        group_subject: Option<String>,
    ) -> Result<Envelope, ConvertError> {
        let src = &info.source;
        let is_group = src.is_group || src.chat.is_group();
        // The peer's other address: the sender's for received messages, the
        // recipient's for messages this account sent from another device.
        let peer_alt = if src.is_from_me {
            src.recipient_alt.as_ref()
        } else {
            src.sender_alt.as_ref()
        };
        let chat_lid = if is_group {
            String::new()
        } else {
            [Some(&src.chat), peer_alt]
                .into_iter()
                .flatten()
                .find(|j| j.is_lid())
                .map(|j| j.user.to_string())
                .unwrap_or_default()
        };
        let sender_phone = revealed_phone(src);
        Ok(Envelope {
            id: MessageId::new(info.id.as_str())
                .ok_or_else(|| ConvertError::malformed("message id", &info.id))?,
            chat: address("chat", src.chat.to_non_ad_string())?,
            chat_lid,
            sender: address("sender", src.sender.to_non_ad_string())?,
            sender_phone,
            from_me: src.is_from_me,
            push_name: info.push_name.clone(),
            group_subject: if is_group { group_subject } else { None },
            timestamp: info.timestamp,
        })
    }
}

/// The sender's phone digits, when the stanza revealed them (as its address
/// or beside it).
pub fn revealed_phone(src: &MessageSource) -> Option<String> {
    [Some(&src.sender), src.sender_alt.as_ref()]
        .into_iter()
        .flatten()
        .find(|j| j.is_pn())
        .map(|j| j.user.to_string())
}

fn address(field: &'static str, raw: String) -> Result<Jid, ConvertError> {
    Jid::parse(&raw).ok_or_else(|| ConvertError::malformed(field, &raw))
}
