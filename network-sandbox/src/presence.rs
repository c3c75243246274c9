//! Contacts' presence on the simulated network. A connection subscribes to
//! a contact's presence (`Connection::subscribe_presence`); the network
//! lets the subscription through only when the contact issued the
//! session's phone a privacy token (it wrote to it), as the real network
//! asks the subscription for that token, and otherwise ignores it. A
//! subscription lasts as long as the connection. `POST /sandbox/presence`
//! has the contact come online or go offline (`notices`): a connection
//! that subscribed hears it, an activity of its own kind that only
//! sessions that turned it on deliver. A session's own phone says it is
//! online or offline through `Connection::set_presence` (`sends`): the
//! connections of this process that subscribed to that phone hear it the
//! same way (a cluster's other workers do not: their connections live in
//! their own processes).
use std::sync::Arc;

use parley_network::{Jid, NetworkError, NetworkEvent, PhoneNumber};

use super::SandboxNetwork;
use super::connection::SandboxConnection;
use super::live::{Live, Phase};

impl SandboxConnection {
    /// Subscribes to `who`'s presence, if `who` issued the session's phone
    /// a token.
    pub(super) async fn watch_presence(&self, who: &Jid) -> Result<(), NetworkError> {
        let Some(contact) = self.registered(who).await? else {
            return Ok(());
        };
        if self.holds_token_of(&contact.phone).await? {
            let mut state = self.live().state().await;
            state.watching.insert(contact.phone);
        }
        Ok(())
    }
}

impl SandboxNetwork {
    /// Every connection of this process subscribed to `phone`'s presence
    /// hears that it came online or went offline.
    pub(super) async fn tell_watchers(&self, phone: &PhoneNumber, available: bool) {
        let lives: Vec<Arc<Live>> = self.registry().values().cloned().collect();
        let mut watchers = Vec::new();
        for live in lives {
            if live.state().await.watching.contains(phone.as_str()) {
                watchers.push(live);
            }
        }
        if watchers.is_empty() {
            return;
        }
        let notice = match self.presence_notice(phone, available).await {
            Ok(notice) => notice,
            Err(e) => {
                tracing::warn!(phone = %phone, error = %e.message, "presence not told");
                return;
            }
        };
        for live in watchers {
            let state = live.state().await;
            if matches!(state.phase, Phase::Linked) {
                state
                    .emit(NetworkEvent::Message(Box::new(notice.clone())))
                    .await;
            }
        }
    }
}
