//! Sends and message updates on the live connection: every kind is built by
//! `convert::outbound` (files uploaded first), then handed to the library's
//! send path, which also keeps a poll's message secret in the device store.
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::Utc;
use parley_model::media::MediaDownload;
use parley_model::outgoing::{Button as PortButton, Content};
use whatsapp_rust::download::{DownloadParams, MediaType};
use whatsapp_rust::wacore_binary::JidExt;
use whatsapp_rust::waproto::whatsapp as wa;
use whatsapp_rust::{EditOptions, RevokeType, SendResult};

use super::capped_file::CappedFile;
use super::connection::LiveConnection;
use super::errors::{failed, jid, ready, send_failed};
use super::server_acks::{ANSWER_WAIT, verdict};
use super::{privacy_tokens, upload};
use crate::convert::ConvertError;
use crate::convert::outbound::{
    self, Button, ButtonKind, ContactRequest, Context, InteractiveRequest, LocationRequest,
    MediaRequest, PollRequest, Quote, TextRequest, Uploaded,
};
use parley_model::media::MediaKind;
use parley_network::{
    ByteStream, Jid, MediaFile, MessageId, MessageRef, NetworkError, Outgoing, SentMessage,
};

fn invalid(e: ConvertError) -> NetworkError {
    NetworkError::Rejected(e.to_string())
}

/// The id the library says the network gave a message.
fn network_id(raw: String) -> Result<MessageId, NetworkError> {
    MessageId::new(raw)
        .ok_or_else(|| NetworkError::Rejected("the network gave no message id".into()))
}

/// The library's media type of a port media kind.
pub fn media_type(kind: MediaKind) -> MediaType {
    match kind {
        MediaKind::Image => MediaType::Image,
        MediaKind::Video => MediaType::Video,
        MediaKind::Audio => MediaType::Audio,
        MediaKind::Document => MediaType::Document,
        MediaKind::Sticker => MediaType::Sticker,
    }
}

/// The convert layer's button of an API button.
pub fn button(b: &PortButton) -> Button {
    let plain = |kind, text: &String| Button {
        kind,
        display_text: text.clone(),
        id: None,
        url: None,
        phone_number: None,
        copy_code: None,
    };
    match b {
        PortButton::QuickReply { display_text, id } => Button {
            id: Some(id.clone()),
            ..plain(ButtonKind::QuickReply, display_text)
        },
        PortButton::CtaUrl { display_text, url } => Button {
            url: Some(url.clone()),
            ..plain(ButtonKind::CtaUrl, display_text)
        },
        PortButton::CtaCall {
            display_text,
            phone_number,
        } => Button {
            phone_number: Some(phone_number.clone()),
            ..plain(ButtonKind::CtaCall, display_text)
        },
        PortButton::CtaCopy {
            display_text,
            id,
            copy_code,
        } => Button {
            id: Some(id.clone()),
            copy_code: Some(copy_code.clone()),
            ..plain(ButtonKind::CtaCopy, display_text)
        },
    }
}

/// The context of a send: its reply target and mentions.
/// `quoted_author`: the author of the quoted message when it is another
/// member's message in a group.
pub fn context(message: &Outgoing, quoted_author: Option<String>) -> Context {
    Context {
        quoted: message.quoted_id.as_ref().map(|id| Quote {
            message_id: id.to_string(),
            participant: quoted_author,
            body: None,
        }),
        mentions: message.mentions.clone(),
    }
}

/// The message for a send that needs no upload, with its outbox kind.
pub fn build(
    message: &Outgoing,
    quoted_author: Option<String>,
) -> Result<(wa::Message, &'static str), ConvertError> {
    let context = context(message, quoted_author);
    Ok(match &message.content {
        Content::Text { body } => (
            outbound::text(&TextRequest {
                body: body.clone(),
                context,
            })?,
            "text",
        ),
        Content::Poll {
            name,
            options,
            selectable_count,
        } => {
            let (msg, _secret) = outbound::poll(&PollRequest {
                name: name.clone(),
                options: options.clone(),
                selectable_count: *selectable_count,
                context,
            })?;
            (msg, "poll")
        }
        Content::Interactive {
            body,
            footer,
            buttons,
        } => (
            outbound::interactive(&InteractiveRequest {
                body_text: body.clone(),
                footer_text: footer.clone(),
                buttons: buttons.iter().map(button).collect(),
                context,
            })?,
            "interactive",
        ),
        Content::Location {
            latitude,
            longitude,
            name,
            address,
        } => (
            outbound::location(&LocationRequest {
                latitude: *latitude,
                longitude: *longitude,
                name: name.clone(),
                address: address.clone(),
                context,
            })?,
            "location",
        ),
        Content::Contact {
            display_name,
            vcard,
        } => (
            outbound::contact(&ContactRequest {
                display_name: display_name.clone(),
                phone: None,
                vcard: Some(vcard.clone()),
                context,
            })?,
            "contact",
        ),
        Content::Media(_) | Content::Reaction { .. } | Content::Edit { .. } => {
            return Err(ConvertError::Invalid {
                field: "content",
                reason: "files, reactions and edits are sent on paths of their own".into(),
            });
        }
    })
}

/// The media download parameters of the hosted inbox, decoded.
pub fn download_params(media: &MediaDownload, kind: MediaType) -> Result<DownloadParams, String> {
    let decode = |field: &str, value: &str| {
        STANDARD
            .decode(value)
            .map_err(|e| format!("{field} is not base64: {e}"))
    };
    if media.direct_path.is_empty() {
        return Err("the message has no direct path".into());
    }
    Ok(DownloadParams::encrypted(
        media.direct_path.clone(),
        &decode("mediaKey", &media.media_key)?,
        &decode("fileSha256", &media.file_sha256)?,
        &decode("fileEncSha256", &media.file_enc_sha256)?,
        media.file_length,
        kind,
    ))
}

impl LiveConnection {
    pub(super) fn sent(
        &self,
        result: SendResult,
        to: &Jid,
        kind: &'static str,
    ) -> Result<SentMessage, NetworkError> {
        Ok(SentMessage {
            message_id: network_id(result.message_id)?,
            to: to.clone(),
            kind,
            at: Utc::now(),
        })
    }

    pub async fn send_out(&self, mut message: Outgoing) -> Result<SentMessage, NetworkError> {
        match &message.content {
            Content::Reaction {
                target_id,
                emoji,
                target_from_me,
            } => {
                let target = MessageRef {
                    id: target_id.clone(),
                    from_me: *target_from_me,
                };
                return self.react_to(&message.to, &target, emoji).await;
            }
            Content::Edit { target_id, body } => {
                return self.edit_text(&message.to, target_id, body).await;
            }
            _ => {}
        }
        ready(&self.client).await?;
        let to = jid(message.to.as_str())?;
        if !message.mentions.is_empty() {
            message.mentions = self.mention_jids(&message.mentions).await;
        }
        let quoted_author = match &message.quoted_id {
            Some(id) if to.is_group() => self.authors.of(message.to.as_str(), id.as_str()).await,
            _ => None,
        };
        let (msg, kind) = match &message.content {
            Content::Media(file) => (
                self.media(file, context(&message, quoted_author)).await?,
                file.kind.as_str(),
            ),
            _ => build(&message, quoted_author).map_err(invalid)?,
        };
        if let Some(status) = &message.status {
            return self.post_status(msg, kind, status, &message.to).await;
        }
        let group = to.is_group();
        if !group {
            privacy_tokens::props_loaded(&self.client, &self.props).await;
        }
        let had_salt = privacy_tokens::has_salt(&self.client);
        // Kept to go again if it is refused for want of the salt (`privacy_tokens`).
        let spare = (!group && !had_salt).then(|| msg.clone());
        let result = self.send_once(&to, msg).await?;
        let error = self
            .server_acks
            .answer(&result.message_id, ANSWER_WAIT)
            .await?;
        let result = match spare {
            Some(msg)
                if privacy_tokens::wants_salt(error.as_deref(), group, had_salt)
                    && privacy_tokens::salt_arrives(&self.client, privacy_tokens::SALT_WAIT)
                        .await =>
            {
                let again = self.send_once(&to, msg).await?;
                self.server_acks
                    .confirmed(&again.message_id, group, ANSWER_WAIT)
                    .await?;
                again
            }
            _ => {
                verdict(error, group)?;
                result
            }
        };
        self.sent(result, &message.to, kind)
    }

    async fn send_once(
        &self,
        to: &whatsapp_rust::Jid,
        msg: wa::Message,
    ) -> Result<SendResult, NetworkError> {
        self.client
            .send_message(to.clone(), msg)
            .await
            .map_err(|e| send_failed(&self.client, "send", to, e))
    }

    /// Uploads the file and builds its message.
    async fn media(&self, file: &MediaFile, context: Context) -> Result<wa::Message, NetworkError> {
        let up = upload::upload(&self.client, &file.data, media_type(file.kind)).await?;
        let uploaded = Uploaded {
            url: up.url,
            direct_path: up.direct_path,
            media_key: up.media_key,
            file_enc_sha256: up.file_enc_sha256,
            file_sha256: up.file_sha256,
            file_length: up.file_length,
            media_key_timestamp: up.media_key_timestamp,
            streaming_sidecar: up.streaming_sidecar,
        };
        let request = MediaRequest {
            kind: file.kind,
            info: file.info.clone(),
            context,
        };
        outbound::media(&request, &uploaded).map_err(invalid)
    }

    async fn react_to(
        &self,
        chat: &Jid,
        target: &MessageRef,
        emoji: &str,
    ) -> Result<SentMessage, NetworkError> {
        ready(&self.client).await?;
        let chat_jid = jid(chat.as_str())?;
        // In a group, another member's message is named with its author.
        let participant = match target.from_me {
            false if chat_jid.is_group() => {
                self.authors.of(chat.as_str(), target.id.as_str()).await
            }
            _ => None,
        };
        let key = wa::MessageKey {
            remote_jid: Some(chat_jid.to_string()),
            from_me: Some(target.from_me),
            id: Some(target.id.to_string()),
            participant,
        };
        let group = chat_jid.is_group();
        if !group {
            privacy_tokens::props_loaded(&self.client, &self.props).await;
        }
        let result = self
            .client
            .send_reaction(chat_jid.clone(), key, emoji)
            .await
            .map_err(|e| send_failed(&self.client, "reaction", &chat_jid, e))?;
        self.server_acks
            .confirmed(&result.message_id, group, ANSWER_WAIT)
            .await?;
        self.sent(result, chat, "reaction")
    }

    async fn edit_text(
        &self,
        chat: &Jid,
        target_id: &MessageId,
        body: &str,
    ) -> Result<SentMessage, NetworkError> {
        ready(&self.client).await?;
        let content = outbound::edit_content(body).map_err(invalid)?;
        // The edit goes under a stanza id of its own that the library would
        // not return: chosen here, it is the edit's message id (the target's
        // is inside the edit), and the server's answer to it is waited for.
        // The library then keeps no retry copy under it: a recipient that
        // cannot decrypt the edit keeps showing the original.
        let id = self.client.generate_message_id();
        let options = EditOptions::default().with_stanza_id(id.clone());
        let to = jid(chat.as_str())?;
        let group = to.is_group();
        self.client
            .edit_message_with_options(to, target_id.as_str(), content, options)
            .await
            .map_err(|e| failed(&self.client, "edit", e))?;
        self.server_acks.confirmed(&id, group, ANSWER_WAIT).await?;
        Ok(SentMessage {
            message_id: network_id(id)?,
            to: chat.clone(),
            kind: "edit",
            at: Utc::now(),
        })
    }

    pub async fn revoke_for_everyone(
        &self,
        chat: &Jid,
        target: &MessageRef,
    ) -> Result<SentMessage, NetworkError> {
        ready(&self.client).await?;
        if !target.from_me {
            return Err(NetworkError::Rejected(
                "revoking another member's message needs its author, which this request lacks"
                    .into(),
            ));
        }
        self.client
            .revoke_message(
                jid(chat.as_str())?,
                target.id.to_string(),
                RevokeType::Sender,
            )
            .await
            .map_err(|e| failed(&self.client, "revoke", e))?;
        Ok(SentMessage {
            message_id: target.id.clone(),
            to: chat.clone(),
            kind: "revoke",
            at: Utc::now(),
        })
    }

    pub async fn delete_mine(&self, chat: &Jid, target: &MessageRef) -> Result<(), NetworkError> {
        ready(&self.client).await?;
        let chat = jid(chat.as_str())?;
        self.client
            .chat_actions()
            .delete_message_for_me(&chat, None, target.id.as_str(), target.from_me, true, None)
            .await
            .map_err(|e| failed(&self.client, "delete for me", e))
    }

    pub async fn chat_state(&self, chat: &Jid, composing: bool) -> Result<(), NetworkError> {
        ready(&self.client).await?;
        let to = jid(chat.as_str())?;
        let states = self.client.chatstate();
        let sent = if composing {
            states.send_composing(&to).await
        } else {
            states.send_paused(&to).await
        };
        sent.map_err(|e| failed(&self.client, "typing indicator", e))
    }

    pub async fn read(&self, chat: &Jid, ids: &[MessageId]) -> Result<(), NetworkError> {
        ready(&self.client).await?;
        let chat_jid = jid(chat.as_str())?;
        if !chat_jid.is_group() {
            let ids: Vec<&str> = ids.iter().map(MessageId::as_str).collect();
            return self
                .client
                .mark_as_read(&chat_jid, None, &ids)
                .await
                .map_err(|e| failed(&self.client, "read receipts", e));
        }
        // In a group, one receipt per author of the messages read.
        for (author, ids) in self.authors.group_by_author(chat.as_str(), ids).await {
            let sender = author.as_deref().map(jid).transpose()?;
            self.client
                .mark_as_read(&chat_jid, sender.as_ref(), &ids)
                .await
                .map_err(|e| failed(&self.client, "read receipts", e))?;
        }
        Ok(())
    }

    pub async fn unread(&self, chat: &Jid) -> Result<(), NetworkError> {
        ready(&self.client).await?;
        let chat = jid(chat.as_str())?;
        self.client
            .chat_actions()
            .mark_chat_as_read(&chat, false, None)
            .await
            .map_err(|e| failed(&self.client, "mark unread", e))
    }

    /// Downloads and decrypts a file into an unnamed temporary file (deleted
    /// when the stream is dropped), then streams it; `kind` picks the keys it
    /// was encrypted with. Memory stays small whatever the size: the library
    /// decrypts into the file as the bytes arrive, and the file refuses to
    /// grow past `max_bytes`.
    pub async fn download(
        &self,
        kind: MediaKind,
        media: &MediaDownload,
        max_bytes: u64,
    ) -> Result<ByteStream, NetworkError> {
        ready(&self.client).await?;
        if media.file_length > max_bytes {
            return Err(NetworkError::Rejected(format!(
                "media download refused: the file is larger than {max_bytes} bytes"
            )));
        }
        let params = download_params(media, media_type(kind)).map_err(NetworkError::Rejected)?;
        let file = CappedFile::temporary(max_bytes).await.map_err(|e| {
            NetworkError::Unreachable(format!("no temporary file for a download: {e}"))
        })?;
        let file = self
            .client
            .download_from_params_to_writer(&params, file)
            .await
            .map_err(|e| failed(&self.client, "media download", format!("{e:#}")))?;
        Ok(file.into_stream())
    }
}
