//! Contacts' presence (online, offline, last seen). The network sends a
//! contact's presence only to a device that subscribed to it, and lets the
//! subscription through only with the privacy token the contact issued the
//! account (whatsapp-rust's `presence().subscribe` attaches it); a
//! subscription lasts as long as the connection. Each update is an activity
//! of its own kind, which only sessions that turned it on deliver; the
//! network gives it no id, so each gets a fresh one.
use whatsapp_rust::types::events::PresenceUpdate;

use super::connection::LiveConnection;
use super::errors::{failed, jid, port_jid, ready};
use parley_model::inbound::{Content, InboundMessage};
use parley_network::outgoing::new_chat_state_id;
use parley_network::{Jid, NetworkError};

impl LiveConnection {
    /// Subscribes to `who`'s presence.
    pub async fn presence_of(&self, who: &Jid) -> Result<(), NetworkError> {
        ready(&self.client).await?;
        let to = jid(who.as_str())?;
        self.client
            .presence()
            .subscribe(to)
            .await
            .map_err(|e| failed(&self.client, "presence subscription", e))
    }

    /// Says the account is online or offline. whatsapp-rust says online by
    /// itself at every login, once the account's name is known (it refuses
    /// presence without one).
    pub async fn announce_presence(&self, available: bool) -> Result<(), NetworkError> {
        ready(&self.client).await?;
        let presence = self.client.presence();
        let set = if available {
            presence.set_available().await
        } else {
            presence.set_unavailable().await
        };
        set.map_err(|e| failed(&self.client, "presence", e))
    }
}

/// What `update` says of a contact (`chat_lid` its LID user-part, `phone`
/// its number when known).
pub fn presence(
    update: &PresenceUpdate,
    chat_lid: String,
    phone: Option<String>,
) -> Option<InboundMessage> {
    let who = port_jid(&update.from.to_non_ad()).ok()?;
    let content = Content::Presence {
        available: !update.unavailable,
        last_seen: update.last_seen,
    };
    Some(InboundMessage {
        chat_lid,
        sender_phone: phone,
        ..InboundMessage::notice(new_chat_state_id(), who.clone(), who, content)
    })
}
