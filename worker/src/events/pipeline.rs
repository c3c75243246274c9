//! The way of an event inside a worker: network message -> resolved extras (poll
//! options) -> normalized envelope -> the session's webhook queue.
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use parley_shared::db::events::{Appended, DeliveryState, NewEvent};
use parley_shared::db::{Db, DbError, Queued};
use parley_shared::egress::{Egress, EgressError};
use parley_shared::metrics::metrics;
use tokio::sync::{mpsc, watch};

use parley_shared::event::Envelope;

use super::contacts::ContactBook;
use super::groups::GroupBook;
use super::history::{FileBytes, FileData, HistorySink, MessageFile, NetworkFile};
use super::{Extras, LOOKUP_BUDGET, PollLookup, SessionFacts, normalize};
use crate::network::Connection;
use crate::network::inbound::{Content, InboundMessage};
use crate::query::room_avatars::{Avatars, RoomRef};
use crate::webhook::{Delivery, Dispatcher, RetryPolicy, SessionQueue, Target};

/// The first and the longest wait between tries of a sent message's log write.
const LOG_RETRY_FIRST: Duration = Duration::from_millis(250);
const LOG_RETRY_LAST: Duration = Duration::from_secs(32);

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
}

/// Shared by every session of a worker.
pub struct EventPipeline {
    pub dispatcher: Arc<Dispatcher>,
    /// See [`EventLog::session_cap`].
    session_cap: u64,
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
#[derive(Debug, Clone, Default)]
pub struct SessionSettings {
    pub facts: SessionFacts,
    pub poll_lookup_url: String,
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
        client_id: &str,
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
        self.group_subject(facts, &mut activity).await;
        let msg = &activity.msg;
        let url = session.target.borrow().url.clone();
        let pushed = !url.is_empty();
        let history = self
            .history
            .as_ref()
            .filter(|h| pushed && h.enabled_for(&facts.org_id, &url));
        let mut extras = Extras {
            meta: activity.meta.clone(),
            remote_name: msg.push_name.clone(),
            ..Extras::default()
        };
        if !msg.is_group() && !msg.from_me {
            extras.remote_phone = self.remote_phone(facts, msg).await;
        }
        if !pushed {
            // Nobody to tell (and no hosted history without the hosted webhook):
            // counted; logged when there is a log.
            session.queue.skip_without_webhook();
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
            fill_quoted(history.as_ref(), &mut envelope).await;
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
                    client_id: envelope.client_id.clone(),
                    chat_room_id: envelope.chat_room_id.clone(),
                    jid: envelope.remote_jid.clone(),
                };
                avatars.watch(target, &facts.my_lid, Arc::clone(connection));
            }
        }
        envelope.event_id = normalize::event_id(&facts.client_id, msg);
        let write = self.submit(session, &envelope, pushed).await;
        Begun(Stage::Writing(Box::new(Writing {
            envelope,
            parent: tracing::Span::current(),
            pushed,
            sent: activity.sent,
            processed,
            write,
        })))
    }

    /// Finishes `session`'s begun activities one after another, in the
    /// order they were begun (its events reach the webhook queue in `seq`
    /// order), handing each outcome with its tag to `answer`.
    pub async fn finish_each<T>(
        &self,
        session: &SessionEvents,
        mut begun: mpsc::Receiver<(Begun, T)>,
        answer: impl Fn(T, Processed),
    ) {
        while let Some((one, tag)) = begun.recv().await {
            answer(tag, self.finish(session, one).await);
        }
    }

    /// Waits for a begun activity's log write (trying a sent message's
    /// again when it failed) and queues its event for the webhook.
    pub async fn finish(&self, session: &SessionEvents, begun: Begun) -> Processed {
        let Writing {
            mut envelope,
            parent,
            pushed,
            sent,
            mut processed,
            write,
        } = match begun.0 {
            Stage::Done(processed) => return processed,
            Stage::Writing(writing) => *writing,
        };
        let (seq, body) = match self
            .log_retried(session, &mut envelope, pushed, sent, write)
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
        if !pushed {
            return processed;
        }
        processed.queued = session.queue.enqueue(Delivery {
            id: envelope.event_id,
            seq,
            attempts: 0,
            kind: envelope.kind,
            body,
            parent,
        });
        processed
    }

    /// The answer of `write` (see [`settle`]), counting failures; an API send's event is tried again
    /// with a growing wait (about a minute in all) before it is given up.
    async fn log_retried(
        &self,
        session: &SessionEvents,
        envelope: &mut Envelope,
        pushed: bool,
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
            write = self.submit(session, envelope, pushed).await;
        }
    }

    /// Queues the event's write to the session's log, where it gets its seq
    /// (the body as it will be delivered). Without a log: the body with seq 0.
    async fn submit(&self, session: &SessionEvents, envelope: &Envelope, pushed: bool) -> Write {
        let Some(log) = self.dispatcher.log() else {
            return Write::NoLog(Bytes::from(serialize(envelope)));
        };
        let state = if pushed {
            DeliveryState::Pending
        } else {
            DeliveryState::None
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

    /// A group message's subject: the one it carries (then stored), else the
    /// one stored for the group, else the network's group metadata.
    async fn group_subject(&self, facts: &SessionFacts, activity: &mut Activity) {
        // Groups are delivered only when enabled: no lookup for the others.
        let wanted = activity.msg.is_group() && facts.enable_group_ai;
        let (Some(groups), true) = (&self.groups, wanted) else {
            return;
        };
        let msg = &mut activity.msg;
        match msg.group_subject.as_deref().filter(|s| !s.is_empty()) {
            Some(subject) => {
                groups
                    .learn(&facts.client_id, msg.chat.as_str(), subject)
                    .await
            }
            None => {
                let subject = groups
                    .subject(
                        &facts.client_id,
                        msg.chat.as_str(),
                        activity.connection.as_ref(),
                    )
                    .await;
                msg.group_subject = Some(subject).filter(|s| !s.is_empty());
            }
        }
    }

    /// A group's subject changed: later events name it so.
    pub async fn subject_changed(&self, client_id: &str, group: &str, subject: &str) {
        if let Some(groups) = &self.groups {
            groups.learn(client_id, group, subject).await;
        }
    }

    /// The contact's phone in a direct chat: revealed by the message (and then
    /// learned), or learned before.
    async fn remote_phone(&self, facts: &SessionFacts, msg: &InboundMessage) -> String {
        let Some(contacts) = &self.contacts else {
            return msg.sender_phone.clone().unwrap_or_default();
        };
        match &msg.sender_phone {
            Some(phone) => {
                contacts
                    .learn(&facts.client_id, &msg.chat_lid, phone, &msg.push_name)
                    .await;
                phone.clone()
            }
            None => contacts
                .phone(&facts.client_id, &msg.chat_lid)
                .await
                .unwrap_or_default(),
        }
    }

    /// A poll's options, as the spec orders it: stored in the session's hosted
    /// history, else the customer's lookup (nothing when neither knows them).
    /// Never from a worker's memory: every worker answers the same.
    async fn poll_options(
        &self,
        session: &SessionEvents,
        settings: &SessionSettings,
        history: Option<&Arc<dyn HistorySink>>,
        msg: &InboundMessage,
        poll_message_id: &str,
    ) -> Option<Vec<String>> {
        let facts = &settings.facts;
        if let Some(history) = history
            && let Some(options) = history
                .poll_options(&facts.client_id, poll_message_id)
                .await
        {
            return Some(options);
        }
        let token = session.target.borrow().token.clone();
        let room = super::normalize::chat_room(facts, msg);
        self.lookup
            .options(
                &settings.poll_lookup_url,
                &token,
                &facts.client_id,
                room.as_str(),
                poll_message_id,
            )
            .await
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
            LogFailure::FencedOut => "fenced-out",
        }
    }
}

/// An activity past [`EventPipeline::begin`]: its outcome, or its event on
/// its way to the log.
pub struct Begun(Stage);

enum Stage {
    Done(Processed),
    Writing(Box<Writing>),
}

/// An activity whose event is on its way to the log.
struct Writing {
    envelope: Envelope,
    /// The span its delivery is traced under (the activity's).
    parent: tracing::Span,
    pushed: bool,
    sent: bool,
    processed: Processed,
    write: Write,
}

impl Begun {
    fn done(processed: Processed) -> Begun {
        Begun(Stage::Done(processed))
    }
}

/// An event's log write under way.
enum Write {
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

/// What a session does when a newer owner's fence refuses its log writes.
pub type OnFencedOut = Arc<dyn Fn() + Send + Sync>;

/// The envelope as delivered. It holds strings, numbers and JSON values only,
/// so it always serializes.
fn serialize(envelope: &Envelope) -> Vec<u8> {
    serde_json::to_vec(envelope).unwrap_or_else(|e| {
        tracing::error!(error = %e, "cannot serialize an event");
        Vec::new()
    })
}

/// A reply's preview from history when the network carried no text.
async fn fill_quoted(history: &dyn HistorySink, envelope: &mut Envelope) {
    let Some(quoted) = envelope.quoted.as_mut() else {
        return;
    };
    if !quoted.body.is_empty() {
        return;
    }
    if let Some(stored) = history
        .quoted(
            &envelope.client_id,
            &envelope.chat_room_id,
            &quoted.message_id,
        )
        .await
    {
        quoted.body = stored.body;
        quoted.kind = stored.kind;
        if quoted.participant.is_none() {
            quoted.participant = stored.participant;
        }
    }
}

/// The file of a media message: in hand, or on the network (then history
/// downloads it only if it has to store it).
fn file_of(activity: &Activity) -> Option<MessageFile> {
    let Content::Media {
        kind,
        mime_type,
        file_name,
        download,
        ..
    } = &activity.msg.content
    else {
        return None;
    };
    if let Some(file) = &activity.file {
        return Some(MessageFile {
            mime_type: file.mime_type.clone(),
            file_name: file.file_name.clone(),
            data: FileData::InHand(file.bytes.clone()),
        });
    }
    let connection = activity.connection.as_ref()?;
    Some(MessageFile {
        mime_type: mime_type.clone(),
        file_name: file_name.clone(),
        data: FileData::Network(NetworkFile {
            connection: Arc::clone(connection),
            kind: *kind,
            download: download.clone(),
        }),
    })
}
