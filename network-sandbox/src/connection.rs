//! A session's connection to the simulated network: pairing codes, logout, close,
//! and the sends (carried out in `sends.rs`).
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::store::media::CdnError;
use async_trait::async_trait;
use parley_model::media::MediaDownload;
use serde_json::json;

use super::live::{Live, Phase};
use super::{SandboxNetwork, codes, unreachable};
use parley_network::{
    ByteStream, CallRef, Connection, CreatedGroup, GroupMetadata, Jid, Label, MediaKind, MessageId,
    MessageRef, NetworkError, NumberCheck, Outgoing, ParticipantAction, ParticipantChange,
    PhoneNumber, Picture, PictureFile, PictureLookup, QueryError, SentMessage, UserInfo,
};

pub(super) struct SandboxConnection {
    network: SandboxNetwork,
    live: Arc<Live>,
    /// Set by the first `close`/`logout`, so dropping does not end it again.
    closed: AtomicBool,
}

impl SandboxConnection {
    pub fn new(network: SandboxNetwork, live: Arc<Live>) -> SandboxConnection {
        SandboxConnection {
            network,
            live,
            closed: AtomicBool::new(false),
        }
    }

    pub(super) fn live(&self) -> &Live {
        &self.live
    }

    pub(super) fn network(&self) -> &SandboxNetwork {
        &self.network
    }

    /// Fails with `message` when a fault of kind `op` is armed (using it up).
    pub(super) async fn check_fault(&self, op: &str, message: &str) -> Result<(), NetworkError> {
        if self
            .network
            .suspects()
            .stamp(&self.live.client_id)
            .is_none()
        {
            return Ok(());
        }
        let armed = self
            .network
            .store()
            .consume_fault(&self.live.client_id, op)
            .await
            .map_err(unreachable)?;
        if armed {
            return Err(NetworkError::Rejected(message.to_string()));
        }
        Ok(())
    }
}

#[async_trait]
impl Connection for SandboxConnection {
    async fn download_media(
        &self,
        _kind: MediaKind,
        media: &MediaDownload,
        max_bytes: u64,
    ) -> Result<ByteStream, NetworkError> {
        match self
            .network
            .store()
            .sandbox_media_stream(media, max_bytes)
            .await
        {
            Ok(stream) => Ok(stream),
            Err(CdnError::Db(e)) => Err(unreachable(e)),
            Err(e) => Err(NetworkError::Rejected(format!(
                "media download failed: {e}"
            ))),
        }
    }

    async fn pair_phone(&self, phone: &PhoneNumber) -> Result<String, NetworkError> {
        self.check_fault("pair-code", "no code issued").await?;
        let state = self.live.state().await;
        match state.phase {
            Phase::Pairing { .. } => {}
            Phase::Linked => return Err(NetworkError::Rejected("already paired".into())),
            Phase::Ended => return Err(NetworkError::Unreachable("connection closed".into())),
        }
        let code = codes::pair_code();
        self.network
            .store()
            .set_pair_code(&self.live.client_id, phone.as_str(), &code)
            .await
            .map_err(unreachable)?;
        Ok(code)
    }

    async fn logout(&self) -> Result<(), NetworkError> {
        self.check_fault("logout", "logout not confirmed by the network")
            .await?;
        self.network
            .store()
            .delete_sandbox_device(&self.live.client_id)
            .await
            .map_err(unreachable)?;
        self.closed.store(true, Ordering::SeqCst);
        self.network.end(&self.live, None).await;
        Ok(())
    }

    /// The sandbox's acknowledgement is `POST /sandbox/messages`'s answer,
    /// which waits for the event itself: nothing to do here.
    async fn persisted(&self, _chat: &Jid, _id: &MessageId, _outcome: Result<(), String>) {}

    async fn close(&self) {
        if !self.closed.swap(true, Ordering::SeqCst) {
            self.network.end(&self.live, None).await;
        }
    }

    async fn lid_for_phone(&self, phone: &PhoneNumber) -> Result<Option<String>, NetworkError> {
        self.resolve_phone(phone).await
    }

    async fn send(&self, message: Outgoing) -> Result<SentMessage, NetworkError> {
        self.send_message(message).await
    }

    async fn revoke(&self, chat: &Jid, target: &MessageRef) -> Result<SentMessage, NetworkError> {
        self.send_revoke(chat, target).await
    }

    async fn revoke_status(
        &self,
        target: &MessageId,
        audience: &[Jid],
    ) -> Result<SentMessage, NetworkError> {
        self.send_status_revoke(target, audience).await
    }

    async fn delete_for_me(&self, chat: &Jid, target: &MessageRef) -> Result<(), NetworkError> {
        self.send_delete_for_me(chat, target).await
    }

    async fn typing(&self, chat: &Jid, composing: bool) -> Result<(), NetworkError> {
        self.send_typing(chat, composing).await
    }

    async fn subscribe_presence(&self, who: &Jid) -> Result<(), NetworkError> {
        self.watch_presence(who).await
    }

    async fn set_presence(&self, available: bool) -> Result<(), NetworkError> {
        self.announce_presence(available).await
    }

    async fn reject_call(&self, call: &CallRef) -> Result<(), NetworkError> {
        self.send_call_reject(call).await
    }

    async fn mark_read(&self, chat: &Jid, message_ids: &[MessageId]) -> Result<(), NetworkError> {
        self.send_read(chat, message_ids).await
    }

    async fn mark_unread(&self, chat: &Jid) -> Result<(), NetworkError> {
        self.send_unread(chat).await
    }

    async fn save_label(&self, label: &Label) -> Result<(), NetworkError> {
        let change = json!({ "name": label.name, "color": label.color, "deleted": false });
        self.send_label(&label.id, change).await
    }

    async fn delete_label(&self, label_id: &str) -> Result<(), NetworkError> {
        self.send_label(label_id, json!({ "deleted": true })).await
    }

    async fn label_chat(
        &self,
        chat: &Jid,
        label_id: &str,
        labeled: bool,
    ) -> Result<(), NetworkError> {
        self.send_chat_label(chat, label_id, labeled).await
    }

    async fn user_info(&self, jid: &Jid) -> Result<Option<UserInfo>, QueryError> {
        self.lookup_user(jid).await
    }

    async fn check_number(&self, phone: &PhoneNumber) -> Result<NumberCheck, QueryError> {
        self.lookup_number(phone).await
    }

    async fn profile_picture(&self, jid: &Jid, preview: bool) -> Result<PictureLookup, QueryError> {
        self.lookup_picture(jid, preview).await
    }

    async fn download_picture(&self, picture: &Picture) -> Result<PictureFile, QueryError> {
        self.fetch_picture(picture).await
    }

    async fn groups(&self) -> Result<Vec<GroupMetadata>, QueryError> {
        self.list_groups().await
    }

    async fn group_metadata(&self, group: &Jid) -> Result<GroupMetadata, QueryError> {
        self.group_info(group).await
    }

    async fn create_group(
        &self,
        subject: &str,
        participants: &[Jid],
    ) -> Result<CreatedGroup, QueryError> {
        self.new_group(subject, participants).await
    }

    async fn update_participants(
        &self,
        group: &Jid,
        action: ParticipantAction,
        participants: &[Jid],
    ) -> Result<Vec<ParticipantChange>, QueryError> {
        self.change_participants(group, action, participants).await
    }

    async fn invite_link(&self, group: &Jid, reset: bool) -> Result<String, QueryError> {
        self.group_invite(group, reset).await
    }

    async fn leave_group(&self, group: &Jid) -> Result<(), QueryError> {
        self.leave(group).await
    }
}

impl Drop for SandboxConnection {
    /// A connection dropped without `close` is closed in the background.
    fn drop(&mut self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let network = self.network.clone();
            let live = Arc::clone(&self.live);
            runtime.spawn(async move { network.end(&live, None).await });
        }
    }
}
