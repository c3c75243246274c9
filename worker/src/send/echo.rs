//! What a send put on the network, seen as the session's own message activity:
//! the `fromMe` event (and hosted-history row) of a message sent through the API.
use serde_json::Value;

use crate::events::{Activity, FileBytes};
use parley_model::inbound::{Content, InboundMessage, QuotedRef};
use parley_model::media::MediaDownload;
use parley_model::outgoing::Content as Sent;

use crate::network::{Jid, MessageId, Outgoing, SentMessage};

/// A sent message's content, kept until the network confirmed it.
#[derive(Debug, Clone)]
pub struct Echo {
    pub content: Content,
    pub quoted_id: Option<MessageId>,
    pub mentions: Vec<String>,
    /// A sent file's bytes (the hosted inbox stores them).
    pub file: Option<FileBytes>,
    /// The hosted inbox's `messageType` when the event's type does not tell it.
    pub stored_type: Option<&'static str>,
}

impl Echo {
    /// The echo of a message about to be sent.
    pub fn of(outgoing: &Outgoing) -> Echo {
        let mut file = None;
        let mut stored_type = None;
        let content = match &outgoing.content {
            Sent::Text { body } => Content::Text { body: body.clone() },
            Sent::Media(m) => {
                file = Some(FileBytes {
                    bytes: m.data.clone(),
                    mime_type: m.info.mime_type.clone(),
                    file_name: m.info.file_name.clone(),
                });
                Content::Media {
                    kind: m.kind,
                    info: m.info.clone(),
                    download: MediaDownload {
                        file_length: m.data.len(),
                        ..Default::default()
                    },
                }
            }
            Sent::Poll {
                name,
                options,
                selectable_count,
            } => Content::Poll {
                name: name.clone(),
                options: options.clone(),
                selectable_count: *selectable_count,
            },
            // Buttons have no event type of their own: their text is the
            // event's message, stored in history as `interactive`.
            Sent::Interactive { body, .. } => {
                stored_type = Some("interactive");
                Content::Text { body: body.clone() }
            }
            Sent::Location {
                latitude,
                longitude,
                name,
                address,
            } => Content::Location {
                latitude: *latitude,
                longitude: *longitude,
                name: name.clone().unwrap_or_default(),
                address: address.clone().unwrap_or_default(),
                live: false,
            },
            Sent::Contact {
                display_name,
                vcard,
            } => Content::Contact {
                display_name: display_name.clone(),
                vcard: vcard.clone(),
            },
            // An update of an earlier message, quoting nothing.
            Sent::Reaction {
                target_id, emoji, ..
            } => {
                return Echo::update(Content::Reaction {
                    target_id: target_id.clone(),
                    emoji: emoji.clone(),
                });
            }
            Sent::Edit { target_id, body } => {
                return Echo::update(Content::Edit {
                    target_id: target_id.clone(),
                    body: body.clone(),
                });
            }
        };
        Echo {
            content,
            quoted_id: outgoing.quoted_id.clone(),
            mentions: outgoing.mentions.clone(),
            file,
            stored_type,
        }
    }

    /// The echo of an update (reaction, edit, revoke) of an earlier message.
    pub fn update(content: Content) -> Echo {
        Echo {
            content,
            quoted_id: None,
            mentions: Vec::new(),
            file: None,
            stored_type: None,
        }
    }

    /// The activity the network confirmed as `sent`, by the session `me`.
    pub fn into_activity(self, sent: &SentMessage, me: &Me, meta: Option<Value>) -> Activity {
        let msg = InboundMessage {
            id: sent.message_id.clone(),
            chat: sent.to.clone(),
            chat_lid: if sent.to.is_group() {
                String::new()
            } else {
                sent.to.bare_user().to_string()
            },
            sender: me.jid.clone(),
            sender_phone: None,
            from_me: true,
            push_name: me.push_name.clone(),
            group_subject: None,
            timestamp: sent.at,
            content: self.content,
            quoted: self.quoted_id.map(|message_id| QuotedRef {
                message_id,
                participant: None,
                body: String::new(),
                kind: String::new(),
            }),
            mentions: self.mentions,
            is_forwarded: false,
        };
        Activity {
            msg,
            meta,
            file: self.file,
            connection: None,
            stored_type: self.stored_type,
            sent: true,
        }
    }
}

/// Who the session is, for its own messages.
#[derive(Debug, Clone)]
pub struct Me {
    pub jid: Jid,
    pub push_name: String,
}
