//! Sends on the simulated network: each operation needs a linked connection,
//! uses up an armed `send` fault (receipts: `receipt`) by failing, applies the
//! rules the real network enforces (edit window, revoking others' messages),
//! then lands in the outbox with a network-assigned id.
use crate::store::NewOutboxEntry;
use chrono::{Duration, Utc};
use parley_model::outgoing::Content;
use parley_model::recipients::Recipient;
use serde_json::{Value, json};

use super::connection::SandboxConnection;
use super::live::Phase;
use super::outbox::Recorded;
use super::{payload, unreachable};
use parley_network::outgoing::new_message_id;
use parley_network::{
    CallRef, Jid, MessageId, MessageRef, NetworkError, Outgoing, PhoneNumber, SentMessage,
};

/// How long after sending a message can be edited.
pub const EDIT_WINDOW: Duration = Duration::minutes(15);

/// Kinds whose text (or caption) can be edited.
const EDITABLE: [&str; 4] = ["text", "image", "video", "document"];

/// The fault that fails sends of any kind, and the one that fails receipts.
const SEND_FAULT: &str = "send";
const RECEIPT_FAULT: &str = "receipt";

/// The fault that fails 1:1 messages as the network does without a privacy
/// token (error 463).
const PRIVACY_TOKEN_FAULT: &str = "privacy-token";

impl SandboxConnection {
    /// Refuses when the connection is not linked.
    async fn admit(&self) -> Result<(), NetworkError> {
        match self.live().state().await.phase {
            Phase::Linked => Ok(()),
            Phase::Pairing { .. } => Err(NetworkError::NotPaired),
            Phase::Ended => Err(NetworkError::Unreachable("connection closed".into())),
        }
    }

    /// A message the network carries under a fresh id: written to the outbox
    /// as [`Self::record`] does.
    async fn record_sent(
        &self,
        to: &Jid,
        kind: &'static str,
        payload: Value,
    ) -> Result<SentMessage, NetworkError> {
        let message_id = new_message_id();
        let at = self
            .record(SEND_FAULT, Some(&message_id), to, kind, payload)
            .await?;
        Ok(SentMessage {
            message_id,
            to: to.clone(),
            kind,
            at,
        })
    }

    /// Writes an outbox entry (`message_id` is `None` for operations that are
    /// not messages: receipts, typing, deletes for this account), unless an
    /// armed fault of `fault` is left: then uses it up and fails, writing
    /// nothing. Answers when it was written.
    async fn record(
        &self,
        fault: &'static str,
        message_id: Option<&MessageId>,
        to: &Jid,
        kind: &'static str,
        payload: Value,
    ) -> Result<chrono::DateTime<Utc>, NetworkError> {
        let at = Utc::now();
        let entry = NewOutboxEntry {
            client_id: self.live().client_id.clone(),
            message_id: message_id.map(MessageId::to_string).unwrap_or_default(),
            to_jid: to.to_string(),
            kind: kind.to_string(),
            payload,
            at,
        };
        match self.network().outbox().record(entry, fault).await {
            Ok(Recorded::Written) => Ok(at),
            Ok(Recorded::Faulted) => Err(NetworkError::Rejected("sandbox fault".into())),
            Err(e) => Err(unreachable(e)),
        }
    }

    pub(super) async fn resolve_phone(
        &self,
        phone: &PhoneNumber,
    ) -> Result<Option<String>, NetworkError> {
        let known = self
            .network()
            .store()
            .phone(phone.as_str())
            .await
            .map_err(unreachable)?;
        Ok(known.filter(|p| p.on_network).map(|p| p.lid))
    }

    /// Records a message of any kind; an edit only of this session's own
    /// messages, of a kind with text, within the window.
    pub(super) async fn send_message(&self, msg: Outgoing) -> Result<SentMessage, NetworkError> {
        self.admit().await?;
        self.check_may_send_to(&msg.to).await?;
        if msg.to.is_phone() || msg.to.is_lid() {
            self.check_fault(PRIVACY_TOKEN_FAULT, parley_network::NO_PRIVACY_TOKEN)
                .await?;
        }
        if let Content::Edit { target_id, .. } = &msg.content {
            self.check_editable(&msg.to, target_id).await?;
        }
        let (kind, mut payload) = payload::message(&msg)
            .await
            .map_err(|e| NetworkError::Unreachable(format!("reading the file to send: {e}")))?;
        if let Some(status) = &msg.status {
            payload::status(&mut payload, kind, status);
        }
        self.record_sent(&msg.to, kind, payload).await
    }

    async fn check_editable(&self, chat: &Jid, target_id: &MessageId) -> Result<(), NetworkError> {
        let original = self
            .network()
            .store()
            .outbox_message(&self.live().client_id, target_id.as_str())
            .await
            .map_err(unreachable)?
            .filter(|m| m.to_jid == chat.as_str())
            .ok_or_else(|| {
                NetworkError::Rejected(format!(
                    "message {target_id} was not sent by this session in this chat"
                ))
            })?;
        if !EDITABLE.contains(&original.kind.as_str()) {
            return Err(NetworkError::Rejected(format!(
                "a {} message cannot be edited",
                original.kind
            )));
        }
        if Utc::now() - original.at > EDIT_WINDOW {
            return Err(NetworkError::Rejected(
                "the edit window (15 minutes) has passed".into(),
            ));
        }
        Ok(())
    }

    /// Everyone may revoke their own messages; others' only in groups (as admin).
    pub(super) async fn send_revoke(
        &self,
        chat: &Jid,
        target: &MessageRef,
    ) -> Result<SentMessage, NetworkError> {
        self.admit().await?;
        if !target.from_me && !chat.is_group() {
            return Err(NetworkError::Rejected(
                "only your own messages can be deleted for everyone".into(),
            ));
        }
        let payload = payload::targeted(target.id.as_str(), json!({ "fromMe": target.from_me }));
        self.record_sent(chat, "revoke", payload).await
    }

    /// A status deleted: a `revoke` entry to `status@broadcast` naming its
    /// audience, as a status's own entry does.
    pub(super) async fn send_status_revoke(
        &self,
        target: &MessageId,
        audience: &[Jid],
    ) -> Result<SentMessage, NetworkError> {
        self.admit().await?;
        let mut shown: Vec<&str> = audience.iter().map(Jid::as_str).collect();
        shown.sort_unstable();
        let extra = json!({ "fromMe": true, "audience": shown });
        let payload = payload::targeted(target.as_str(), extra);
        self.record_sent(&Recipient::Status.jid(), "revoke", payload)
            .await
    }

    pub(super) async fn send_delete_for_me(
        &self,
        chat: &Jid,
        target: &MessageRef,
    ) -> Result<(), NetworkError> {
        self.admit().await?;
        let payload = payload::targeted(target.id.as_str(), json!({ "fromMe": target.from_me }));
        self.record(SEND_FAULT, None, chat, "delete_for_me", payload)
            .await
            .map(drop)
    }

    pub(super) async fn send_typing(
        &self,
        chat: &Jid,
        composing: bool,
    ) -> Result<(), NetworkError> {
        self.admit().await?;
        let payload = json!({ "composing": composing });
        self.record(SEND_FAULT, None, chat, "typing", payload)
            .await
            .map(drop)
    }

    /// The session's phone says it is online or offline: in the outbox
    /// (`presence`, to the account's own phone JID), and heard by this
    /// process's connections that subscribed to the phone's presence.
    pub(super) async fn announce_presence(&self, available: bool) -> Result<(), NetworkError> {
        let me = self.own_phone().await?;
        let phone = PhoneNumber::from_digits(&me).ok_or(NetworkError::NotPaired)?;
        let state = if available {
            "available"
        } else {
            "unavailable"
        };
        self.record(
            SEND_FAULT,
            None,
            &Jid::phone(&phone),
            "presence",
            json!({ "state": state }),
        )
        .await?;
        self.network().tell_watchers(&phone, available).await;
        Ok(())
    }

    /// The session's device rejects a call: in the outbox (`call_reject`,
    /// to the caller, the call's id in the payload), as the network passes
    /// it to the caller. The simulated network keeps no ringing calls: any
    /// id is passed on.
    pub(super) async fn send_call_reject(&self, call: &CallRef) -> Result<(), NetworkError> {
        self.admit().await?;
        let payload = json!({ "callId": call.id });
        self.record(SEND_FAULT, None, &call.creator, "call_reject", payload)
            .await
            .map(drop)
    }

    pub(super) async fn send_read(
        &self,
        chat: &Jid,
        ids: &[MessageId],
    ) -> Result<(), NetworkError> {
        self.admit().await?;
        let payload = json!({ "messageIds": ids });
        self.record(RECEIPT_FAULT, None, chat, "read", payload)
            .await
            .map(drop)
    }

    pub(super) async fn send_unread(&self, chat: &Jid) -> Result<(), NetworkError> {
        self.admit().await?;
        self.record(RECEIPT_FAULT, None, chat, "unread", json!({}))
            .await
            .map(drop)
    }

    /// A label created, changed or deleted (an app-state patch the account's
    /// devices see): in the outbox as `label`, to the account's own phone
    /// JID, as the phone would see it.
    pub(super) async fn send_label(
        &self,
        label_id: &str,
        change: Value,
    ) -> Result<(), NetworkError> {
        self.admit().await?;
        let me = self.own_phone().await?;
        let phone = PhoneNumber::from_digits(&me).ok_or(NetworkError::NotPaired)?;
        let mut payload = json!({ "labelId": label_id });
        if let (Some(payload), Some(change)) = (payload.as_object_mut(), change.as_object()) {
            payload.extend(change.clone());
        }
        self.record(SEND_FAULT, None, &Jid::phone(&phone), "label", payload)
            .await
            .map(drop)
    }

    /// A label put on a chat or taken off (an app-state patch): in the
    /// outbox as `chat_label`, to the chat.
    pub(super) async fn send_chat_label(
        &self,
        chat: &Jid,
        label_id: &str,
        labeled: bool,
    ) -> Result<(), NetworkError> {
        self.admit().await?;
        let payload = json!({ "labelId": label_id, "labeled": labeled });
        self.record(SEND_FAULT, None, chat, "chat_label", payload)
            .await
            .map(drop)
    }
}
