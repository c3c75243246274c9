//! The way of an event inside a worker: network message -> resolved extras (poll
//! options) -> normalized envelope -> the session's webhook queue. Here what
//! a pipeline and an activity are, and the way to the log write; `enrich`
//! finds what the message does not carry (a group's subject, a contact's
//! phone, a poll's options, a reply's preview, a file), `recording` writes
//! the event to the log and queues it for the webhook, `import` stores a
//! history sync in the hosted inbox.
mod enrich;
mod import;
mod recording;

pub use import::Imported;
pub use recording::{Begun, LogFailure};
use recording::{Stage, Writing};

use std::sync::Arc;

use parley_model::ids::ClientId;
use parley_shared::bus::Bus;
use parley_shared::db::Db;
use parley_shared::db::events::DeliveryState;
use parley_shared::egress::{Egress, EgressError};
use tokio::sync::watch;

use super::contacts::ContactBook;
use super::groups::GroupBook;
use super::history::{FileBytes, HistorySink};
use super::{Extras, LOOKUP_BUDGET, PollLookup, SessionFacts, normalize};
use crate::network::Connection;
use crate::query::room_avatars::{Avatars, RoomRef};
use crate::webhook::{Dispatcher, DropReason, RetryPolicy, SessionQueue, Target};
use enrich::{file_of, fill_quoted};
use parley_model::inbound::{Content, InboundMessage};

/// Received messages of one session whose events are queued for the log
/// and not yet committed: a session begins its next message while these
/// commit (the log writes a session's events in the order queued).
pub const APPENDS_IN_FLIGHT: usize = 64;

/// The event log a pipeline writes to.
#[derive(Clone)]
pub struct EventLog {
    pub db: Db,
    /// Undelivered events a session may have before new ones are refused.
    pub session_cap: u64,
    /// Where each logged event's `seq` is announced for the session's live
    /// feeds (`feed_subject`); `None` announces nothing.
    pub feed: Option<Arc<dyn Bus>>,
}

/// Shared by every session of a worker.
pub struct EventPipeline {
    pub dispatcher: Arc<Dispatcher>,
    /// See [`EventLog::session_cap`].
    session_cap: u64,
    /// See [`EventLog::feed`].
    feed: Option<Arc<dyn Bus>>,
    pub lookup: PollLookup,
    /// The hosted inbox, when this deployment has one.
    pub history: Option<Arc<dyn HistorySink>>,
    /// The LID <-> phone mapping (absent in benchmarks without a database).
    pub contacts: Option<ContactBook>,
    /// Group subjects (absent in benchmarks without a database).
    pub groups: Option<GroupBook>,
    /// The hosted inbox's room avatars (with `history`).
    pub avatars: Option<Arc<Avatars>>,
}

/// What a session's events depend on; replaced when its settings change.
#[derive(Debug, Clone)]
pub struct SessionSettings {
    pub facts: SessionFacts,
    pub poll_lookup_url: String,
    /// The event types its webhook takes (`/set-webhook-types`); empty:
    /// every type.
    pub webhook_types: Vec<String>,
}

impl SessionSettings {
    /// How an event of type `kind` starts in the log: pending when the
    /// session has a webhook (`pushed`) that takes its type.
    fn state_of(&self, pushed: bool, kind: &str) -> DeliveryState {
        if !pushed {
            DeliveryState::None
        } else if self.webhook_types.is_empty() || self.webhook_types.iter().any(|t| t == kind) {
            DeliveryState::Pending
        } else {
            DeliveryState::NotSelected
        }
    }
}

/// What one session needs to emit events; lives as long as the session runs.
pub struct SessionEvents {
    /// The owner's lease fence: a fenced-out owner cannot append to the log.
    pub fence: u64,
    /// Called at the first append a newer owner's fence refuses: the session
    /// must stop serving at once (its connection too), as when its lease is lost.
    pub on_fenced_out: OnFencedOut,
    pub target: watch::Sender<Target>,
    pub settings: watch::Sender<SessionSettings>,
    pub queue: SessionQueue,
}

/// One message activity on its way to the webhook (and the hosted inbox).
pub struct Activity {
    pub msg: InboundMessage,
    /// For a message sent through the API: its `metaData`.
    pub meta: Option<serde_json::Value>,
    /// The file's bytes when already in hand (a file sent through the API).
    pub file: Option<FileBytes>,
    /// The session's connection: where to download an inbound file from, and
    /// to look a room's picture up, when history wants them (a sent file is
    /// in `file` already).
    pub connection: Option<Arc<dyn Connection>>,
    /// The hosted inbox's `messageType` when the event type does not tell it
    /// (see [`Envelope::stored_type`]).
    pub stored_type: Option<&'static str>,
    /// A send the network accepted through the API: its answer does not wait
    /// for the log, so a failed log write is retried here (a received
    /// message is not acknowledged instead, and the network sends it again).
    pub sent: bool,
}

/// How an activity was handled.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Processed {
    /// Whether an event was queued for the webhook.
    pub queued: bool,
    /// The event's seq in the session's log, when it was written there.
    pub seq: Option<u64>,
    /// The log held this event already (the network delivered the message
    /// again): nothing new was queued.
    pub duplicate: bool,
    /// Why the event could not be written to the log, when it could not.
    pub log_error: Option<LogFailure>,
    /// Why the hosted-history write failed, when it did.
    pub history_error: Option<String>,
}

impl EventPipeline {
    pub fn new(
        egress: Egress,
        policy: RetryPolicy,
        log: Option<EventLog>,
        history: Option<Arc<dyn HistorySink>>,
        contacts: Option<ContactBook>,
        groups: Option<GroupBook>,
        avatars: Option<Arc<Avatars>>,
    ) -> Result<Arc<EventPipeline>, EgressError> {
        Ok(Arc::new(EventPipeline {
            session_cap: log.as_ref().map_or(u64::MAX, |l| l.session_cap),
            feed: log.as_ref().and_then(|l| l.feed.clone()),
            dispatcher: Dispatcher::with_log(egress.clone(), policy, log.map(|l| l.db))?,
            lookup: PollLookup::new(egress, LOOKUP_BUDGET)?,
            history,
            contacts,
            groups,
            avatars,
        }))
    }

    pub fn open(
        &self,
        client_id: &ClientId,
        fence: u64,
        on_fenced_out: OnFencedOut,
        target: Target,
        settings: SessionSettings,
    ) -> SessionEvents {
        let (tx, rx) = watch::channel(target);
        SessionEvents {
            fence,
            on_fenced_out,
            queue: self.dispatcher.session(client_id, rx),
            target: tx,
            settings: watch::channel(settings).0,
        }
    }

    /// Normalizes one message, writes it to hosted history when the session keeps
    /// it, writes its event to the log and queues it for the webhook (or drops
    /// it per the filters). A session without a webhook has its events logged,
    /// never pushed. May call the
    /// customer's poll lookup (bounded by its 8 s budget) and download a file:
    /// run it off the session's hot loop.
    pub async fn process(&self, session: &SessionEvents, activity: Activity) -> Processed {
        let begun = self.begin(session, activity).await;
        self.finish(session, begun).await
    }

    /// [`Self::process`] up to its log write, which it queues (behind the
    /// session's earlier ones) without waiting for its commit: a session
    /// begins its next activity while this one's event commits.
    /// [`Self::finish`] it, in the order begun.
    pub async fn begin(&self, session: &SessionEvents, mut activity: Activity) -> Begun {
        let settings = session.settings.borrow().clone();
        let facts = &settings.facts;
        // A notice the session did not turn on goes no further (the network
        // sends a receipt for every message: most sessions take none).
        if activity.msg.content.is_notice()
            && !facts.takes(&activity.msg.content, activity.msg.is_group())
        {
            return Begun::done(Processed::default());
        }
        self.group_subject(facts, &mut activity).await;
        let msg = &activity.msg;
        let url = session.target.borrow().url.clone();
        let pushed = !url.is_empty();
        // A notice (a member change, a receipt) is an event, not a message
        // of the inbox.
        let history = self.history.as_ref().filter(|h| {
            pushed
                && !msg.content.is_notice()
                && !msg.is_status()
                && h.enabled_for(&facts.org_id, &url)
        });
        let mut extras = Extras {
            meta: activity.meta.clone(),
            remote_name: remote_name(msg),
            ..Extras::default()
        };
        if msg.is_status() {
            // The author's, as the network named it: a status names no chat
            // to learn a contact's phone for.
            extras.remote_phone = msg.sender_phone.clone().unwrap_or_default();
        } else if !msg.is_group() && !msg.from_me {
            extras.remote_phone = self.remote_phone(facts, msg).await;
        }
        if !pushed {
            // Nobody to tell (and no hosted history without the hosted webhook):
            // counted; logged when there is a log.
            session.queue.skip(DropReason::NoWebhook);
            if self.dispatcher.log().is_none() {
                return Begun::done(Processed::default());
            }
        }
        // The room's avatar as known now; a lookup, when due, runs after the write.
        let avatars = self.avatars.as_ref().filter(|_| history.is_some());
        let room = super::normalize::chat_room(facts, msg);
        if let Some(avatars) = avatars {
            extras.avatar_url = avatars.url(&facts.client_id, room.as_str());
        }
        if let Content::Vote {
            poll_message_id, ..
        } = &msg.content
        {
            extras.poll_options = self
                .poll_options(session, &settings, history, msg, poll_message_id.as_str())
                .await;
        }
        let Some(mut envelope) = normalize(facts, msg, &extras) else {
            return Begun::done(Processed::default());
        };
        envelope.stored_type = activity.stored_type;
        let mut processed = Processed::default();
        if let Some(history) = history {
            fill_quoted(history.as_ref(), &facts.client_id, &mut envelope).await;
            let file = file_of(&activity);
            match history.write(&envelope, file).await {
                Ok(written) => {
                    if let Some(media) = envelope.media.as_mut() {
                        media.download_url = written.download_url;
                    }
                }
                Err(e) => {
                    tracing::warn!(client_id = %facts.client_id, message_id = %msg.id, error = %e,
                        "hosted history not written");
                    processed.history_error = Some(e);
                }
            }
            if let (Some(avatars), Some(connection)) = (avatars, &activity.connection) {
                let target = RoomRef {
                    client_id: facts.client_id.clone(),
                    chat_room_id: envelope.chat_room_id.clone(),
                    jid: envelope.remote_jid.clone(),
                };
                avatars.watch(target, &facts.my_lid, Arc::clone(connection));
            }
        }
        let state = settings.state_of(pushed, &envelope.kind);
        if state == DeliveryState::NotSelected {
            // The webhook does not want it (the hosted inbox has it, when it
            // keeps the chat): counted; logged when there is a log.
            session.queue.skip(DropReason::NotSelected);
            if self.dispatcher.log().is_none() {
                return Begun::done(processed);
            }
        }
        envelope.event_id = normalize::event_id(&facts.client_id, msg);
        let write = self.submit(session, &envelope, state).await;
        Begun(Stage::Writing(Box::new(Writing {
            envelope,
            parent: tracing::Span::current(),
            state,
            sent: activity.sent,
            processed,
            write,
        })))
    }
}

/// What a session does when a newer owner's fence refuses its log writes.
pub type OnFencedOut = Arc<dyn Fn() + Send + Sync>;

/// The contact's name a message carries: its sender's push name, unless the
/// account itself sent it (then the push name is the account's own).
pub(super) fn remote_name(msg: &InboundMessage) -> String {
    if msg.from_me {
        String::new()
    } else {
        msg.push_name.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(types: &[&str]) -> SessionSettings {
        SessionSettings {
            facts: SessionFacts {
                client_id: ClientId::parse("sel").unwrap(),
                org_id: String::new(),
                my_lid: String::new(),
                enable_group_ai: false,
                events: Vec::new(),
            },
            poll_lookup_url: String::new(),
            webhook_types: types.iter().map(|t| t.to_string()).collect(),
        }
    }

    #[test]
    fn an_event_is_pending_only_for_a_webhook_that_takes_its_type() {
        let every = settings(&[]);
        assert_eq!(every.state_of(true, "image"), DeliveryState::Pending);
        assert_eq!(every.state_of(false, "image"), DeliveryState::None);
        let texts = settings(&["text", "receipt"]);
        assert_eq!(texts.state_of(true, "receipt"), DeliveryState::Pending);
        assert_eq!(texts.state_of(true, "image"), DeliveryState::NotSelected);
        assert_eq!(texts.state_of(false, "image"), DeliveryState::None);
    }
}
