//! At-least-once reception: whatsapp-rust's inbound durability hook holds a
//! received message's acknowledgement to the network until the session
//! answers that its event is in the log (`Connection::persisted`). A message
//! whose event could not be written is not acknowledged, so the network
//! delivers it again; the library keeps its decrypted copy in the device
//! store's pending inbound buffer meanwhile (held in memory, and written
//! before the keys that decrypted it are saved: `store::held`), so the
//! redelivery (which can no longer be decrypted) is replayed from it. The
//! connection also hands such a message to the session again itself, with a
//! growing wait, until its event is logged, rather than leave it to a
//! redelivery at the next login.
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::{anyhow, bail};
use tokio::sync::oneshot;
use whatsapp_rust::Client;
use whatsapp_rust::InboundDurabilityHook;
use whatsapp_rust::types::events::InboundMessage as LibMessage;

use super::inbound::Pump;
use parley_network::{Jid, MessageId, NetworkEvent};

/// How long the hook waits for the session's answer; past it the message is
/// left unacknowledged (the network delivers it again).
const PERSIST_WAIT: Duration = Duration::from_secs(30);

/// The first and the longest wait before a message whose event was not
/// logged is handed to the session again.
const REPLAY_FIRST: Duration = Duration::from_secs(1);
const REPLAY_LAST: Duration = Duration::from_secs(16);

type Answer = Result<(), String>;

/// A message as the port names it: its chat and id.
type Key = (String, String);

/// The answers awaited, by message.
#[derive(Clone, Default)]
pub(super) struct Acks(Arc<Mutex<HashMap<Key, oneshot::Sender<Answer>>>>);

impl Acks {
    fn expect(&self, chat: &Jid, id: &MessageId) -> oneshot::Receiver<Answer> {
        let (tx, rx) = oneshot::channel();
        let key = (chat.to_string(), id.to_string());
        // The same message again (a redelivery) replaces the older wait,
        // which then ends unanswered: not acknowledged.
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, tx);
        rx
    }

    /// The session's answer for one message.
    pub(super) fn answer(&self, chat: &Jid, id: &MessageId, outcome: Answer) {
        let key = (chat.to_string(), id.to_string());
        let waiting = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key);
        if let Some(tx) = waiting {
            let _ = tx.send(outcome);
        }
    }
}

/// The hook: converts each message as the event pump does, hands it to the
/// session, and lets the library acknowledge the batch once every message's
/// event is logged.
pub(super) struct Durable {
    pub pump: Hooked,
    pub acks: Acks,
}

/// The pump the hook hands messages to: set once the client is built,
/// before it connects, and taken away when its run ends (the client holds
/// the hook and the pump holds the client: the cycle must not outlive the
/// connection, nor keep the session's event channel open).
#[derive(Clone, Default)]
pub(super) struct Hooked(Arc<Mutex<Option<Pump>>>);

impl Hooked {
    pub fn set(&self, pump: Option<Pump>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = pump;
    }

    fn get(&self) -> Option<Pump> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[async_trait::async_trait]
impl InboundDurabilityHook for Durable {
    async fn on_messages(&self, _client: Arc<Client>, batch: &[LibMessage]) -> anyhow::Result<()> {
        let Some(pump) = self.pump.get() else {
            bail!("the session is not listening");
        };
        let mut waiting = Vec::new();
        for msg in batch {
            // A message the port does not carry needs no answer.
            let Some(event) = pump.message(msg).await else {
                continue;
            };
            if let NetworkEvent::Message(m) = &event {
                waiting.push((self.acks.expect(&m.chat, &m.id), event.clone()));
            }
            pump.out
                .send(event)
                .await
                .map_err(|_| anyhow!("the session stopped listening"))?;
        }
        let mut failure = None;
        for (answer, event) in waiting {
            if let Err(why) = logged(answer).await {
                tokio::spawn(replay(self.pump.clone(), self.acks.clone(), event));
                failure.get_or_insert(why);
            }
        }
        match failure {
            // None of the batch is acknowledged.
            Some(why) => Err(anyhow!(why)),
            None => Ok(()),
        }
    }
}

/// Waits for the session's answer for one message: whether its event is logged.
async fn logged(answer: oneshot::Receiver<Answer>) -> Result<(), String> {
    match tokio::time::timeout(PERSIST_WAIT, answer).await {
        Ok(Ok(Ok(()))) => Ok(()),
        Ok(Ok(Err(e))) => Err(format!("the message's event was not logged: {e}")),
        Ok(Err(_)) => Err("the session ended before logging the message".into()),
        Err(_) => Err("the message's event was not logged in time".into()),
    }
}

/// Hands `event`, a message whose event was not logged, to the session again
/// while this connection lasts, until it is logged (the log answers a copy it
/// has already as logged). Once the connection ended, the network's
/// redelivery at the next login takes over: replayed from the pending
/// inbound buffer, or decrypted again when the keys it advanced were not
/// saved (nor, then, its buffered copy).
async fn replay(hooked: Hooked, acks: Acks, event: NetworkEvent) {
    let NetworkEvent::Message(message) = &event else {
        return;
    };
    let mut wait = REPLAY_FIRST;
    loop {
        tokio::time::sleep(wait).await;
        let Some(pump) = hooked.get() else { return };
        let answer = acks.expect(&message.chat, &message.id);
        if pump.out.send(event.clone()).await.is_err() {
            return;
        }
        match logged(answer).await {
            Ok(()) => {
                tracing::info!(message_id = %message.id, "a received message's event was logged on a later try");
                return;
            }
            Err(why) => {
                tracing::debug!(message_id = %message.id, %why, "a received message's event is still not logged");
                wait = (wait * 2).min(REPLAY_LAST);
            }
        }
    }
}
