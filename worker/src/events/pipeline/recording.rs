//! An activity's event on its way to the log and the webhook queue: the write
//! queued behind the session's earlier ones, its answer (a sent message's
//! tried again), and the delivery queued in `seq` order.
use std::time::Duration;

use bytes::Bytes;
use parley_contract::event::Envelope;
use parley_shared::bus::{Message, feed_subject};
use parley_shared::db::events::{Appended, DeliveryState, NewEvent};
use parley_shared::db::{DbError, Queued};
use parley_shared::metrics::metrics;

use super::{EventPipeline, Processed, SessionEvents};
use crate::webhook::Delivery;

/// The first and the longest wait between tries of a sent message's log write.
const LOG_RETRY_FIRST: Duration = Duration::from_millis(250);
const LOG_RETRY_LAST: Duration = Duration::from_secs(32);

impl EventPipeline {
    /// Waits for a begun activity's log write (trying a sent message's
    /// again when it failed) and queues its event for the webhook.
    pub async fn finish(&self, session: &SessionEvents, begun: Begun) -> Processed {
        let Writing {
            mut envelope,
            parent,
            state,
            sent,
            mut processed,
            write,
        } = match begun.0 {
            Stage::Done(processed) => return processed,
            Stage::Writing(writing) => *writing,
        };
        let (seq, body) = match self
            .log_retried(session, &mut envelope, state, sent, write)
            .await
        {
            Ok(Logged::New(seq, body)) => (seq, body),
            Ok(Logged::Duplicate) => {
                processed.duplicate = true;
                return processed;
            }
            Err(e) => {
                tracing::warn!(client_id = %envelope.client_id, message_id = %envelope.message_id, error = %e,
                    "an event was not written to the log");
                processed.log_error = Some(e);
                return processed;
            }
        };
        processed.seq = Some(seq).filter(|s| *s > 0);
        if seq > 0 {
            self.announce(&envelope.client_id, seq).await;
        }
        if state != DeliveryState::Pending {
            return processed;
        }
        processed.queued = session.queue.enqueue(Delivery {
            id: envelope.event_id,
            seq,
            attempts: 0,
            requeues: 0,
            kind: envelope.kind,
            body,
            parent,
        });
        processed
    }

    /// Tells the session's live feeds that its log holds `seq` now. At most
    /// once: a feed that misses it reads the log again within its poll.
    async fn announce(&self, client_id: &str, seq: u64) {
        let Some(bus) = &self.feed else { return };
        let message = Message {
            headers: Default::default(),
            payload: Bytes::from(seq.to_string()),
        };
        if let Err(e) = bus.publish(&feed_subject(client_id), message).await {
            tracing::debug!(client_id, seq, error = %e, "a logged event was not announced to live feeds");
        }
    }

    /// The answer of `write` (see [`settle`]), counting failures; an API send's event is tried again
    /// with a growing wait (about a minute in all) before it is given up.
    async fn log_retried(
        &self,
        session: &SessionEvents,
        envelope: &mut Envelope,
        state: DeliveryState,
        sent: bool,
        mut write: Write,
    ) -> Result<Logged, LogFailure> {
        let origin = if sent { "sent" } else { "received" };
        let mut wait = LOG_RETRY_FIRST;
        loop {
            let error = match settle(write, envelope).await {
                Ok(logged) => return Ok(logged),
                Err(e) => e,
            };
            metrics()
                .event_log_failures
                .with_label_values(&[origin, error.reason()])
                .inc();
            match error {
                LogFailure::Full => session.queue.mark_full(),
                LogFailure::StorageFull(_) => {
                    // Sends ask for room before they leave from now on.
                    if let Some(log) = self.dispatcher.log() {
                        log.note_storage_full();
                    }
                }
                LogFailure::FencedOut => {
                    // Never acknowledged (nor retried here): the network hands the
                    // message to the newer owner, which logs it.
                    (session.on_fenced_out)();
                    return Err(error);
                }
                LogFailure::Unavailable(_) => {}
            }
            if !sent || wait > LOG_RETRY_LAST {
                return Err(error);
            }
            tracing::warn!(client_id = %envelope.client_id, error = %error,
                "a sent message's event was not logged; trying again");
            tokio::time::sleep(wait).await;
            wait *= 2;
            write = self.submit(session, envelope, state).await;
        }
    }

    /// Queues the event's write to the session's log in `state`, where it
    /// gets its seq (the body as it will be delivered). Without a log: the
    /// body with seq 0.
    pub(super) async fn submit(
        &self,
        session: &SessionEvents,
        envelope: &Envelope,
        state: DeliveryState,
    ) -> Write {
        let Some(log) = self.dispatcher.log() else {
            return Write::NoLog(Bytes::from(serialize(envelope)));
        };
        let new = NewEvent {
            event_id: &envelope.event_id,
            kind: &envelope.kind,
            state,
            cap: self.session_cap,
        };
        let mut stored = envelope.clone();
        let queued = log
            .enqueue_event(&envelope.client_id, session.fence, new, move |seq| {
                stored.seq = seq;
                serialize(&stored)
            })
            .await;
        match queued {
            Ok(queued) => Write::Queued(queued),
            Err(e) => Write::Failed(LogFailure::Unavailable(e.to_string())),
        }
    }
}

/// Why an event could not be written to the log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogFailure {
    /// The session's cap of undelivered events is reached.
    #[error("the session's event log is full: its webhook receiver is behind")]
    Full,
    #[error("the event log is unavailable: {0}")]
    Unavailable(String),
    /// The database's disk has no room for it.
    #[error("the event log is unavailable: {0}")]
    StorageFull(String),
    /// A newer owner holds the session: this worker may no longer write its log.
    #[error("another worker now owns the session")]
    FencedOut,
}

impl LogFailure {
    /// The `reason` label of its metric.
    pub fn reason(&self) -> &'static str {
        match self {
            LogFailure::Full => "full",
            LogFailure::Unavailable(_) => "unavailable",
            LogFailure::StorageFull(_) => "storage-full",
            LogFailure::FencedOut => "fenced-out",
        }
    }
}

/// An activity past [`EventPipeline::begin`]: its outcome, or its event on
/// its way to the log.
pub struct Begun(pub(super) Stage);

pub(super) enum Stage {
    Done(Processed),
    Writing(Box<Writing>),
}

/// An activity whose event is on its way to the log.
pub(super) struct Writing {
    pub(super) envelope: Envelope,
    /// The span its delivery is traced under (the activity's).
    pub(super) parent: tracing::Span,
    /// How it starts in the log: only a pending one is queued for the webhook.
    pub(super) state: DeliveryState,
    pub(super) sent: bool,
    pub(super) processed: Processed,
    pub(super) write: Write,
}

impl Begun {
    pub(super) fn done(processed: Processed) -> Begun {
        Begun(Stage::Done(processed))
    }
}

/// An event's log write under way.
pub(super) enum Write {
    /// No log: the body with seq 0.
    NoLog(Bytes),
    Queued(Queued<Appended>),
    /// Not even queued.
    Failed(LogFailure),
}

/// Waits for `write`'s answer; `envelope` gets its seq.
async fn settle(write: Write, envelope: &mut Envelope) -> Result<Logged, LogFailure> {
    let appended = match write {
        Write::NoLog(body) => return Ok(Logged::New(0, body)),
        Write::Failed(e) => return Err(e),
        Write::Queued(queued) => queued.answer().await,
    };
    match appended {
        Ok(Appended::Logged(event)) => {
            envelope.seq = event.seq;
            Ok(Logged::New(event.seq, Bytes::from(event.body)))
        }
        Ok(Appended::FencedOut) => {
            tracing::warn!(
                client_id = %envelope.client_id,
                "a newer owner holds the session: event not logged, not acknowledged; stopping"
            );
            Err(LogFailure::FencedOut)
        }
        Ok(Appended::Full) => Err(LogFailure::Full),
        Err(DbError::Conflict(_)) => Ok(Logged::Duplicate),
        Err(e @ DbError::Full(_)) => Err(LogFailure::StorageFull(e.to_string())),
        Err(e) => Err(LogFailure::Unavailable(e.to_string())),
    }
}

/// How writing an event to the log went.
enum Logged {
    /// Written with this seq; the body to deliver.
    New(u64, Bytes),
    /// The log has this event already.
    Duplicate,
}

/// The envelope as delivered. It holds strings, numbers and JSON values only,
/// so it always serializes.
fn serialize(envelope: &Envelope) -> Vec<u8> {
    serde_json::to_vec(envelope).unwrap_or_else(|e| {
        tracing::error!(error = %e, "cannot serialize an event");
        Vec::new()
    })
}
