//! History sync: the messages of the account's past that its phone sends a
//! newly linked device go to the hosted inbox, never to the webhook or the
//! event log (they are not news: a backend saw them as they happened, or
//! was not there yet). A session without a hosted inbox keeps none of them.
//! Rows are written as any message's are (idempotent on
//! `(clientId, chatRoomId, messageId)`, so a sync that comes again, or a
//! message that also arrived live, is stored once), without their files,
//! and without counting as unread. The contacts' names a history carries
//! are kept with the session's contacts (whether or not it has a hosted
//! inbox), and name the hosted inbox's direct rooms that have no name.
use std::sync::Arc;

use futures::StreamExt;
use parley_model::ids::ClientId;
use parley_model::inbound::InboundMessage;
use parley_shared::metrics::metrics;

use super::{Activity, EventPipeline, SessionEvents};
use crate::events::{Extras, HistorySink, normalize};
use crate::network::ContactName;

/// History rows written at once (the hosted inbox's writer batches them).
const WRITES_AT_ONCE: usize = 32;

/// What became of one history chunk.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Imported {
    pub stored: usize,
    /// Not kept: no hosted inbox, or a kind it does not store (statuses,
    /// groups while group events are off).
    pub skipped: usize,
    pub failed: usize,
}

impl EventPipeline {
    /// Stores the messages of a history sync in the session's hosted inbox.
    pub async fn import_history(
        &self,
        session: &SessionEvents,
        messages: Vec<InboundMessage>,
    ) -> Imported {
        let settings = session.settings.borrow().clone();
        let facts = &settings.facts;
        let mut done = Imported::default();
        let Some(history) = self.hosted_inbox(session, &facts.org_id) else {
            done.skipped = messages.len();
            count(done);
            tracing::info!(client_id = %facts.client_id, messages = done.skipped,
                "history sync not kept: the session has no hosted inbox");
            return done;
        };
        let envelopes = futures::stream::iter(messages)
            .then(|msg| async {
                let mut activity = Activity {
                    msg,
                    meta: None,
                    file: None,
                    connection: None,
                    stored_type: None,
                    sent: false,
                };
                self.group_subject(facts, &mut activity).await;
                let msg = activity.msg;
                let mut extras = Extras {
                    remote_name: super::remote_name(&msg),
                    ..Extras::default()
                };
                if !msg.is_group() && !msg.from_me {
                    extras.remote_phone = self.remote_phone(facts, &msg).await;
                }
                let mut envelope = normalize(facts, &msg, &extras)?;
                envelope.from_history = true;
                Some(envelope)
            })
            .collect::<Vec<_>>()
            .await;
        let outcomes = futures::stream::iter(envelopes)
            .map(|envelope| async move {
                match envelope {
                    None => None,
                    Some(envelope) => Some(history.write(&envelope, None).await),
                }
            })
            .buffer_unordered(WRITES_AT_ONCE)
            .collect::<Vec<_>>()
            .await;
        for outcome in outcomes {
            match outcome {
                None => done.skipped += 1,
                Some(Ok(_)) => done.stored += 1,
                Some(Err(e)) => {
                    done.failed += 1;
                    tracing::warn!(client_id = %facts.client_id, error = %e,
                        "a history-sync message was not stored");
                }
            }
        }
        if done.stored > 0 {
            // Rooms new in this chunk take the names a chunk before it gave.
            name_rooms(history.as_ref(), &facts.client_id).await;
        }
        count(done);
        tracing::info!(client_id = %facts.client_id, stored = done.stored,
            skipped = done.skipped, failed = done.failed, "history sync imported");
        done
    }

    /// The session's hosted inbox, when it keeps one (an `orgId` and the
    /// hosted webhook).
    fn hosted_inbox(&self, session: &SessionEvents, org_id: &str) -> Option<&Arc<dyn HistorySink>> {
        let url = session.target.borrow().url.clone();
        self.history
            .as_ref()
            .filter(|h| !url.is_empty() && h.enabled_for(org_id, &url))
    }

    /// Keeps the contacts' names of a history sync with the session's
    /// contacts, and names the hosted inbox's unnamed direct rooms after
    /// them. A name that cannot be stored is logged and left out.
    pub async fn import_names(&self, session: &SessionEvents, names: Vec<ContactName>) {
        let settings = session.settings.borrow().clone();
        let facts = &settings.facts;
        let Some(contacts) = &self.contacts else {
            return;
        };
        let mut kept = 0usize;
        for name in names
            .iter()
            .filter(|n| !n.lid.is_empty() && !n.name.is_empty())
        {
            match contacts
                .name(&facts.client_id, &name.lid, &name.phone, &name.name)
                .await
            {
                Ok(()) => kept += 1,
                Err(e) => tracing::warn!(client_id = %facts.client_id, error = %e,
                    "a contact's name was not stored"),
            }
        }
        if let Some(history) = self.hosted_inbox(session, &facts.org_id) {
            name_rooms(history.as_ref(), &facts.client_id).await;
        }
        tracing::info!(client_id = %facts.client_id, names = names.len(), kept,
            "contacts' names of a history sync kept");
    }
}

/// Names the unnamed direct rooms after their contacts (logged, never fatal).
async fn name_rooms(history: &dyn HistorySink, client_id: &ClientId) {
    match history.name_rooms(client_id).await {
        Ok(0) => {}
        Ok(named) => tracing::info!(%client_id, named, "rooms named after their contacts"),
        Err(e) => tracing::warn!(%client_id, error = %e, "rooms not named after their contacts"),
    }
}

fn count(done: Imported) {
    let m = &metrics().history_sync_messages;
    for (outcome, n) in [
        ("stored", done.stored),
        ("skipped", done.skipped),
        ("failed", done.failed),
    ] {
        if n > 0 {
            m.with_label_values(&[outcome]).inc_by(n as u64);
        }
    }
}
