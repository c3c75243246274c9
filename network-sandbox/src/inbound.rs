//! `POST /sandbox/messages` on the network side: someone (a contact, or the
//! linked phone itself) sends the session a message, delivered as the real
//! network delivers one (votes as option hashes, files as CDN pointers).
use crate::injected::{FROM_ME, InjectedContent, InjectedMessage};
use crate::store::{PhonePatch, is_valid_phone};
use chrono::{DateTime, Utc};
use parley_contract::command::{Outcome, Reply};
use parley_contract::error::ApiError;

use super::SandboxNetwork;
use super::live::Phase;
use parley_model::inbound::{Content, InboundMessage, QuotedRef};
use parley_model::media::MediaKind;
use parley_model::recipients;
use parley_network::option_hash;
use parley_network::outgoing::new_message_id;
use parley_network::{Jid, NetworkEvent};

/// Where a message was written and by whom.
struct Route {
    chat: Jid,
    chat_lid: String,
    sender: Jid,
    sender_phone: Option<String>,
    push_name: String,
}

impl SandboxNetwork {
    pub(super) async fn deliver_message(&self, client_id: &str, m: InjectedMessage) -> Outcome {
        let device = self
            .store()
            .sandbox_device(client_id)
            .await?
            .ok_or_else(|| ApiError::conflict("session is not connected"))?;
        let live = self.live(client_id).ok_or_else(reconnecting)?;
        let msg = self
            .inbound_of(m, &device.jid, &device.push_name, Utc::now())
            .await?;
        let id = msg.id.clone();
        // A contact writing to the session's phone issues it a privacy
        // token, as its client does after a 1:1 message.
        if let Some(from) = msg
            .sender_phone
            .as_deref()
            .filter(|_| !msg.from_me && msg.chat == msg.sender)
        {
            self.store().issue_token(from, &device.phone).await?;
        }
        let state = live.state().await;
        match state.phase {
            Phase::Linked => {}
            Phase::Ended => return Err(reconnecting()),
            Phase::Pairing { .. } => return Err(ApiError::conflict("session is not connected")),
        }
        if !state.emit(NetworkEvent::Message(Box::new(msg))).await {
            return Err(reconnecting());
        }
        Ok(Reply::MessageId {
            message_id: id.into_string(),
        })
    }

    /// `m` as the session receives it, sent at `at` (`my_jid` and `my_name`:
    /// the session's device, the sender of its phone's own messages).
    pub(super) async fn inbound_of(
        &self,
        m: InjectedMessage,
        my_jid: &str,
        my_name: &str,
        at: DateTime<Utc>,
    ) -> Result<InboundMessage, ApiError> {
        let route = self.route(&m, my_jid, my_name).await?;
        let content = content_of(m.content)?;
        Ok(InboundMessage {
            id: m.message_id.unwrap_or_else(new_message_id),
            chat: route.chat,
            chat_lid: route.chat_lid,
            sender: route.sender,
            sender_phone: route.sender_phone,
            from_me: m.from == FROM_ME,
            push_name: route.push_name,
            group_subject: None,
            timestamp: at,
            content,
            quoted: m.quoted_message_id.map(|message_id| QuotedRef {
                message_id,
                participant: None,
                body: String::new(),
                kind: String::new(),
            }),
            mentions: m.mentions,
            is_forwarded: m.is_forwarded,
        })
    }

    /// The chat and sender of `m`; a contact that writes is registered when new.
    async fn route(
        &self,
        m: &InjectedMessage,
        my_jid: &str,
        my_name: &str,
    ) -> Result<Route, ApiError> {
        if m.from == FROM_ME {
            let chat = m
                .chat
                .as_deref()
                .ok_or_else(|| ApiError::bad_request("chat is required when from is \"me\""))?;
            let (chat, chat_lid) = if chat.contains('@') {
                (chat_jid(chat)?, String::new())
            } else {
                let contact = self.contact(chat).await?;
                (lid_jid(&contact.lid)?, contact.lid)
            };
            let me = Jid::parse(my_jid)
                .ok_or_else(|| ApiError::internal("sandbox device", "a malformed JID"))?;
            return Ok(Route {
                chat,
                chat_lid,
                sender_phone: Some(me.bare_user().to_string()),
                sender: me,
                push_name: my_name.to_string(),
            });
        }
        let contact = self.contact(&m.from).await?;
        let sender = lid_jid(&contact.lid)?;
        let (chat, chat_lid) = match m.chat.as_deref() {
            None => (sender.clone(), contact.lid.clone()),
            Some(chat) if chat.contains('@') => (chat_jid(chat)?, String::new()),
            Some(_) => {
                return Err(ApiError::bad_request(
                    "chat must be a group, broadcast or channel JID for a contact's message",
                ));
            }
        };
        Ok(Route {
            chat,
            chat_lid,
            sender,
            sender_phone: Some(contact.phone),
            push_name: contact.name,
        })
    }

    async fn contact(&self, phone: &str) -> Result<crate::store::SandboxPhone, ApiError> {
        let phone = phone.trim_start_matches('+');
        if !is_valid_phone(phone) {
            return Err(ApiError::bad_request(
                "phone must be 8 to 15 digits with country code",
            ));
        }
        Ok(self
            .store()
            .upsert_phone(phone, PhonePatch::default())
            .await?)
    }
}

/// A chat the body names by JID.
fn chat_jid(raw: &str) -> Result<Jid, ApiError> {
    Jid::parse(raw).ok_or_else(|| ApiError::bad_request(format!("chat is not a JID: {raw:?}")))
}

/// The LID JID of a sandbox phone (its LID is digits the sandbox drew).
pub(super) fn lid_jid(lid: &str) -> Result<Jid, ApiError> {
    recipients::lid_jid(lid).ok_or_else(|| ApiError::internal("sandbox phone", "a malformed LID"))
}

fn content_of(content: InjectedContent) -> Result<Content, ApiError> {
    Ok(match content {
        InjectedContent::Text { body } => Content::Text { body },
        InjectedContent::Media {
            kind,
            info,
            download,
        } => Content::Media {
            kind: media_kind(&kind)?,
            info,
            download,
        },
        InjectedContent::Location {
            latitude,
            longitude,
            name,
            address,
            live,
        } => Content::Location {
            latitude,
            longitude,
            name,
            address,
            live,
        },
        InjectedContent::Contact {
            display_name,
            vcard,
        } => Content::Contact {
            display_name,
            vcard,
        },
        InjectedContent::PollCreation {
            name,
            options,
            selectable_count,
        } => Content::Poll {
            name,
            options,
            selectable_count,
        },
        InjectedContent::VoteUpdate {
            poll_message_id,
            selected_options,
        } => Content::Vote {
            poll_message_id,
            selected_hashes: selected_options.iter().map(|o| option_hash(o)).collect(),
        },
        InjectedContent::InteractiveReply {
            target_id,
            button_id,
            display_text,
        } => Content::InteractiveReply {
            target_id: Some(target_id),
            button_id,
            display_text,
        },
        InjectedContent::Reaction { target_id, emoji } => Content::Reaction { target_id, emoji },
        InjectedContent::Edit { target_id, body } => Content::Edit { target_id, body },
        InjectedContent::Revoke { target_id } => Content::Revoke { target_id },
    })
}

fn media_kind(kind: &str) -> Result<MediaKind, ApiError> {
    Ok(match kind {
        "image" => MediaKind::Image,
        "video" => MediaKind::Video,
        "audio" => MediaKind::Audio,
        "document" => MediaKind::Document,
        "sticker" => MediaKind::Sticker,
        other => {
            return Err(ApiError::bad_request(format!(
                "unknown media type {other:?}"
            )));
        }
    })
}

/// A linked session whose connection is down for a moment: it reconnects, or
/// its session is changing owner. A retry reaches it once it is back.
fn reconnecting() -> ApiError {
    ApiError::unavailable("the session is reconnecting; retry")
}
