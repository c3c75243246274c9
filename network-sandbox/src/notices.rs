//! What a contact's phone tells the session's device besides messages:
//! its presence, to a connection that subscribed to it (`POST
//! /sandbox/presence`); a receipt of messages the session sent it, or sent
//! a group both are in (`POST /sandbox/receipts`, as the network relays a
//! `<receipt>`); and its chat state in their chat or in a group both are
//! in (`POST /sandbox/typing`, a `<chatstate>`). Each is an inbound
//! activity of its own kind, which only sessions that turned it on
//! deliver. The network does not check that a receipt's messages exist;
//! the simulated one sends no receipts by itself (the real one's phones
//! send a delivery receipt for every message they get). A chat state or a
//! presence has no id on the network: the sandbox gives each a fresh one,
//! as the real adapter does.
use chrono::Utc;
use parley_contract::command::{Outcome, Reply};
use parley_contract::error::ApiError;
use parley_model::inbound::{
    CallNotice, CallPhase, CallRef, Content, InboundMessage, ReceiptStatus, TypingState,
};
use parley_network::outgoing::new_chat_state_id;
use parley_network::{Jid, MessageId, NetworkEvent, PhoneNumber};

use super::SandboxNetwork;
use super::inbound::lid_jid;
use super::live::Phase;
use crate::store::PhonePatch;
use crate::store::entities::phones::{CONTACTS, SandboxPhone};

impl SandboxNetwork {
    pub(super) async fn receipt(
        &self,
        client_id: &str,
        from: &PhoneNumber,
        status: ReceiptStatus,
        message_ids: Vec<MessageId>,
        group: Option<&Jid>,
    ) -> Outcome {
        let first = message_ids
            .first()
            .cloned()
            .ok_or_else(|| ApiError::bad_request("messageIds is empty"))?;
        let content = Content::Receipt {
            status,
            message_ids,
        };
        match group {
            None => self.notice(client_id, from, first, content).await,
            Some(group) => {
                self.group_notice(client_id, from, group, first, content)
                    .await
            }
        }
    }

    pub(super) async fn typing(
        &self,
        client_id: &str,
        from: &PhoneNumber,
        state: TypingState,
        group: Option<&Jid>,
    ) -> Outcome {
        let id = new_chat_state_id();
        let content = Content::Typing { state };
        match group {
            None => self.notice(client_id, from, id, content).await,
            Some(group) => self.group_notice(client_id, from, group, id, content).await,
        }
    }

    /// The contact `from` calls the session's account, or ends the call:
    /// the network rings (or stops ringing) the account's devices, from the
    /// caller's address; a group call only between members of the group.
    pub(super) async fn call(&self, client_id: &str, from: &PhoneNumber, ring: Ring) -> Outcome {
        if let Some(group) = &ring.group {
            let (found, _) = self.session_group(client_id, group).await?;
            if found.member(from.as_str()).is_none() {
                return Err(ApiError::conflict(format!("{from} is not a member")));
            }
        }
        let id = MessageId::new(ring.call_id.clone())
            .ok_or_else(|| ApiError::bad_request("callId is required"))?;
        let contact = self
            .store()
            .upsert_phone(from.as_str(), PhonePatch::default())
            .await?;
        if ring.group.is_none() {
            self.calls_let_through(client_id, &contact).await?;
        }
        let caller = lid_jid(&contact.lid)?;
        let content = Content::Call(CallNotice {
            call: CallRef {
                id: ring.call_id,
                peer: caller.clone(),
                creator: caller,
            },
            phase: ring.phase,
            video: ring.video,
            group: ring.group,
            rejected: false,
        });
        self.notice(client_id, from, id, content).await
    }

    /// Refuses (error 463, as the network nacks the offer) a call from
    /// `caller` to a session's account that takes calls from its contacts
    /// only, when the account never wrote to `caller`.
    async fn calls_let_through(
        &self,
        client_id: &str,
        caller: &SandboxPhone,
    ) -> Result<(), ApiError> {
        let me = self.linked_phone(client_id).await?;
        let store = self.store();
        let restricted = store
            .phone(&me)
            .await?
            .is_some_and(|own| own.call_privacy == CONTACTS);
        if !restricted || caller.phone == me || store.wrote_to(&me, caller).await? {
            return Ok(());
        }
        Err(ApiError::conflict(format!(
            "error 463: the session's account takes calls from its contacts only, and {} holds no privacy token from it (the account never wrote to it)",
            caller.phone
        )))
    }

    /// The contact `from` comes online (`available`) or goes offline, last
    /// seen now: the session's connection hears it when it subscribed to
    /// `from`'s presence (`presence`).
    pub(super) async fn presence(
        &self,
        client_id: &str,
        from: &PhoneNumber,
        available: bool,
    ) -> Outcome {
        let notice = self.presence_notice(from, available).await?;
        self.emit_linked(client_id, notice, Some(from)).await
    }

    /// `from` comes online or goes offline (last seen now), as a
    /// subscriber hears it.
    pub(super) async fn presence_notice(
        &self,
        from: &PhoneNumber,
        available: bool,
    ) -> Result<InboundMessage, ApiError> {
        let contact = self
            .store()
            .upsert_phone(from.as_str(), PhonePatch::default())
            .await?;
        let content = Content::Presence {
            available,
            last_seen: (!available).then(Utc::now),
        };
        let mut notice = notice(new_chat_state_id(), from, lid_jid(&contact.lid)?, content);
        notice.chat_lid = contact.lid.clone();
        Ok(notice)
    }

    /// The member `from` tells the group's members `content`: the network
    /// relays it only between members of the group.
    async fn group_notice(
        &self,
        client_id: &str,
        from: &PhoneNumber,
        group: &Jid,
        id: MessageId,
        content: Content,
    ) -> Outcome {
        let (found, _) = self.session_group(client_id, group).await?;
        if found.member(from.as_str()).is_none() {
            return Err(ApiError::conflict(format!("{from} is not a member")));
        }
        let contact = self
            .store()
            .upsert_phone(from.as_str(), PhonePatch::default())
            .await?;
        let mut notice = notice(id, from, lid_jid(&contact.lid)?, content);
        notice.chat = group.clone();
        notice.group_subject = Some(found.subject.clone());
        self.emit_linked(client_id, notice, None).await
    }

    /// The contact `from` tells the session's device `content` in their chat.
    async fn notice(
        &self,
        client_id: &str,
        from: &PhoneNumber,
        id: MessageId,
        content: Content,
    ) -> Outcome {
        self.linked_phone(client_id).await?;
        let contact = self
            .store()
            .upsert_phone(from.as_str(), PhonePatch::default())
            .await?;
        let mut notice = notice(id, from, lid_jid(&contact.lid)?, content);
        notice.chat_lid = contact.lid.clone();
        self.emit_linked(client_id, notice, None).await
    }

    /// Hands the session's device `notice` (only if its connection
    /// subscribed to `watched`'s presence, when given); 409 unless it is
    /// linked.
    pub(super) async fn emit_linked(
        &self,
        client_id: &str,
        notice: InboundMessage,
        watched: Option<&PhoneNumber>,
    ) -> Outcome {
        let live = self
            .live(client_id)
            .ok_or_else(|| ApiError::unavailable("the session is reconnecting"))?;
        let state = live.state().await;
        if !matches!(state.phase, Phase::Linked) {
            return Err(ApiError::conflict("session is not connected"));
        }
        if watched.is_none_or(|p| state.watching.contains(p.as_str())) {
            state.emit(NetworkEvent::Message(Box::new(notice))).await;
        }
        Ok(Reply::Done)
    }
}

/// A call's signalling from a contact, as the sandbox's controls ask it.
pub(super) struct Ring {
    pub call_id: String,
    pub phase: CallPhase,
    pub video: bool,
    pub group: Option<Jid>,
}

/// `content` from the contact `from` (`sender`, its LID JID), in their chat.
fn notice(id: MessageId, from: &PhoneNumber, sender: Jid, content: Content) -> InboundMessage {
    InboundMessage {
        sender_phone: Some(from.to_string()),
        ..InboundMessage::notice(id, sender.clone(), sender, content)
    }
}
