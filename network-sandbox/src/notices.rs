//! `POST /sandbox/receipts` on the network side: a contact's phone says it
//! received, read or played messages the session sent it, and the session's
//! device hears it, as the network relays a `<receipt>`: an inbound activity
//! of its own kind, which only sessions that turned it on deliver. The
//! network does not check that the messages exist; the simulated one sends
//! no receipts by itself (the real one's phones send a delivery receipt for
//! every message they get).
use chrono::Utc;
use parley_contract::command::{Outcome, Reply};
use parley_contract::error::ApiError;
use parley_model::inbound::{Content, InboundMessage, ReceiptStatus};
use parley_network::{MessageId, NetworkEvent, PhoneNumber};

use super::SandboxNetwork;
use super::inbound::lid_jid;
use super::live::Phase;
use crate::store::PhonePatch;

impl SandboxNetwork {
    pub(super) async fn receipt(
        &self,
        client_id: &str,
        from: &PhoneNumber,
        status: ReceiptStatus,
        message_ids: Vec<MessageId>,
    ) -> Outcome {
        self.linked_phone(client_id).await?;
        let contact = self
            .store()
            .upsert_phone(from.as_str(), PhonePatch::default())
            .await?;
        let sender = lid_jid(&contact.lid)?;
        let first = message_ids
            .first()
            .cloned()
            .ok_or_else(|| ApiError::bad_request("messageIds is empty"))?;
        let receipt = InboundMessage {
            id: first,
            chat: sender.clone(),
            chat_lid: contact.lid.clone(),
            sender,
            sender_phone: Some(from.to_string()),
            from_me: false,
            push_name: String::new(),
            group_subject: None,
            timestamp: Utc::now(),
            content: Content::Receipt {
                status,
                message_ids,
            },
            quoted: None,
            mentions: Vec::new(),
            is_forwarded: false,
        };
        let live = self
            .live(client_id)
            .ok_or_else(|| ApiError::unavailable("the session is reconnecting"))?;
        let state = live.state().await;
        if !matches!(state.phase, Phase::Linked) {
            return Err(ApiError::conflict("session is not connected"));
        }
        state.emit(NetworkEvent::Message(Box::new(receipt))).await;
        Ok(Reply::Done)
    }
}
