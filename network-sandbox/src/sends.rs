//! Sends on the simulated network: each operation needs a linked connection,
//! uses up an armed `send` fault (receipts: `receipt`) by failing, applies the
//! rules the real network enforces (edit window, revoking others' messages),
//! then lands in the outbox with a network-assigned id.
use crate::store::NewOutboxEntry;
use chrono::{Duration, Utc};
use parley_shared::recipients::GROUP_SERVER;
use serde_json::{Value, json};

use super::connection::SandboxConnection;
use super::live::Phase;
use super::outbox::Recorded;
use super::{payload, unreachable};
use parley_network::outgoing::new_message_id;
use parley_network::{MessageRef, NetworkError, Outgoing, SentMessage};

/// How long after sending a message can be edited.
pub const EDIT_WINDOW: Duration = Duration::minutes(15);

/// Kinds whose text (or caption) can be edited.
const EDITABLE: [&str; 4] = ["text", "image", "video", "document"];

/// The fault that fails sends of any kind, and the one that fails receipts.
const SEND_FAULT: &str = "send";
const RECEIPT_FAULT: &str = "receipt";

impl SandboxConnection {
    /// Refuses when the connection is not linked.
    async fn admit(&self) -> Result<(), NetworkError> {
        match self.live().state().await.phase {
            Phase::Linked => Ok(()),
            Phase::Pairing { .. } => Err(NetworkError::NotPaired),
            Phase::Ended => Err(NetworkError::Unreachable("connection closed".into())),
        }
    }

    /// Writes an outbox entry, unless an armed fault of `fault` is left: then
    /// uses it up and fails, writing nothing.
    async fn record(
        &self,
        fault: &'static str,
        message_id: String,
        to: &str,
        kind: &'static str,
        payload: Value,
    ) -> Result<SentMessage, NetworkError> {
        let at = Utc::now();
        let entry = NewOutboxEntry {
            client_id: self.live().client_id.clone(),
            message_id: message_id.clone(),
            to_jid: to.to_string(),
            kind: kind.to_string(),
            payload,
            at,
        };
        match self.network().outbox().record(entry, fault).await {
            Ok(Recorded::Written) => Ok(SentMessage {
                message_id,
                to: to.to_string(),
                kind,
                at,
            }),
            Ok(Recorded::Faulted) => Err(NetworkError::Rejected("sandbox fault".into())),
            Err(e) => Err(unreachable(e)),
        }
    }

    pub(super) async fn resolve_phone(&self, phone: &str) -> Result<Option<String>, NetworkError> {
        let known = self
            .network()
            .store()
            .phone(phone)
            .await
            .map_err(unreachable)?;
        Ok(known.filter(|p| p.on_network).map(|p| p.lid))
    }

    pub(super) async fn send_message(&self, msg: Outgoing) -> Result<SentMessage, NetworkError> {
        self.admit().await?;
        let (kind, payload) = payload::message(&msg)
            .await
            .map_err(|e| NetworkError::Unreachable(format!("reading the file to send: {e}")))?;
        self.record(SEND_FAULT, new_message_id(), &msg.to, kind, payload)
            .await
    }

    pub(super) async fn send_reaction(
        &self,
        chat: &str,
        target: &MessageRef,
        emoji: &str,
    ) -> Result<SentMessage, NetworkError> {
        self.admit().await?;
        let fields = json!({ "emoji": emoji, "targetFromMe": target.from_me });
        let payload = payload::targeted(&target.id, fields);
        self.record(SEND_FAULT, new_message_id(), chat, "reaction", payload)
            .await
    }

    /// Edits only this session's own messages, of a kind with text, within the window.
    pub(super) async fn send_edit(
        &self,
        chat: &str,
        target_id: &str,
        body: &str,
    ) -> Result<SentMessage, NetworkError> {
        self.admit().await?;
        let original = self
            .network()
            .store()
            .outbox_message(&self.live().client_id, target_id)
            .await
            .map_err(unreachable)?
            .filter(|m| m.to_jid == chat)
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
        let payload = payload::targeted(target_id, json!({ "body": body }));
        self.record(SEND_FAULT, new_message_id(), chat, "edit", payload)
            .await
    }

    /// Everyone may revoke their own messages; others' only in groups (as admin).
    pub(super) async fn send_revoke(
        &self,
        chat: &str,
        target: &MessageRef,
    ) -> Result<SentMessage, NetworkError> {
        self.admit().await?;
        let group = chat.ends_with(&format!("@{GROUP_SERVER}"));
        if !target.from_me && !group {
            return Err(NetworkError::Rejected(
                "only your own messages can be deleted for everyone".into(),
            ));
        }
        let payload = payload::targeted(&target.id, json!({ "fromMe": target.from_me }));
        self.record(SEND_FAULT, new_message_id(), chat, "revoke", payload)
            .await
    }

    pub(super) async fn send_delete_for_me(
        &self,
        chat: &str,
        target: &MessageRef,
    ) -> Result<(), NetworkError> {
        self.admit().await?;
        let payload = payload::targeted(&target.id, json!({ "fromMe": target.from_me }));
        self.record(SEND_FAULT, String::new(), chat, "delete_for_me", payload)
            .await
            .map(drop)
    }

    pub(super) async fn send_typing(
        &self,
        chat: &str,
        composing: bool,
    ) -> Result<(), NetworkError> {
        self.admit().await?;
        let payload = json!({ "composing": composing });
        self.record(SEND_FAULT, String::new(), chat, "typing", payload)
            .await
            .map(drop)
    }

    pub(super) async fn send_read(&self, chat: &str, ids: &[String]) -> Result<(), NetworkError> {
        self.admit().await?;
        let payload = json!({ "messageIds": ids });
        self.record(RECEIPT_FAULT, String::new(), chat, "read", payload)
            .await
            .map(drop)
    }

    pub(super) async fn send_unread(&self, chat: &str) -> Result<(), NetworkError> {
        self.admit().await?;
        self.record(RECEIPT_FAULT, String::new(), chat, "unread", json!({}))
            .await
            .map(drop)
    }
}
