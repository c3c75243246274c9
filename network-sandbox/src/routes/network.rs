//! The simulated network behind the control routes: each control travels to
//! the worker that owns the session as a [`SandboxOp`] and acts there, where
//! the network would; the outbox and the phones answer from the sandbox's
//! tables. Files of `/sandbox/messages` go to the sandbox's CDN first.
use actix_web::web;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use parley_api::AppState;
use parley_api::extension::{ask_owner, unexpected};
use parley_contract::command::Reply;
use parley_contract::error::ApiError;
use parley_model::address::{Jid, MessageId, PhoneNumber};
use parley_model::ids::ClientId;
use parley_model::media::MediaInfo;
use parley_model::recipients::{GROUP_SERVER, LID_SERVER, PHONE_SERVER, Recipient, lid_jid};
use parley_network::outgoing::new_call_id;
use parley_network::test_network::{
    CallEnd, MembersChange, NewCall, NewGroup, NewReceipt, NewTyping, PhoneLabel, SettingChange,
    TestNetwork,
};

use super::messages::{Checked, File, checked};
use crate::injected::{InjectedContent, InjectedMessage};
use crate::ops::SandboxOp;
use crate::store::PhonePatch;
use crate::store::media::generated_media;
use parley_contract::wire::sandbox::{
    Outbox, OutboxEntry, SandboxContact, SandboxGroupChanged, SandboxGroupCreated, SandboxHistory,
    SandboxHistorySet, SandboxLinked, SandboxMessage, SandboxMessageSent, SandboxPastLabel,
    SandboxPhoneInfo,
};

/// Most entries one `/sandbox/outbox` answer holds (the oldest; page with `since`).
const OUTBOX_LIMIT: u64 = 10_000;

/// The simulated network, as the gateway's API pod reaches it.
pub struct SandboxNetwork {
    state: web::Data<AppState>,
}

impl SandboxNetwork {
    /// For [`super::control_routes`].
    pub fn boxed(state: web::Data<AppState>) -> Box<dyn TestNetwork> {
        Box::new(SandboxNetwork { state })
    }

    fn store(&self) -> crate::store::Store {
        super::store(&self.state)
    }

    async fn ask(&self, id: &ClientId, op: SandboxOp) -> Result<Reply, ApiError> {
        ask_owner(&self.state, id, op.command()?).await
    }

    /// The devices `past.phone` has linked now hear its labels change as
    /// live app-state changes (what the labels were before the call taken
    /// from the stored past): each connected one, as on the real network;
    /// one not connected now misses them.
    async fn tell_linked_devices(
        &self,
        before: &[SandboxPastLabel],
        past: &SandboxHistory,
    ) -> Result<(), ApiError> {
        let changes = PhoneLabel::changes(before, &past.labels);
        for client_id in self.store().linked_to(&past.phone).await? {
            let id = ClientId::from_stored(client_id);
            for label in &changes {
                if let Err(e) = self.phone_label(&id, label.clone()).await {
                    tracing::info!(client_id = %id.as_str(), error = %e.message,
                        "sandbox: a linked device missed its phone's labels");
                    break;
                }
            }
        }
        Ok(())
    }

    async fn linked(&self, id: &ClientId, op: SandboxOp) -> Result<SandboxLinked, ApiError> {
        match self.ask(id, op).await? {
            Reply::Linked { jid, lid } => Ok(SandboxLinked {
                client_id: id.to_string(),
                jid,
                lid,
            }),
            other => Err(unexpected(other)),
        }
    }

    async fn group<T: serde::de::DeserializeOwned>(
        &self,
        id: &ClientId,
        op: SandboxOp,
    ) -> Result<T, ApiError> {
        match self.ask(id, op).await? {
            Reply::Controlled { answer } => serde_json::from_value(answer)
                .map_err(|e| ApiError::internal("the sandbox's group answer", e)),
            other => Err(unexpected(other)),
        }
    }

    /// The chat JIDs a `to` filter names: a JID itself; a user-part as a
    /// LID, phone or group JID; a `+phone` as its phone JID and its LID JID
    /// when known.
    async fn chat_jids(&self, to: &str) -> Result<Vec<String>, ApiError> {
        Ok(match Recipient::parse("to", to)? {
            Recipient::Lid(user) if !to.contains('@') => [LID_SERVER, PHONE_SERVER, GROUP_SERVER]
                .into_iter()
                .filter_map(|server| Jid::new(&user, server))
                .map(Jid::into_string)
                .collect(),
            Recipient::Phone(phone) => {
                let mut jids = vec![Jid::phone(&phone).into_string()];
                if let Some(known) = self.store().phone(phone.as_str()).await?
                    && let Some(lid) = lid_jid(&known.lid)
                {
                    jids.push(lid.into_string());
                }
                jids
            }
            other => vec![other.jid().into_string()],
        })
    }

    /// The message's content; a file is uploaded to the sandbox's CDN.
    async fn content(
        &self,
        id: &ClientId,
        b: &SandboxMessage,
    ) -> Result<InjectedContent, ApiError> {
        let media = match checked(b)? {
            Checked::Other(content) => return Ok(content),
            Checked::Media(media) => media,
        };
        let download = match media.file {
            File::Bytes(bytes) => self.store().put_sandbox_media(id.as_str(), &bytes).await?,
            File::Generated { seed, size } => generated_media(seed, size),
        };
        Ok(InjectedContent::Media {
            kind: b.kind.clone(),
            info: MediaInfo {
                mime_type: media.mime_type,
                file_name: b.file_name.clone().unwrap_or_default(),
                caption: b.caption.clone().unwrap_or_default(),
                ptt: b.ptt.unwrap_or(false),
                // Only images and videos can be shown once.
                view_once: b.view_once == Some(true)
                    && matches!(b.kind.as_str(), "image" | "video"),
            },
            download,
        })
    }
}

#[async_trait]
impl TestNetwork for SandboxNetwork {
    async fn qr_owner(&self, qr: &str) -> Result<ClientId, ApiError> {
        let owner = self.store().qr_owner(qr).await?;
        let owner = owner.ok_or_else(|| ApiError::bad_request("qr is not a current QR code"))?;
        Ok(ClientId::parse(&owner)?)
    }

    async fn link(
        &self,
        id: &ClientId,
        phone: PhoneNumber,
        name: String,
        qr: Option<String>,
    ) -> Result<SandboxLinked, ApiError> {
        self.linked(id, SandboxOp::Link { phone, name, qr }).await
    }

    async fn enter_code(&self, id: &ClientId, code: String) -> Result<SandboxLinked, ApiError> {
        self.linked(id, SandboxOp::EnterCode { code }).await
    }

    async fn unlink(&self, id: &ClientId) -> Result<(), ApiError> {
        self.ask(id, SandboxOp::Unlink).await.map(drop)
    }

    async fn fault(&self, id: &ClientId, op: String, count: u32) -> Result<(), ApiError> {
        self.ask(id, SandboxOp::Fault { op, count }).await.map(drop)
    }

    async fn contact(&self, contact: SandboxContact) -> Result<SandboxPhoneInfo, ApiError> {
        let patch = PhonePatch {
            name: contact.name,
            username: contact.username,
            on_network: contact.on_network,
            avatar: contact.avatar,
            avatar_privacy: contact.avatar_privacy,
            call_privacy: contact.call_privacy,
            about: contact.about,
        };
        let stored = self.store().upsert_phone(&contact.phone, patch).await?;
        Ok(SandboxPhoneInfo {
            jid: stored.jid(),
            phone: stored.phone,
            lid: stored.lid,
        })
    }

    async fn history(&self, history: SandboxHistory) -> Result<SandboxHistorySet, ApiError> {
        let store = self.store();
        // The phone, and the contacts it wrote with, are on the network.
        let mut phones = history.contacts();
        phones.insert(&history.phone);
        for phone in phones {
            store.upsert_phone(phone, PhonePatch::default()).await?;
        }
        let before = store.history(&history.phone).await?.unwrap_or_default();
        store.set_history(&history).await?;
        if before.labels != history.labels {
            self.tell_linked_devices(&before.labels, &history).await?;
        }
        Ok(SandboxHistorySet {
            messages: history.messages.len(),
            labels: history.labels.len(),
            phone: history.phone,
        })
    }

    async fn outbox(
        &self,
        id: &ClientId,
        to: Option<String>,
        since: Option<DateTime<Utc>>,
    ) -> Result<Outbox, ApiError> {
        let chats = match to {
            Some(to) => Some(self.chat_jids(&to).await?),
            None => None,
        };
        let rows = self
            .store()
            .outbox(id.as_str(), chats.as_deref(), since, OUTBOX_LIMIT)
            .await?;
        let messages = rows
            .into_iter()
            .map(|r| OutboxEntry {
                message_id: r.message_id,
                to: r.to_jid,
                kind: r.kind,
                payload: r.payload,
                at: r.at,
            })
            .collect();
        Ok(Outbox { messages })
    }

    async fn message(
        &self,
        id: &ClientId,
        message: SandboxMessage,
    ) -> Result<SandboxMessageSent, ApiError> {
        let content = self.content(id, &message).await?;
        let message = InjectedMessage {
            from: message.from.trim().trim_start_matches('+').to_string(),
            chat: message
                .chat
                .map(|c| c.trim().trim_start_matches('+').to_string())
                .filter(|c| !c.is_empty()),
            message_id: message.message_id.and_then(MessageId::new),
            quoted_message_id: message.quoted_message_id.and_then(MessageId::new),
            mentions: message.mentions.unwrap_or_default(),
            is_forwarded: message.is_forwarded.unwrap_or(false),
            content,
        };
        match self.ask(id, SandboxOp::Message(Box::new(message))).await? {
            Reply::MessageId { message_id } => Ok(SandboxMessageSent { message_id }),
            other => Err(unexpected(other)),
        }
    }

    async fn create_group(
        &self,
        id: &ClientId,
        group: NewGroup,
    ) -> Result<SandboxGroupCreated, ApiError> {
        let op = SandboxOp::CreateGroup {
            subject: group.subject,
            participants: group.participants,
            admins: group.admins,
        };
        self.group(id, op).await
    }

    async fn update_group(
        &self,
        id: &ClientId,
        jid: Jid,
        change: SettingChange,
    ) -> Result<(), ApiError> {
        let SettingChange { setting, by } = change;
        self.ask(id, SandboxOp::GroupSetting { jid, setting, by })
            .await
            .map(|_| ())
    }

    async fn receipt(&self, id: &ClientId, receipt: NewReceipt) -> Result<(), ApiError> {
        let op = SandboxOp::Receipt {
            from: receipt.from,
            status: receipt.status,
            message_ids: receipt.message_ids,
            group: receipt.group,
        };
        self.ask(id, op).await.map(|_| ())
    }

    async fn typing(&self, id: &ClientId, typing: NewTyping) -> Result<(), ApiError> {
        let op = SandboxOp::Typing {
            from: typing.from,
            state: typing.state,
            group: typing.group,
        };
        self.ask(id, op).await.map(|_| ())
    }

    async fn presence(
        &self,
        id: &ClientId,
        from: PhoneNumber,
        available: bool,
    ) -> Result<(), ApiError> {
        let op = SandboxOp::Presence { from, available };
        self.ask(id, op).await.map(|_| ())
    }

    async fn phone_label(&self, id: &ClientId, label: PhoneLabel) -> Result<(), ApiError> {
        self.ask(id, SandboxOp::Label(label)).await.map(|_| ())
    }

    async fn call(&self, id: &ClientId, call: NewCall) -> Result<String, ApiError> {
        let call_id = new_call_id();
        let op = SandboxOp::Call {
            from: call.from,
            call_id: call_id.clone(),
            video: call.video,
            group: call.group,
        };
        self.ask(id, op).await?;
        Ok(call_id)
    }

    async fn end_call(&self, id: &ClientId, end: CallEnd) -> Result<(), ApiError> {
        let op = SandboxOp::CallEnd {
            from: end.from,
            call_id: end.call_id,
            reason: end.reason,
        };
        self.ask(id, op).await.map(drop)
    }

    async fn change_members(
        &self,
        id: &ClientId,
        jid: Jid,
        change: MembersChange,
    ) -> Result<SandboxGroupChanged, ApiError> {
        let op = SandboxOp::GroupMembers {
            jid,
            by: change.by,
            action: change.action,
            participants: change.participants,
        };
        self.group(id, op).await
    }
}
