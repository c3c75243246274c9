//! The event pump of one connection: the library's events, in order, become
//! port events — connection changes through [`super::lifecycle`], messages
//! through `convert::inbound` with the lookup it needs (the poll secret a vote
//! is encrypted under), a group's new subject as a subject change, a change
//! of its members as an activity of its own kind, a history sync as the
//! messages it holds (`super::history`). (Messages
//! carry no subject: the worker keeps each group's subject in its database
//! and asks for group metadata the first time it sees a group.)
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use whatsapp_rust::Client;
use whatsapp_rust::Jid;
use whatsapp_rust::async_channel::Receiver;
use whatsapp_rust::store::traits::MsgSecretStore;
use whatsapp_rust::types::events::{
    Event, EventHandler, GroupUpdate, InboundMessage as LibMessage, LazyHistorySync,
    PresenceUpdate, Receipt as LibReceipt,
};
use whatsapp_rust::types::presence::ReceiptType;
use whatsapp_rust::wacore::stanza::groups::{GroupNotificationAction, GroupParticipantInfo};
use whatsapp_rust::wacore_binary::JidExt as _;

use super::authors::Authors;
use super::errors::port_jid;
use super::history_names::UnpairedNames;
use super::lifecycle::{identity_of, lifecycle};
use super::server_acks::ServerAcks;
use crate::convert::inbound::{
    Envelope, VoteAddressing, VoteKey, revealed_phone, to_inbound, vote_target,
};
use crate::store::SeaOrmDeviceStore;
use parley_model::inbound::{Content, GroupAction, GroupSetting, InboundMessage, ReceiptStatus};
use parley_network::{DisconnectReason, MessageId, NetworkEvent};

/// Pauses between looks for a poll's secret that is not stored yet (the
/// last look gets none after it): 750 ms in all.
const SECRET_PAUSES: [Duration; 5] = [
    Duration::from_millis(50),
    Duration::from_millis(100),
    Duration::from_millis(200),
    Duration::from_millis(400),
    Duration::ZERO,
];

/// Hands every library event, in order and without blocking the library, to
/// the pump (an unbounded queue: the pump drains it as fast as the session
/// takes events); the server's answers to sent messages go straight to the
/// sends waiting for them.
pub(super) struct Forward {
    events: whatsapp_rust::async_channel::Sender<Arc<Event>>,
    acks: ServerAcks,
}

impl Forward {
    pub fn new(acks: ServerAcks) -> (Forward, Receiver<Arc<Event>>) {
        let (events, rx) = whatsapp_rust::async_channel::unbounded();
        (Forward { events, acks }, rx)
    }
}

impl EventHandler for Forward {
    fn handle_event(&self, event: Arc<Event>) {
        match &*event {
            Event::ServerAck(ack) if ack.class.as_deref() == Some("message") => {
                self.acks.arrived(&ack.id, ack.error.clone());
                return;
            }
            Event::ServerAck(_) => return,
            Event::Disconnected(_) => self.acks.ended(),
            _ => {}
        }
        let _ = self.events.try_send(event);
    }
}

/// What the pump reads besides the events (the durability hook shares it).
#[derive(Clone)]
pub(super) struct Pump {
    pub client: Arc<Client>,
    pub store: SeaOrmDeviceStore,
    pub out: mpsc::Sender<NetworkEvent>,
    /// Authors of received group messages, for reactions and receipts.
    pub authors: Authors,
    /// Contacts' names of the history whose pair is not known yet.
    pub unpaired: UnpairedNames,
}

impl Pump {
    /// Forwards events until `ended` turns true (the library's run loop is
    /// over), then forwards what is still queued and drops the port's sender,
    /// which closes the session's event receiver.
    pub async fn run(mut self, events: Receiver<Arc<Event>>, mut ended: watch::Receiver<bool>) {
        loop {
            let event = tokio::select! {
                biased;
                event = events.recv() => match event {
                    Ok(event) => event,
                    Err(_) => break,
                },
                _ = ended.wait_for(|e| *e) => break,
            };
            if !self.forward(&event).await {
                return;
            }
        }
        while let Ok(event) = events.try_recv() {
            if !self.forward(&event).await {
                return;
            }
        }
    }

    /// `false` once the session stopped listening.
    async fn forward(&mut self, event: &Event) -> bool {
        let converted = match event {
            // The durability hook handed these to the session already.
            Event::Messages(batch) if batch.hook_committed => Vec::new(),
            Event::Messages(batch) => {
                let mut out = Vec::with_capacity(batch.len());
                for msg in batch.iter() {
                    out.extend(self.message(msg).await);
                }
                out
            }
            Event::GroupUpdate(update) => {
                let snapshot = self.client.persistence_manager().get_device_snapshot();
                let own = [snapshot.pn.as_ref(), snapshot.lid.as_ref()];
                group_update(update, &own).into_iter().collect()
            }
            Event::HistorySync(sync) => return self.history(sync).await,
            Event::Receipt(receipt) => self.receipt(receipt).await.into_iter().collect(),
            Event::ChatPresence(update) => {
                // A chat state, which comes at every pause in typing, is no
                // reason to ask the network who a contact is.
                let chat = update.source.chat.to_non_ad();
                let chat_lid = self
                    .direct_chat_lid(&chat, update.source.is_group, false)
                    .await;
                super::chat_states::typing(update, chat_lid)
                    .map(|m| NetworkEvent::Message(Box::new(m)))
                    .into_iter()
                    .collect()
            }
            Event::Presence(update) => self.presence(update).await.into_iter().collect(),
            Event::IncomingCall(call) => {
                let who = call.action.call_creator().to_non_ad();
                let (chat_lid, phone) = self.contact_of(&who).await;
                super::calls::call_notice(call, chat_lid, phone)
                    .map(|m| NetworkEvent::Message(Box::new(m)))
                    .into_iter()
                    .collect()
            }
            Event::LabelEditUpdate(update) => {
                self.own_notice(|own| super::labels::edit_notice(update, own))
            }
            Event::LabelAssociationUpdate(update) => {
                self.own_notice(|own| super::labels::chat_notice(update, own))
            }
            Event::MissedCall(missed) => {
                let (chat_lid, phone) = self.contact_of(&missed.from.to_non_ad()).await;
                super::calls::missed_notice(missed, chat_lid, phone)
                    .map(|m| NetworkEvent::Message(Box::new(m)))
                    .into_iter()
                    .collect()
            }
            Event::LoggedOut(_) => {
                // The device is gone from the network: so is its state, before
                // the session hears of it (its next connect then pairs anew).
                if let Err(e) = self.store.retire().await {
                    tracing::warn!(client_id = self.store.client_id(), error = %e,
                        "the logged-out device's state was not deleted");
                }
                vec![NetworkEvent::Disconnected(DisconnectReason::LoggedOut)]
            }
            other => {
                let client = &self.client;
                let me = || identity_of(&client.persistence_manager().get_device_snapshot());
                let events: Vec<NetworkEvent> = lifecycle(other, me).into_iter().collect();
                if events
                    .iter()
                    .any(|e| matches!(e, NetworkEvent::Connected(_)))
                    && !super::privacy_tokens::has_salt(client)
                {
                    // A device logged in without its account's salt (just
                    // linked, or its first sync was cut short): it is fetched
                    // in the background, not at the first message's 463.
                    let client = Arc::clone(client);
                    tokio::spawn(async move {
                        let wait = super::privacy_tokens::LOGIN_SALT_WAIT;
                        super::privacy_tokens::salt_recovered(&client, wait).await;
                    });
                }
                events
            }
        };
        for event in converted {
            if self.out.send(event).await.is_err() {
                return false;
            }
        }
        true
    }

    /// Hands the session the messages of a history sync, read off the
    /// runtime a chunk at a time (at most two chunks wait), then the
    /// contacts' names it gave and those an earlier one gave whose pair is
    /// known now (`super::history_names`); `false` once the session stopped
    /// listening.
    async fn history(&self, sync: &LazyHistorySync) -> bool {
        let snapshot = self.client.persistence_manager().get_device_snapshot();
        let Some(own) = snapshot.pn.as_ref().map(|j| j.to_non_ad()) else {
            return true;
        };
        let compressed = sync.compressed_bytes().clone();
        let size = sync.decompressed_size();
        let (chunks, mut read) = mpsc::channel(2);
        let reading = tokio::task::spawn_blocking(move || {
            super::history::read(&compressed, size, &own, |chunk| {
                chunks.blocking_send(chunk).is_ok()
            })
        });
        while let Some(chunk) = read.recv().await {
            if self.out.send(NetworkEvent::History(chunk)).await.is_err() {
                return false;
            }
        }
        drop(read);
        let outcome = reading
            .await
            .map_err(|e| e.to_string())
            .and_then(|read| read);
        let names = match outcome {
            Ok(read) => read.names,
            Err(e) => {
                tracing::warn!(client_id = self.store.client_id(), error = %e,
                    "a history sync is not readable (what was read of it is kept)");
                Vec::new()
            }
        };
        let named = self.unpaired.pair(names, self.client.as_ref()).await;
        named.is_empty()
            || self
                .out
                .send(NetworkEvent::ContactNames(named))
                .await
                .is_ok()
    }

    /// A contact's presence the session subscribed to; the account's own
    /// is no news.
    async fn presence(&self, update: &PresenceUpdate) -> Option<NetworkEvent> {
        let who = update.from.to_non_ad();
        let snapshot = self.client.persistence_manager().get_device_snapshot();
        let own = [snapshot.pn.as_ref(), snapshot.lid.as_ref()];
        if own.iter().flatten().any(|me| me.is_same_user_as(&who)) {
            return None;
        }
        let (chat_lid, phone) = self.contact_of(&who).await;
        let message = super::presence::presence(update, chat_lid, phone)?;
        Some(NetworkEvent::Message(Box::new(message)))
    }

    /// The notice `make` makes from the account's own phone JID, as an event.
    fn own_notice(
        &self,
        make: impl FnOnce(&parley_network::Jid) -> Option<InboundMessage>,
    ) -> Vec<NetworkEvent> {
        let snapshot = self.client.persistence_manager().get_device_snapshot();
        let own = snapshot
            .pn
            .as_ref()
            .and_then(|pn| super::errors::port_jid(&pn.to_non_ad()).ok());
        own.as_ref()
            .and_then(make)
            .map(|m| NetworkEvent::Message(Box::new(m)))
            .into_iter()
            .collect()
    }

    /// A contact's LID user-part and phone number, as far as the session's
    /// client knows them (`who` is a user JID of either kind).
    async fn contact_of(&self, who: &Jid) -> (String, Option<String>) {
        match self.client.get_lid_pn_entry(who).await {
            Ok(Some(entry)) => (entry.lid.to_string(), Some(entry.phone_number.to_string())),
            _ if who.is_lid() => (who.user.to_string(), None),
            _ => (String::new(), Some(who.user.to_string())),
        }
    }

    /// A contact's receipt of messages this account sent (delivered, read,
    /// played); the account's own devices' receipts and the protocol's
    /// others (retries, history) are no news.
    async fn receipt(&self, receipt: &LibReceipt) -> Option<NetworkEvent> {
        let status = match receipt.r#type {
            ReceiptType::Delivered => ReceiptStatus::Delivered,
            ReceiptType::Read => ReceiptStatus::Read,
            ReceiptType::Played => ReceiptStatus::Played,
            _ => return None,
        };
        let src = &receipt.source;
        if src.is_from_me || receipt.message_ids.is_empty() {
            return None;
        }
        let chat = src.chat.to_non_ad();
        let sender = src.sender.to_non_ad();
        let chat_lid = self.direct_chat_lid(&chat, src.is_group, true).await;
        let mut ids: Vec<MessageId> = receipt
            .message_ids
            .iter()
            .filter_map(|id| MessageId::new(id.to_string()))
            .collect();
        // The library lists the stanza's own id (the first message the
        // receipt names) after those of its `<list>`: first again here.
        ids.rotate_right(1);
        let (id, chat, sender) = (
            ids.first()?.clone(),
            port_jid(&chat).ok()?,
            port_jid(&sender).ok()?,
        );
        let content = Content::Receipt {
            status,
            message_ids: ids,
        };
        Some(NetworkEvent::Message(Box::new(InboundMessage {
            chat_lid,
            sender_phone: revealed_phone(src),
            timestamp: receipt.timestamp,
            ..InboundMessage::notice(id, chat, sender, content)
        })))
    }

    pub(super) async fn message(&self, msg: &LibMessage) -> Option<NetworkEvent> {
        let info = &msg.info;
        if info.source.is_group && !info.source.is_from_me {
            let author = info.source.sender.to_non_ad().to_string();
            self.authors
                .note(&info.source.chat.to_string(), &info.id, &author);
        }
        let mut envelope = match Envelope::from_info(info, None) {
            Ok(envelope) => envelope,
            Err(e) => {
                tracing::warn!(client_id = self.store.client_id(), error = %e, "a received message is not readable");
                return None;
            }
        };
        if envelope.chat_lid.is_empty() && info.source.chat.is_pn() {
            // A chat named by phone only (the linked phone writing to a new
            // contact, say): the contact's LID names its room, as it does for
            // the chat's other messages.
            envelope.chat_lid = self.chat_lid(&info.source.chat).await;
        }
        let voter = info.source.sender.to_non_ad().to_string();
        let vote = match vote_target(&msg.message, &voter) {
            Some(target) => {
                self.vote_key(
                    &info.source.chat,
                    &voter,
                    &target.poll_id,
                    &target.poll_creator,
                )
                .await
            }
            None => None,
        };
        match to_inbound(&msg.message, &envelope, vote.as_ref()) {
            Ok(Some(inbound)) => Some(NetworkEvent::Message(Box::new(inbound))),
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(client_id = self.store.client_id(), message_id = %info.id, error = %e, "a received message is not readable");
                None
            }
        }
    }

    /// The secret and addressing a vote on `poll_id` by `voter` decrypts with:
    /// the secret stored under the poll creator's phone or LID identity.
    async fn vote_key(
        &self,
        chat: &Jid,
        voter: &str,
        poll_id: &str,
        creator: &str,
    ) -> Option<VoteKey> {
        let chat = chat.to_non_ad().to_string();
        // A poll sent to a phone number may be voted on from the contact's
        // LID (and back): its secret is kept under the chat it was sent to.
        let chat_alt = self.other_identity(&chat).await;
        let creator_alt = self.other_identity(creator).await;
        let voter_alt = self.other_identity(voter).await;
        // whatsapp-rust writes the secret of a poll it just sent behind the
        // send (a write-behind buffer), so a vote that comes at once may beat
        // it to the store: look again a few times, under a second in all.
        let mut secret = None;
        for pause in SECRET_PAUSES {
            secret = self
                .find_secret(
                    &chat,
                    chat_alt.as_deref(),
                    creator,
                    creator_alt.as_deref(),
                    poll_id,
                )
                .await;
            if secret.is_some() {
                break;
            }
            tokio::time::sleep(pause).await;
        }
        let (addressing, alternate) = vote_addressing(
            (creator, creator_alt.as_deref()),
            (voter, voter_alt.as_deref()),
        );
        Some(VoteKey {
            secret: secret?,
            addressing,
            alternate,
        })
    }

    /// The stored secret of poll `poll_id`, under the chat and creator as
    /// named or in their other identity.
    async fn find_secret(
        &self,
        chat: &str,
        chat_alt: Option<&str>,
        creator: &str,
        creator_alt: Option<&str>,
        poll_id: &str,
    ) -> Option<Vec<u8>> {
        for chat in std::iter::once(chat).chain(chat_alt) {
            for sender in std::iter::once(creator).chain(creator_alt) {
                match self.store.get_msg_secret(chat, sender, poll_id).await {
                    Ok(Some(found)) => return Some(found),
                    Ok(None) => {}
                    Err(e) => tracing::warn!(poll_id, error = %e, "cannot read a poll secret"),
                }
            }
        }
        None
    }

    /// The contact's LID of a direct chat (empty for a group's); of a chat
    /// named by phone number, from the session's LID store, and if it has
    /// none and `ask_network`, from the network.
    async fn direct_chat_lid(&self, chat: &Jid, is_group: bool, ask_network: bool) -> String {
        if is_group || chat.is_group() {
            String::new()
        } else if chat.is_lid() {
            chat.user.to_string()
        } else if ask_network {
            self.chat_lid(chat).await
        } else {
            match self.client.get_lid_pn_entry(chat).await {
                Ok(Some(entry)) => entry.lid.to_string(),
                _ => String::new(),
            }
        }
    }

    /// The LID user-part of the account of phone JID `chat` (empty when
    /// nobody registered it, or the lookup failed: said in the log).
    async fn chat_lid(&self, chat: &Jid) -> String {
        match super::lid_lookup::lid_of(&self.client, &chat.to_non_ad()).await {
            Ok(lid) => lid.unwrap_or_default(),
            Err(e) => {
                tracing::warn!(client_id = self.store.client_id(), error = %e,
                    "the LID of a chat named by phone is unknown; its room has none");
                String::new()
            }
        }
    }

    /// `jid` in the other namespace (LID for a phone JID and back), when known.
    async fn other_identity(&self, jid: &str) -> Option<String> {
        let parsed: Jid = jid.parse().ok()?;
        let entry = self.client.get_lid_pn_entry(&parsed).await.ok()??;
        let other = if parsed.is_lid() {
            format!("{}@s.whatsapp.net", entry.phone_number)
        } else {
            format!("{}@lid", entry.lid)
        };
        Some(other)
    }
}

/// The creator and voter identities a vote's key is derived from: both in
/// the namespace the creator is named in (a voter names the creator as it saw
/// the poll and signs as itself in the same namespace), then both in the
/// other one when the two are known there. Each side is `(as named, the
/// other identity when known)`.
pub(crate) fn vote_addressing(
    creator: (&str, Option<&str>),
    voter: (&str, Option<&str>),
) -> (VoteAddressing, Option<VoteAddressing>) {
    let is_lid = |jid: &str| jid.ends_with("@lid");
    let pick = |(named, other): (&str, Option<&str>), lid: bool| {
        if is_lid(named) == lid {
            Some(named.to_string())
        } else {
            other.filter(|o| is_lid(o) == lid).map(str::to_string)
        }
    };
    let both = |lid: bool| {
        Some(VoteAddressing {
            poll_creator: pick(creator, lid)?,
            voter: pick(voter, lid)?,
        })
    };
    let lid = is_lid(creator.0);
    let primary = both(lid).unwrap_or_else(|| VoteAddressing {
        poll_creator: creator.0.to_string(),
        voter: voter.0.to_string(),
    });
    (primary, both(!lid))
}

/// A change of a group's members or of its subject, description or settings
/// (a message of its own content, which only sessions that turned it on
/// deliver; a new subject names the group for every session), from the
/// network's group notification; `own` are the account's JIDs (a change this
/// account made is `from_me`).
fn group_update(update: &GroupUpdate, own: &[Option<&Jid>]) -> Option<NetworkEvent> {
    let group = port_jid(&update.group_jid.to_non_ad()).ok()?;
    let members = |action, participants: &[GroupParticipantInfo]| Content::GroupChange {
        action,
        participants: participants
            .iter()
            .filter_map(|p| port_jid(&p.jid.to_non_ad()).ok())
            .collect(),
    };
    let content = match &update.action {
        GroupNotificationAction::Add { participants, .. } => {
            members(GroupAction::Add, participants)
        }
        GroupNotificationAction::Remove { participants, .. } => {
            members(GroupAction::Remove, participants)
        }
        GroupNotificationAction::Promote { participants } => {
            members(GroupAction::Promote, participants)
        }
        GroupNotificationAction::Demote { participants } => {
            members(GroupAction::Demote, participants)
        }
        GroupNotificationAction::Subject { subject, .. } => {
            Content::GroupUpdate(GroupSetting::Subject(subject.clone()))
        }
        GroupNotificationAction::Description { description, .. } => Content::GroupUpdate(
            GroupSetting::Description(description.clone().unwrap_or_default()),
        ),
        GroupNotificationAction::Announce => Content::GroupUpdate(GroupSetting::Announce(true)),
        GroupNotificationAction::NotAnnounce => Content::GroupUpdate(GroupSetting::Announce(false)),
        GroupNotificationAction::Locked { .. } => Content::GroupUpdate(GroupSetting::Locked(true)),
        GroupNotificationAction::Unlocked => Content::GroupUpdate(GroupSetting::Locked(false)),
        GroupNotificationAction::Ephemeral { expiration, .. } => {
            Content::GroupUpdate(GroupSetting::Ephemeral(*expiration))
        }
        _ => return None,
    };
    let by = update.participant.as_ref().map(|p| p.to_non_ad());
    let from_me = by
        .as_ref()
        .is_some_and(|b| own.iter().flatten().any(|o| o.is_same_user_as(b)));
    // One event per action of a notification: its id and the action's place.
    let id = format!(
        "{}-{}",
        update.notification_id.as_deref()?,
        update.action_index
    );
    let sender = match &by {
        Some(b) => port_jid(b).ok()?,
        None => group.clone(),
    };
    Some(NetworkEvent::Message(Box::new(InboundMessage {
        sender_phone: update.participant_pn.as_ref().map(|p| p.user.to_string()),
        from_me,
        push_name: update.notify.clone().unwrap_or_default(),
        timestamp: update.timestamp,
        ..InboundMessage::notice(MessageId::new(id)?, group, sender, content)
    })))
}
