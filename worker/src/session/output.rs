//! A session's way out: its webhook queue and event settings, the task that
//! takes its network messages through the event pipeline one after another
//! (each begun while the events before it commit; poll votes beside the
//! others, since resolving one may wait for the customer's lookup), and the hook that turns its own sends into `fromMe`
//! events.
use std::sync::Arc;

use parley_model::ids::ClientId;
use parley_model::inbound::InboundMessage;
use parley_shared::db::SessionRow;
use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::events::{
    APPENDS_IN_FLIGHT, Activity, Begun, EventPipeline, OnFencedOut, Processed, SessionEvents,
    SessionFacts, SessionSettings,
};
use crate::network::{Connection, ContactName, Jid, MessageId};
use crate::webhook::Target;

/// Network messages waiting for the pipeline; past it the session waits (and
/// with it the network's delivery), so nothing is dropped on the way in.
const INBOUND_BUFFER: usize = 256;

/// Votes of one session resolved at once (each may wait up to the lookup's
/// 8 s budget); past it the next vote waits for a free place.
const VOTES_AT_ONCE: usize = 32;

pub(super) struct Output {
    sink: EventSink,
    inbound: mpsc::Sender<Inbound>,
}

/// Whether a received message's event is in the log (or needs none): the
/// answer a sandbox operation waits for.
pub(super) type Persisted = oneshot::Receiver<Result<(), String>>;

/// Who is told that a received message's event is in the log (or needs
/// none), once it is; `None`: nobody (a notice, acknowledged by the
/// network's client as it arrives).
pub(super) struct Reply(Option<Told>);

enum Told {
    /// A sandbox operation, which answers once its messages are logged.
    Waiter(oneshot::Sender<Result<(), String>>),
    /// The network's connection, which acknowledges the message then (told
    /// by the inbound task itself: no task of its own per message).
    Network {
        connection: Arc<dyn Connection>,
        chat: Jid,
        id: MessageId,
    },
}

impl Reply {
    /// A reply a sandbox operation awaits.
    pub fn waiter() -> (Reply, Persisted) {
        let (done, persisted) = oneshot::channel();
        (Reply(Some(Told::Waiter(done))), persisted)
    }

    /// A reply the network's acknowledgement of message `id` in `chat` waits for.
    pub fn network(connection: Arc<dyn Connection>, chat: Jid, id: MessageId) -> Reply {
        Reply(Some(Told::Network {
            connection,
            chat,
            id,
        }))
    }

    /// A reply nobody waits for: a notice, which the network's client
    /// acknowledges as it arrives.
    pub fn nobody() -> Reply {
        Reply(None)
    }

    /// Tells whoever waits the outcome of the message's event.
    pub async fn send(mut self, outcome: Result<(), String>) {
        match self.0.take() {
            Some(Told::Waiter(done)) => {
                let _ = done.send(outcome);
            }
            Some(Told::Network {
                connection,
                chat,
                id,
            }) => connection.persisted(&chat, &id, outcome).await,
            None => {}
        }
    }
}

impl Drop for Reply {
    /// A reply dropped untold (the inbound task ended) tells the network at
    /// once that the message was not logged, so it is delivered again
    /// rather than left waiting (a waiter learns it from its channel).
    fn drop(&mut self) {
        let Some(Told::Network {
            connection,
            chat,
            id,
        }) = self.0.take()
        else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let ended = Err("the session's event task has ended".to_string());
                connection.persisted(&chat, &id, ended).await;
            });
        }
    }
}

/// What the inbound task takes, in arrival order.
enum Inbound {
    Message(Box<Activity>, Reply),
    /// Messages of the phone's history sync, for the hosted inbox.
    History(Vec<InboundMessage>),
    /// The contacts' names the phone's history sync carries.
    ContactNames(Vec<ContactName>),
}

/// Takes one activity through the pipeline; cloned into send tasks.
#[derive(Clone)]
pub(super) struct EventSink {
    pipeline: Arc<EventPipeline>,
    events: Arc<SessionEvents>,
}

impl EventSink {
    pub async fn process(&self, activity: Activity) -> Processed {
        self.pipeline.process(&self.events, activity).await
    }
}

impl Output {
    /// Opens the webhook queue of session `id` (whose settings are `row`)
    /// and starts its inbound task; `on_fenced_out` stops the session when a
    /// newer owner's fence refuses its log.
    pub fn open(
        pipeline: Arc<EventPipeline>,
        id: &ClientId,
        row: &SessionRow,
        fence: u64,
        on_fenced_out: OnFencedOut,
    ) -> Output {
        let (target, settings) = settings_of(id, row);
        let events = Arc::new(pipeline.open(id, fence, on_fenced_out, target, settings));
        let sink = EventSink { pipeline, events };
        let (inbound, rx) = mpsc::channel(INBOUND_BUFFER);
        tokio::spawn(run_inbound(sink.clone(), rx));
        Output { sink, inbound }
    }

    /// Applies changed settings (webhook, token, org, groups, own LID) to the
    /// next event and the next delivery attempt.
    pub fn apply(&self, id: &ClientId, row: &SessionRow) {
        let (target, settings) = settings_of(id, row);
        self.sink.events.target.send_replace(target);
        self.sink.events.settings.send_replace(settings);
    }

    /// Hands a network message to the inbound task, in arrival order;
    /// `reply` is told once its event is in the log.
    pub async fn received(&self, activity: Activity, reply: Reply) {
        // Unsent, the reply is dropped: told that the message was not logged.
        if self
            .inbound
            .send(Inbound::Message(Box::new(activity), reply))
            .await
            .is_err()
        {
            tracing::error!("the session's event task has ended; a message was not delivered");
        }
    }

    /// Hands a chunk of the phone's history sync to the inbound task, to be
    /// stored in order with the messages around it.
    pub async fn history(&self, messages: Vec<InboundMessage>) {
        if self.inbound.send(Inbound::History(messages)).await.is_err() {
            tracing::error!("the session's event task has ended; a history sync was not stored");
        }
    }

    /// Hands the contacts' names of the phone's history sync to the inbound
    /// task, after the chunks before them.
    pub async fn contact_names(&self, names: Vec<ContactName>) {
        if self
            .inbound
            .send(Inbound::ContactNames(names))
            .await
            .is_err()
        {
            tracing::error!("the session's event task has ended; contacts' names were not stored");
        }
    }

    pub fn sink(&self) -> EventSink {
        self.sink.clone()
    }

    /// Whether the session's event log refused an event for want of room,
    /// and no delivery has made room since.
    pub fn log_full(&self) -> bool {
        self.sink.events.queue.is_full()
    }

    /// Stops the session's deliveries for a handover: the attempts under way
    /// end and are recorded, the rest stays in the log for the next owner.
    pub async fn stop_deliveries(&self) {
        self.sink.events.queue.stop().await;
    }

    /// Delivers the log's pending events after `after` (queued again by `/events/redeliver`).
    pub fn deliver_pending(&self, after: u64) {
        self.sink.events.queue.deliver_pending(after);
    }
}

async fn run_inbound(sink: EventSink, mut rx: mpsc::Receiver<Inbound>) {
    let votes = Arc::new(Semaphore::new(VOTES_AT_ONCE));
    // Each message is acknowledged once its event committed, in order.
    let (begun, in_flight) = mpsc::channel(APPENDS_IN_FLIGHT);
    let finishing = tokio::spawn(finish_each(sink.clone(), in_flight));
    while let Some(inbound) = rx.recv().await {
        let (activity, reply) = match inbound {
            Inbound::Message(activity, reply) => (*activity, reply),
            Inbound::History(messages) => {
                sink.pipeline.import_history(&sink.events, messages).await;
                continue;
            }
            Inbound::ContactNames(names) => {
                sink.pipeline.import_names(&sink.events, names).await;
                continue;
            }
        };
        // A group's new subject names it in the events after it, whether or
        // not the session takes the change's own event.
        if let Some(subject) = activity.msg.content.new_subject() {
            let client_id = sink.events.settings.borrow().facts.client_id.clone();
            let group = activity.msg.chat.as_str();
            sink.pipeline
                .subject_changed(&client_id, group, subject)
                .await;
        }
        if !activity.msg.content.is_vote() {
            let one = sink.pipeline.begin(&sink.events, activity).await;
            if begun.send((one, reply)).await.is_err() {
                break;
            }
            continue;
        }
        // A vote waiting for a slow poll lookup must not hold up the events
        // behind it: it is resolved and delivered on its own.
        let Ok(place) = Arc::clone(&votes).acquire_owned().await else {
            return;
        };
        let sink = sink.clone();
        // Its acknowledgement does not wait for the lookup either: a vote is
        // taken once its resolution has a place (logged when resolved).
        reply.send(Ok(())).await;
        tokio::spawn(async move {
            sink.process(activity).await;
            drop(place);
        });
    }
    drop(begun);
    let _ = finishing.await;
}

/// Finishes the begun activities in order, telling each one's reply.
async fn finish_each(sink: EventSink, mut begun: mpsc::Receiver<(Begun, Reply)>) {
    while let Some((one, reply)) = begun.recv().await {
        let processed = sink.pipeline.finish(&sink.events, one).await;
        reply.send(persisted(&processed)).await;
    }
}

/// Whether an activity's event is in the log, or needs none (filtered out,
/// or held already).
fn persisted(processed: &Processed) -> Result<(), String> {
    match &processed.log_error {
        Some(e) => Err(e.to_string()),
        None => Ok(()),
    }
}

fn settings_of(id: &ClientId, row: &SessionRow) -> (Target, SessionSettings) {
    let target = Target {
        url: row.webhook_url.clone(),
        token: row.webhook_token.clone(),
    };
    let settings = SessionSettings {
        facts: SessionFacts {
            client_id: id.clone(),
            org_id: row.org_id.clone(),
            my_lid: row.lid.clone(),
            enable_group_ai: row.enable_group_ai,
            events: row.events.clone(),
        },
        poll_lookup_url: row.poll_lookup_url.clone(),
        webhook_types: row.webhook_types.clone(),
    };
    (target, settings)
}
