//! Contacts' presence on the simulated network. A connection subscribes to
//! a contact's presence (`Connection::subscribe_presence`); the network
//! lets the subscription through only when the contact issued the
//! session's phone a privacy token (it wrote to it), as the real network
//! asks the subscription for that token, and otherwise ignores it. A
//! subscription lasts as long as the connection. `POST /sandbox/presence`
//! has the contact come online or go offline (`notices`): a connection
//! that subscribed hears it, an activity of its own kind that only
//! sessions that turned it on deliver.
use parley_network::{Jid, NetworkError};

use super::connection::SandboxConnection;

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
