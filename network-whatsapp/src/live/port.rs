//! The network port's `Connection` on the live connection: each method is
//! the library call in `connection`, `sends` or `lookups`.
use async_trait::async_trait;

use parley_model::media::MediaDownload;

use super::connection::LiveConnection;
use parley_network::{
    ByteStream, CallRef, Connection, CreatedGroup, GroupMetadata, Jid, Label, MediaKind, MessageId,
    MessageRef, NetworkError, NumberCheck, Outgoing, ParticipantAction, ParticipantChange,
    PhoneNumber, Picture, PictureFile, PictureLookup, QueryError, SentMessage, UserInfo,
};

#[async_trait]
impl Connection for LiveConnection {
    async fn pair_phone(&self, phone: &PhoneNumber) -> Result<String, NetworkError> {
        self.pair_code(phone).await
    }

    async fn logout(&self) -> Result<(), NetworkError> {
        self.log_out().await
    }

    async fn close(&self) {
        self.shut().await;
    }

    async fn persisted(&self, chat: &Jid, id: &MessageId, outcome: Result<(), String>) {
        self.acks.answer(chat, id, outcome);
    }

    async fn lid_for_phone(&self, phone: &PhoneNumber) -> Result<Option<String>, NetworkError> {
        self.lid_of_phone(phone).await
    }

    async fn send(&self, message: Outgoing) -> Result<SentMessage, NetworkError> {
        self.send_out(message).await
    }

    async fn revoke(&self, chat: &Jid, target: &MessageRef) -> Result<SentMessage, NetworkError> {
        self.revoke_for_everyone(chat, target).await
    }

    async fn delete_for_me(&self, chat: &Jid, target: &MessageRef) -> Result<(), NetworkError> {
        self.delete_mine(chat, target).await
    }

    async fn revoke_status(
        &self,
        target: &MessageId,
        audience: &[Jid],
    ) -> Result<SentMessage, NetworkError> {
        self.revoke_posted(target, audience).await
    }

    async fn typing(&self, chat: &Jid, composing: bool) -> Result<(), NetworkError> {
        self.chat_state(chat, composing).await
    }

    async fn subscribe_presence(&self, who: &Jid) -> Result<(), NetworkError> {
        self.presence_of(who).await
    }

    async fn set_presence(&self, available: bool) -> Result<(), NetworkError> {
        self.announce_presence(available).await
    }

    async fn reject_call(&self, call: &CallRef) -> Result<(), NetworkError> {
        self.reject(call).await
    }

    async fn mark_read(&self, chat: &Jid, message_ids: &[MessageId]) -> Result<(), NetworkError> {
        self.read(chat, message_ids).await
    }

    async fn mark_unread(&self, chat: &Jid) -> Result<(), NetworkError> {
        self.unread(chat).await
    }

    async fn save_label(&self, label: &Label) -> Result<(), NetworkError> {
        self.set_label(label).await
    }

    async fn delete_label(&self, label_id: &str) -> Result<(), NetworkError> {
        self.remove_label(label_id).await
    }

    async fn label_chat(
        &self,
        chat: &Jid,
        label_id: &str,
        labeled: bool,
    ) -> Result<(), NetworkError> {
        self.set_chat_label(chat, label_id, labeled).await
    }

    async fn download_media(
        &self,
        kind: MediaKind,
        media: &MediaDownload,
        max_bytes: u64,
    ) -> Result<ByteStream, NetworkError> {
        self.download(kind, media, max_bytes).await
    }

    async fn user_info(&self, jid: &Jid) -> Result<Option<UserInfo>, QueryError> {
        self.user(jid).await
    }

    async fn check_number(&self, phone: &PhoneNumber) -> Result<NumberCheck, QueryError> {
        self.number(phone).await
    }

    async fn profile_picture(&self, jid: &Jid, preview: bool) -> Result<PictureLookup, QueryError> {
        self.picture(jid, preview).await
    }

    async fn download_picture(&self, picture: &Picture) -> Result<PictureFile, QueryError> {
        self.picture_file(picture).await
    }

    async fn groups(&self) -> Result<Vec<GroupMetadata>, QueryError> {
        self.all_groups().await
    }

    async fn group_metadata(&self, group: &Jid) -> Result<GroupMetadata, QueryError> {
        self.one_group(group).await
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
        self.members(group, action, participants).await
    }

    async fn invite_link(&self, group: &Jid, reset: bool) -> Result<String, QueryError> {
        self.invite(group, reset).await
    }

    async fn leave_group(&self, group: &Jid) -> Result<(), QueryError> {
        self.leave(group).await
    }
}
