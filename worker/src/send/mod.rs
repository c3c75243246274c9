//! Carries out one send or chat action on a live connection: resolves the
//! recipient (a `+phone` to the contact's LID when the network knows it), gets
//! media in hand, calls the network port within a deadline and turns its answer
//! into the command's outcome (404 unpaired, 502 rejected or unreachable).
pub mod download;
mod echo;
mod media;
pub mod mime;
mod transfers;

use std::sync::Arc;
use std::time::Duration;

use parley_shared::address::Jid;
use parley_shared::command::{Outcome, Reply};
use parley_shared::error::ApiError;
use parley_shared::media::MediaStore;
use parley_shared::outgoing::{
    ChatAction, Content, DeleteMode, MediaSource, OutgoingMessage, SendResult,
};
use parley_shared::recipients::{Recipient, lid_jid};
use serde_json::Value;
use tokio::time::timeout;

use self::download::Fetcher;
pub use self::echo::{Echo, Me};
use self::media::Prepared;
use crate::network::{
    Connection, MessageRef, NetworkError, Outgoing, OutgoingBody, SentMessage, inbound,
};
use crate::network_errors::{Operation, to_api};
use crate::query::book::Book;

/// Longest wait for the network to take a file (upload and send).
pub const MEDIA_NETWORK_TIMEOUT: Duration = Duration::from_secs(60);

/// What a send needs; cloned into the task that runs it.
#[derive(Clone)]
pub struct Sender {
    pub connection: Arc<dyn Connection>,
    /// The session's learned LID <-> phone mapping.
    pub book: Book,
    pub media: Arc<dyn MediaStore>,
    pub fetcher: Fetcher,
    /// Longest wait for one network operation (media: [`MEDIA_NETWORK_TIMEOUT`]).
    pub network_timeout: Duration,
}

/// The end of a send: its outcome, and what reached the network (for the
/// after-send hook) with the caller's `metaData`.
#[derive(Debug)]
pub struct Done {
    pub outcome: Outcome,
    pub sent: Option<SentMessage>,
    pub meta: Option<Value>,
    /// What was sent, for the `fromMe` event and hosted history.
    pub echo: Option<Box<Echo>>,
}

impl Done {
    fn failed(e: ApiError) -> Done {
        Done {
            outcome: Err(e),
            sent: None,
            meta: None,
            echo: None,
        }
    }
}

impl Sender {
    /// Sends a message; an uploaded file is deleted from the media store afterwards.
    pub async fn send(&self, message: OutgoingMessage) -> Done {
        let upload = match &message.content {
            Content::Media(m) => match &m.source {
                MediaSource::Upload { key } => Some(key.clone()),
                MediaSource::Url { .. } => None,
            },
            _ => None,
        };
        let meta = message.meta.clone();
        let done = match self.deliver(message).await {
            Ok((result, sent, echo)) => Done {
                outcome: Ok(Reply::Sent(result)),
                sent: Some(sent),
                meta,
                echo: Some(Box::new(echo)),
            },
            Err(e) => Done::failed(e),
        };
        if let Some(key) = upload
            && let Err(e) = self.media.delete(&key).await
        {
            tracing::warn!(key, error = %e, "an uploaded file was not deleted after its send");
        }
        done
    }

    async fn deliver(
        &self,
        message: OutgoingMessage,
    ) -> Result<(SendResult, SentMessage, Echo), ApiError> {
        let chat = self.chat(&message.to).await?;
        let envelope = |body| Outgoing {
            to: chat.clone(),
            body,
            quoted_id: message.quoted_message_id.clone(),
            mentions: message.mentions.clone(),
        };
        let plain = |sent: SentMessage, echo| {
            (SendResult::message(sent.message_id.to_string()), sent, echo)
        };
        let body = match message.content {
            Content::Media(request) => {
                // Held until the network took the file (and its copies on disk).
                let _slot = self.fetcher.slot().await?;
                return match media::prepare(&request, &self.fetcher, self.media.as_ref()).await? {
                    Prepared::Attach(file) => {
                        let (kind, bytes) = (file.kind.as_str(), file.data.len());
                        let outgoing = envelope(OutgoingBody::Media(file));
                        let echo = Echo::of(&outgoing);
                        let send = self.connection.send(outgoing);
                        let sent = self
                            .network_within("send", MEDIA_NETWORK_TIMEOUT, send)
                            .await?;
                        let result = SendResult {
                            media_type: Some(kind.to_string()),
                            bytes: Some(bytes),
                            ..SendResult::message(sent.message_id.to_string())
                        };
                        Ok((result, sent, echo))
                    }
                    Prepared::Link { text } => {
                        let outgoing = envelope(OutgoingBody::Text { body: text });
                        let echo = Echo::of(&outgoing);
                        let sent = self.network("send", self.connection.send(outgoing)).await?;
                        let result = SendResult {
                            fallback: Some("text".into()),
                            ..SendResult::message(sent.message_id.to_string())
                        };
                        Ok((result, sent, echo))
                    }
                };
            }
            Content::Reaction {
                target_id,
                emoji,
                target_from_me,
            } => {
                let target = MessageRef {
                    id: target_id,
                    from_me: target_from_me,
                };
                let react = self.connection.react(&chat, &target, &emoji);
                let sent = self.network("reaction", react).await?;
                let echo = Echo::update(inbound::Content::Reaction {
                    target_id: target.id,
                    emoji,
                });
                return Ok(plain(sent, echo));
            }
            Content::Edit { target_id, body } => {
                let edit = self.connection.edit(&chat, &target_id, &body);
                let sent = self.network("edit", edit).await?;
                let echo = Echo::update(inbound::Content::Edit { target_id, body });
                return Ok(plain(sent, echo));
            }
            Content::Text { body } => OutgoingBody::Text { body },
            Content::Poll {
                name,
                options,
                selectable_count,
            } => OutgoingBody::Poll {
                name,
                options,
                selectable_count,
            },
            Content::Interactive {
                body,
                footer,
                buttons,
            } => OutgoingBody::Interactive {
                body,
                footer,
                buttons,
            },
            Content::Location {
                latitude,
                longitude,
                name,
                address,
            } => OutgoingBody::Location {
                latitude,
                longitude,
                name,
                address,
            },
            Content::Contact {
                display_name,
                vcard,
            } => OutgoingBody::Contact {
                display_name,
                vcard,
            },
        };
        let outgoing = envelope(body);
        let echo = Echo::of(&outgoing);
        let sent = self.network("send", self.connection.send(outgoing)).await?;
        Ok(plain(sent, echo))
    }

    /// Carries out a chat action. A revoke is a message of its own (returned
    /// for the after-send hook); the others are not.
    pub async fn act(&self, action: ChatAction) -> Done {
        match self.perform(action).await {
            Ok(sent) => {
                let (sent, echo) = sent.unzip();
                Done {
                    outcome: Ok(Reply::Done),
                    sent,
                    meta: None,
                    echo: echo.map(Box::new),
                }
            }
            Err(e) => Done::failed(e),
        }
    }

    async fn perform(&self, action: ChatAction) -> Result<Option<(SentMessage, Echo)>, ApiError> {
        match action {
            ChatAction::Typing { to, composing } => {
                let chat = self.chat(&to).await?;
                self.network("typing indicator", self.connection.typing(&chat, composing))
                    .await?;
                Ok(None)
            }
            ChatAction::Delete {
                to,
                message_id,
                from_me,
                mode,
            } => {
                let chat = self.chat(&to).await?;
                let target = MessageRef {
                    id: message_id,
                    from_me,
                };
                match mode {
                    DeleteMode::Everyone => {
                        let revoke = self.connection.revoke(&chat, &target);
                        let sent = self.network("revoke", revoke).await?;
                        let echo = Echo::update(inbound::Content::Revoke {
                            target_id: target.id,
                        });
                        Ok(Some((sent, echo)))
                    }
                    DeleteMode::Me => {
                        let delete = self.connection.delete_for_me(&chat, &target);
                        self.network("delete", delete).await?;
                        Ok(None)
                    }
                }
            }
            ChatAction::MarkRead { to, message_ids } => {
                let chat = self.chat(&to).await?;
                let read = self.connection.mark_read(&chat, &message_ids);
                self.network("receipt", read).await?;
                Ok(None)
            }
            ChatAction::MarkUnread { to } => {
                let chat = self.chat(&to).await?;
                let unread = self.connection.mark_unread(&chat);
                self.network("app-state patch", unread).await?;
                Ok(None)
            }
        }
    }

    /// The chat JID of `to`: a `+phone` becomes the contact's LID JID when the
    /// session learned it or the network knows one (then it is learned), else
    /// the phone JID.
    async fn chat(&self, to: &Recipient) -> Result<Jid, ApiError> {
        match to {
            Recipient::Phone(phone) => {
                if let Some(jid) = self.book.lid_jid_for(phone).await {
                    return Ok(jid);
                }
                let lid = self
                    .network("number lookup", self.connection.lid_for_phone(phone))
                    .await?
                    .as_deref()
                    .and_then(lid_jid);
                if let Some(jid) = &lid {
                    self.book.learn(jid.user(), phone.as_str()).await;
                }
                Ok(lid.unwrap_or_else(|| to.jid()))
            }
            other => Ok(other.jid()),
        }
    }

    /// Awaits a network operation within the usual deadline.
    async fn network<T>(
        &self,
        what: &str,
        op: impl Future<Output = Result<T, NetworkError>>,
    ) -> Result<T, ApiError> {
        self.network_within(what, self.network_timeout, op).await
    }

    async fn network_within<T>(
        &self,
        what: &str,
        deadline: Duration,
        op: impl Future<Output = Result<T, NetworkError>>,
    ) -> Result<T, ApiError> {
        match timeout(deadline, op).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(to_api(Operation::Send(what), e.into())),
            Err(_) => Err(ApiError::bad_gateway(format!(
                "the network did not confirm the {what} in time; it may or may not have been delivered"
            ))),
        }
    }
}
