//! The way of an event inside a worker: network message -> resolved extras (poll
//! options) -> normalized envelope -> the session's webhook queue.
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use parley_shared::egress::Egress;
use tokio::sync::watch;

use super::{Extras, LOOKUP_BUDGET, PollLookup, SessionFacts, normalize};
use crate::network::inbound::{Content, InboundMessage};
use crate::webhook::{Delivery, Dispatcher, RetryPolicy, SessionQueue, Target};

/// Polls seen by this worker (sent through the API or received), so votes resolve
/// without asking anyone; bounded, oldest forgotten first.
#[derive(Default)]
pub struct PollBook {
    inner: Mutex<Polls>,
}

#[derive(Default)]
struct Polls {
    options: HashMap<String, Vec<String>>,
    order: VecDeque<String>,
}

const POLLS_REMEMBERED: usize = 10_000;

impl PollBook {
    pub fn remember(&self, poll_message_id: &str, options: &[String]) {
        let mut polls = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let fresh = polls
            .options
            .insert(poll_message_id.to_string(), options.to_vec())
            .is_none();
        if fresh {
            polls.order.push_back(poll_message_id.to_string());
            if polls.order.len() > POLLS_REMEMBERED
                && let Some(old) = polls.order.pop_front()
            {
                polls.options.remove(&old);
            }
        }
    }

    pub fn options(&self, poll_message_id: &str) -> Option<Vec<String>> {
        let polls = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        polls.options.get(poll_message_id).cloned()
    }
}

/// Shared by every session of a worker.
pub struct EventPipeline {
    pub dispatcher: Arc<Dispatcher>,
    pub lookup: PollLookup,
    pub polls: PollBook,
}

/// What one session needs to emit events; lives as long as the session runs.
pub struct SessionEvents {
    pub target: watch::Sender<Target>,
    pub queue: SessionQueue,
    /// Also the poll lookup's address.
    pub poll_lookup_url: String,
}

impl EventPipeline {
    pub fn new(egress: Egress, policy: RetryPolicy) -> Arc<EventPipeline> {
        Arc::new(EventPipeline {
            dispatcher: Dispatcher::new(egress, policy),
            lookup: PollLookup::new(egress, LOOKUP_BUDGET),
            polls: PollBook::default(),
        })
    }

    pub fn open(&self, client_id: &str, target: Target, poll_lookup_url: String) -> SessionEvents {
        let (tx, rx) = watch::channel(target);
        SessionEvents {
            queue: self.dispatcher.session(client_id, rx),
            target: tx,
            poll_lookup_url,
        }
    }

    /// Normalizes one message and queues its event (or drops it per the filters).
    /// May call the customer's poll lookup (bounded by its 8 s budget): run it off
    /// the session's hot loop.
    pub async fn emit(
        &self,
        facts: &SessionFacts,
        session: &SessionEvents,
        msg: &InboundMessage,
        meta: Option<serde_json::Value>,
    ) {
        let mut extras = Extras {
            meta,
            remote_name: msg.push_name.clone(),
            ..Extras::default()
        };
        if !msg.is_group() && !msg.from_me {
            extras.remote_phone = msg.sender_phone.clone().unwrap_or_default();
        }
        match &msg.content {
            Content::Poll { options, .. } => self.polls.remember(&msg.id, options),
            Content::Vote {
                poll_message_id, ..
            } => {
                extras.poll_options = match self.polls.options(poll_message_id) {
                    Some(options) => Some(options),
                    None => {
                        let token = session.target.borrow().token.clone();
                        let room = chat_room_id(facts, msg);
                        self.lookup
                            .options(
                                &session.poll_lookup_url,
                                &token,
                                &facts.client_id,
                                &room,
                                poll_message_id,
                            )
                            .await
                    }
                };
            }
            _ => {}
        }
        let Some(envelope) = normalize(facts, msg, &extras) else {
            return;
        };
        let body = match serde_json::to_vec(&envelope) {
            Ok(body) => Bytes::from(body),
            Err(e) => {
                tracing::error!(client_id = %facts.client_id, error = %e, "cannot serialize an event");
                return;
            }
        };
        let id = format!("msg_{}_{}", facts.client_id, msg.id);
        session.queue.enqueue(Delivery {
            id,
            kind: envelope.kind,
            body,
        });
    }
}

fn chat_room_id(facts: &SessionFacts, msg: &InboundMessage) -> String {
    let other = if msg.is_group() {
        crate::network::inbound::user_part(&msg.chat).to_string()
    } else {
        msg.chat_lid.clone()
    };
    format!("{}-{}-{}", facts.client_id, facts.my_lid, other)
}
