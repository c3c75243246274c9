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

use parley_contract::command::SendResult;
use parley_contract::command::{Outcome, Reply};
use parley_contract::error::ApiError;
use parley_model::address::{Jid, MessageId};
use parley_model::inbound;
use parley_model::outgoing::{
    ChatAction, Content, DeleteMode, MediaSource, OutgoingMessage, STATUS_AUDIENCE_MAX, StatusPost,
};
use parley_model::recipients::{Recipient, lid_jid};
use parley_shared::db::status_posts::STATUS_LIFETIME_HOURS;
use parley_shared::media::MediaStore;
use serde_json::Value;
use tokio::time::timeout;

use self::download::Fetcher;
pub use self::echo::{Echo, Me};
use self::media::Prepared;
use crate::network::{
    CallRef, Connection, MessageRef, NetworkError, Outgoing, SentMessage, StatusOut,
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
    pub(crate) fn failed(e: ApiError) -> Done {
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
        // A media send holds a slot until the network took the file (and its
        // copies on disk).
        let mut slot = None;
        let (content, mut result) = match message.content.plain() {
            Ok(content) => (content, SendResult::message(String::new())),
            Err(request) => {
                slot = Some(self.fetcher.slot().await?);
                match media::prepare(&request, &self.fetcher, self.media.as_ref()).await? {
                    Prepared::Attach(file) => {
                        let result = SendResult {
                            media_type: Some(file.kind.as_str().to_string()),
                            bytes: Some(file.data.len()),
                            ..SendResult::message(String::new())
                        };
                        (Content::Media(file), result)
                    }
                    Prepared::Link { text } => {
                        let result = SendResult {
                            fallback: Some("text".into()),
                            ..SendResult::message(String::new())
                        };
                        (Content::Text { body: text }, result)
                    }
                }
            }
        };
        let status = match message.status {
            Some(post) => Some(self.status_audience(*post).await?),
            None => None,
        };
        result.audience = status.as_ref().map(|s| s.audience.len() as u64);
        let shown_to: Option<Vec<String>> = status
            .as_ref()
            .map(|s| s.audience.iter().map(ToString::to_string).collect());
        let outgoing = Outgoing {
            to: chat,
            content,
            quoted_id: message.quoted_message_id,
            mentions: message.mentions,
            status,
        };
        let echo = Echo::of(&outgoing);
        let (what, deadline) = match &outgoing.content {
            Content::Media(_) => ("send", MEDIA_NETWORK_TIMEOUT),
            Content::Reaction { .. } => ("reaction", self.network_timeout),
            Content::Edit { .. } => ("edit", self.network_timeout),
            _ => ("send", self.network_timeout),
        };
        let sent = self
            .network_within(what, deadline, self.connection.send(outgoing))
            .await?;
        drop(slot);
        result.message_id = sent.message_id.to_string();
        if let Some(audience) = shown_to {
            self.remember_status(sent.message_id.as_str(), &audience)
                .await;
        }
        Ok((result, sent, echo))
    }

    /// Remembers a posted status's audience, for its deletion (by this or
    /// a later owner). A failure is logged: the status stands, and its
    /// deletion is then refused as unknown.
    async fn remember_status(&self, message_id: &str, audience: &[String]) {
        let client_id = self.book.client_id.as_str();
        if let Err(e) = self
            .book
            .db
            .remember_status(client_id, message_id, audience)
            .await
        {
            tracing::warn!(client_id, message_id, error = %e, "a posted status's audience was not stored");
        }
    }

    /// Deletes the status `message_id` the session posted, for its audience.
    async fn delete_status(&self, message_id: String) -> Result<(), ApiError> {
        let client_id = self.book.client_id.as_str();
        let audience = self
            .book
            .db
            .status_audience(client_id, &message_id)
            .await
            .map_err(|e| ApiError::internal("the session's statuses", e))?
            .ok_or_else(|| {
                ApiError::not_found(format!(
                    "the session posted no status {message_id} in the last {STATUS_LIFETIME_HOURS} hours"
                ))
            })?;
        let audience: Vec<Jid> = audience.iter().filter_map(|j| Jid::parse(j)).collect();
        let id = MessageId::new(message_id.clone())
            .ok_or_else(|| ApiError::bad_request("messageId is not a message id"))?;
        let revoke = self.connection.revoke_status(&id, &audience);
        self.network("status deletion", revoke).await?;
        if let Err(e) = self.book.db.forget_status(client_id, &message_id).await {
            tracing::warn!(client_id, message_id, error = %e, "a deleted status is still remembered");
        }
        Ok(())
    }

    /// Who sees a status, as the network names them: the audience given
    /// (a `+phone` resolved as for a send), or every contact the session
    /// knows (at most [`STATUS_AUDIENCE_MAX`], the most recent); 400 when
    /// that is nobody.
    async fn status_audience(&self, post: StatusPost) -> Result<StatusOut, ApiError> {
        let mut audience = match &post.audience {
            Some(recipients) => {
                let mut jids = Vec::with_capacity(recipients.len());
                for r in recipients {
                    jids.push(self.chat(r).await?);
                }
                jids
            }
            None => self
                .book
                .contacts(STATUS_AUDIENCE_MAX as u64)
                .await
                .map_err(|e| ApiError::internal("the session's contacts", e))?,
        };
        let mut seen = std::collections::HashSet::new();
        audience.retain(|j| seen.insert(j.clone()));
        if audience.is_empty() {
            return Err(ApiError::bad_request(
                "the session knows no contacts yet to show a status to: name its audience",
            ));
        }
        Ok(StatusOut {
            audience,
            background_argb: post.background_argb,
            font: post.font,
        })
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

    /// Rejects a call that rings, then sends `reply` to its caller (as any
    /// text: its `fromMe` event follows) unless `reply` is empty.
    pub async fn reject_call(&self, call: CallRef, reply: String) -> Done {
        let reject = self.connection.reject_call(&call);
        if let Err(e) = self.network("call rejection", reject).await {
            return Done::failed(e);
        }
        if reply.is_empty() {
            return Done {
                outcome: Ok(Reply::Done),
                sent: None,
                meta: None,
                echo: None,
            };
        }
        let to = match Recipient::parse("to", call.creator.as_str()) {
            Ok(to) => to,
            Err(e) => return Done::failed(e.into()),
        };
        let message = OutgoingMessage {
            to,
            content: Content::Text { body: reply },
            quoted_message_id: None,
            mentions: Vec::new(),
            meta: None,
            status: None,
        };
        let mut done = self.send(message).await;
        if done.outcome.is_ok() {
            done.outcome = Ok(Reply::Done);
        }
        done
    }

    async fn perform(&self, action: ChatAction) -> Result<Option<(SentMessage, Echo)>, ApiError> {
        match action {
            ChatAction::Typing { to, composing } => {
                let chat = self.chat(&to).await?;
                self.network("typing indicator", self.connection.typing(&chat, composing))
                    .await?;
                Ok(None)
            }
            ChatAction::SubscribePresence { to } => {
                let who = self.chat(&to).await?;
                let subscribe = self.connection.subscribe_presence(&who);
                self.network("presence subscription", subscribe).await?;
                Ok(None)
            }
            ChatAction::SetPresence { available } => {
                let set = self.connection.set_presence(available);
                self.network("presence", set).await?;
                Ok(None)
            }
            // The session's loop resolves the call's id to the call that
            // rings (`Sender::reject_call`): none did.
            ChatAction::RejectCall { call_id } => Err(ApiError::not_found(format!(
                "no call {call_id} rings the session"
            ))),
            ChatAction::DeleteStatus { message_id } => {
                self.delete_status(message_id).await?;
                Ok(None)
            }
            ChatAction::SaveLabel { label } => {
                self.network("label", self.connection.save_label(&label))
                    .await?;
                self.book
                    .db
                    .save_label(self.book.client_id.as_str(), &label)
                    .await?;
                Ok(None)
            }
            ChatAction::DeleteLabel { label_id } => {
                let delete = self.connection.delete_label(&label_id);
                self.network("label deletion", delete).await?;
                let client_id = self.book.client_id.as_str();
                self.book.db.delete_label(client_id, &label_id).await?;
                Ok(None)
            }
            ChatAction::LabelChat {
                to,
                label_id,
                labeled,
            } => {
                let chat = self.chat(&to).await?;
                let label = self.connection.label_chat(&chat, &label_id, labeled);
                self.network("chat label", label).await?;
                let client_id = self.book.client_id.as_str();
                self.book
                    .db
                    .label_chat(client_id, &label_id, chat.as_str(), labeled)
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
