//! Status updates (stories) the session posts: the message a send builds,
//! a text status restyled with its background and font, handed to
//! whatsapp-rust's status path (`status().send_raw`), which encrypts it to
//! every device of the audience and sends it to `status@broadcast` naming
//! them. The audience is an allow list: the contacts the session named, or
//! every contact it knows. A deletion (`status().revoke`) goes to the same
//! audience.
use whatsapp_rust::buffa::{Enumeration, MessageField};
use whatsapp_rust::features::{StatusPrivacySetting, StatusSendOptions};
use whatsapp_rust::waproto::whatsapp as wa;

use super::connection::LiveConnection;
use super::errors::{jid, ready, send_failed};
use parley_model::recipients::Recipient;
use parley_network::{Jid, MessageId, NetworkError, SentMessage, StatusOut};

/// `msg` (a text's) as a text status: an extended text with the status's
/// background and font.
pub fn styled(msg: wa::Message, status: &StatusOut) -> wa::Message {
    let text = msg
        .extended_text_message
        .as_option()
        .and_then(|e| e.text.clone())
        .or(msg.conversation.clone());
    let Some(text) = text else {
        return msg;
    };
    let font = status
        .font
        .and_then(|f| i32::try_from(f).ok())
        .and_then(wa::message::extended_text_message::FontType::from_i32);
    wa::Message {
        extended_text_message: MessageField::some(wa::message::ExtendedTextMessage {
            text: Some(text),
            background_argb: status.background_argb,
            font,
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// `audience` as the library's JIDs, and the options that show a status
/// (or its deletion) to exactly them.
fn allow_list(
    audience: &[Jid],
) -> Result<(Vec<whatsapp_rust::Jid>, StatusSendOptions), NetworkError> {
    let jids = audience
        .iter()
        .map(|j| jid(j.as_str()))
        .collect::<Result<Vec<_>, _>>()?;
    let options = StatusSendOptions {
        privacy: StatusPrivacySetting::AllowList,
        ..Default::default()
    };
    Ok((jids, options))
}

impl LiveConnection {
    /// Posts `msg` (of `kind`) as a status update to `status.audience`.
    pub async fn post_status(
        &self,
        msg: wa::Message,
        kind: &'static str,
        status: &StatusOut,
        to: &Jid,
    ) -> Result<SentMessage, NetworkError> {
        let msg = if kind == "text" {
            styled(msg, status)
        } else {
            msg
        };
        let (audience, options) = allow_list(&status.audience)?;
        let chat = jid(to.as_str())?;
        let result = self
            .client
            .status()
            .send_raw(msg, &audience, options)
            .await
            .map_err(|e| send_failed(&self.client, "status", &chat, e))?;
        self.sent(result, to, kind)
    }

    /// Deletes the status `target` for `audience` (whatsapp-rust's
    /// `status().revoke`: a revoke encrypted to the same devices).
    pub async fn revoke_posted(
        &self,
        target: &MessageId,
        audience: &[Jid],
    ) -> Result<SentMessage, NetworkError> {
        ready(&self.client).await?;
        let (audience, options) = allow_list(audience)?;
        let chat = whatsapp_rust::Jid::status_broadcast();
        self.client
            .status()
            .revoke(target.as_str(), &audience, options)
            .await
            .map_err(|e| send_failed(&self.client, "status deletion", &chat, e))?;
        Ok(SentMessage {
            message_id: target.clone(),
            to: Recipient::Status.jid(),
            kind: "revoke",
            at: chrono::Utc::now(),
        })
    }
}
