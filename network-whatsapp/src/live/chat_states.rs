//! A contact's chat state (`<chatstate>`: typing, recording a voice note,
//! stopped) as an activity of its own kind, which only sessions that turned
//! it on deliver. The network gives a chat state no id: each gets a fresh
//! one (`parley_network::outgoing::new_chat_state_id`), so no two are taken
//! for one.
use whatsapp_rust::types::events::ChatPresenceUpdate;
use whatsapp_rust::types::presence::{ChatPresence, ChatPresenceMedia};

use super::errors::port_jid;
use crate::convert::inbound::revealed_phone;
use parley_model::inbound::{Content, InboundMessage, TypingState};
use parley_network::outgoing::new_chat_state_id;

/// What `update` says, or `None` for the account's own devices' states.
/// `chat_lid` is the contact's LID in a direct chat (empty in a group).
pub fn typing(update: &ChatPresenceUpdate, chat_lid: String) -> Option<InboundMessage> {
    let src = &update.source;
    if src.is_from_me {
        return None;
    }
    let state = match (update.state, update.media) {
        (ChatPresence::Composing, ChatPresenceMedia::Audio) => TypingState::Recording,
        (ChatPresence::Composing, _) => TypingState::Composing,
        (ChatPresence::Paused, _) => TypingState::Paused,
    };
    let chat = port_jid(&src.chat.to_non_ad()).ok()?;
    let sender = port_jid(&src.sender.to_non_ad()).ok()?;
    Some(InboundMessage {
        chat_lid,
        sender_phone: revealed_phone(src),
        ..InboundMessage::notice(new_chat_state_id(), chat, sender, Content::Typing { state })
    })
}
