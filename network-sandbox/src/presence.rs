//! Contacts' presence on the simulated network. A connection subscribes to
//! a contact's presence (`Connection::subscribe_presence`); the network
//! lets the subscription through only when the contact issued the
//! session's phone a privacy token (it wrote to it), as the real network
//! asks the subscription for that token, and otherwise ignores it. A
//! subscription lasts as long as the connection. `POST /sandbox/presence`
//! has the contact come online or go offline: each connection that
//! subscribed hears it, an activity of its own kind that only sessions that
//! turned it on deliver.
use chrono::Utc;
use parley_contract::command::{Outcome, Reply};
use parley_contract::error::ApiError;
use parley_model::inbound::Content;
use parley_network::outgoing::new_chat_state_id;
use parley_network::{Jid, NetworkError, NetworkEvent, PhoneNumber};

use super::connection::SandboxConnection;
use super::inbound::lid_jid;
use super::live::Phase;
use super::{SandboxNetwork, unreachable};
use crate::store::PhonePatch;

impl SandboxConnection {
    /// Subscribes to `who`'s presence, if `who` issued the session's phone
    /// a token.
    pub(super) async fn watch_presence(&self, who: &Jid) -> Result<(), NetworkError> {
        let me = self.own_phone().await?;
        let Some(contact) = self.registered(who).await? else {
            return Ok(());
        };
        let store = self.network().store();
        if store
            .holds_token(&contact.phone, &me)
            .await
            .map_err(unreachable)?
        {
            let mut state = self.live().state().await;
            state.watching.insert(contact.phone);
        }
        Ok(())
    }
}

impl SandboxNetwork {
    /// The contact `from` comes online (`available`) or goes offline: the
    /// session's connection hears it when it subscribed.
    pub(super) async fn presence(
        &self,
        client_id: &str,
        from: &PhoneNumber,
        available: bool,
    ) -> Outcome {
        let contact = self
            .store()
            .upsert_phone(from.as_str(), PhonePatch::default())
            .await?;
        let live = self
            .live(client_id)
            .ok_or_else(|| ApiError::unavailable("the session is reconnecting"))?;
        let state = live.state().await;
        if !matches!(state.phase, Phase::Linked) {
            return Err(ApiError::conflict("session is not connected"));
        }
        if !state.watching.contains(from.as_str()) {
            return Ok(Reply::Done);
        }
        let sender = lid_jid(&contact.lid)?;
        let now = Utc::now();
        let notice = parley_model::inbound::InboundMessage {
            id: new_chat_state_id(),
            chat: sender.clone(),
            chat_lid: contact.lid.clone(),
            sender,
            sender_phone: Some(contact.phone.clone()),
            from_me: false,
            push_name: String::new(),
            group_subject: None,
            timestamp: now,
            content: Content::Presence {
                available,
                last_seen: (!available).then_some(now),
            },
            quoted: None,
            mentions: Vec::new(),
            is_forwarded: false,
        };
        state.emit(NetworkEvent::Message(Box::new(notice))).await;
        Ok(Reply::Done)
    }
}
