//! The phone's chat labels on the simulated network: a change the session's
//! phone makes (`POST /sandbox/labels`) reaches its linked device as the
//! real one's app state does, and the labels the phone had before a link
//! (`POST /sandbox/history`'s `labels`) reach the new device right after
//! it, as its first app-state sync (`from_full_sync`). A contact's chat is
//! named by its LID, as the phone's app state names it.
use chrono::Utc;
use parley_contract::command::Outcome;
use parley_contract::error::ApiError;
use parley_contract::wire::sandbox::SandboxPastLabel;
use parley_model::inbound::{InboundMessage, LabelChange, LabelNotice};
use parley_network::test_network::{PhoneLabel, PhoneLabelChange};
use parley_network::{Jid, PhoneNumber};

use super::SandboxNetwork;
use super::inbound::lid_jid;
use crate::store::{PhonePatch, SandboxDevice};

impl SandboxNetwork {
    /// The session's phone changes a chat label: the account's devices
    /// hear it from app state.
    pub(super) async fn phone_label(&self, client_id: &str, label: PhoneLabel) -> Outcome {
        let device = self
            .store()
            .sandbox_device(client_id)
            .await?
            .ok_or_else(|| ApiError::conflict("session is not linked"))?;
        let own = own_jid(&device).ok_or_else(|| ApiError::conflict("session is not linked"))?;
        let notice = self.label_notice(&own, label, false).await?;
        self.emit_linked(client_id, notice, None).await
    }

    /// What `device`'s first app-state sync tells it of the labels its
    /// phone has: each label, then each chat it is on. One the sandbox
    /// cannot tell is left out with a warning.
    pub(super) async fn labels_at_link(
        &self,
        device: &SandboxDevice,
        labels: Vec<SandboxPastLabel>,
    ) -> Vec<InboundMessage> {
        let Some(own) = own_jid(device) else {
            return Vec::new();
        };
        let mut notices = Vec::new();
        for label in PhoneLabel::changes(&[], &labels) {
            match self.label_notice(&own, label, true).await {
                Ok(notice) => notices.push(notice),
                Err(e) => {
                    tracing::warn!(phone = %device.phone, error = %e.message, "sandbox: a label left out")
                }
            }
        }
        notices
    }

    /// A label change of the phone `own`, as its devices hear it from app
    /// state (`from_full_sync`: at a device's first sync).
    async fn label_notice(
        &self,
        own: &Jid,
        label: PhoneLabel,
        from_full_sync: bool,
    ) -> Result<InboundMessage, ApiError> {
        let change = match label.change {
            PhoneLabelChange::Saved { name, color } => LabelChange::Saved { name, color },
            PhoneLabelChange::Deleted => LabelChange::Deleted,
            PhoneLabelChange::Chat { chat, labeled } => LabelChange::Chat {
                chat: self.chat_as_named(&chat.jid()).await?,
                labeled,
            },
        };
        LabelNotice {
            label_id: label.label_id,
            change,
            from_full_sync,
        }
        .into_message(own, Utc::now().timestamp_millis())
        .ok_or_else(|| ApiError::bad_request("labelId"))
    }

    /// A chat as the network names it: a contact's (a phone JID) by its LID.
    async fn chat_as_named(&self, chat: &Jid) -> Result<Jid, ApiError> {
        if !chat.as_str().ends_with("@s.whatsapp.net") {
            return Ok(chat.clone());
        }
        let contact = self
            .store()
            .upsert_phone(chat.user(), PhonePatch::default())
            .await?;
        lid_jid(&contact.lid)
    }
}

/// The phone JID of `device`'s account.
fn own_jid(device: &SandboxDevice) -> Option<Jid> {
    PhoneNumber::from_digits(&device.phone).map(|p| Jid::phone(&p))
}
