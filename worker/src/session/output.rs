//! A session's way out: its webhook queue and event settings, the task that
//! takes its network messages through the event pipeline one after another,
//! and the hook that turns its own sends into `fromMe` events.
use std::sync::Arc;

use parley_shared::db::SessionRow;
use tokio::sync::mpsc;

use crate::events::{
    Activity, EventPipeline, Processed, SessionEvents, SessionFacts, SessionSettings,
};
use crate::webhook::Target;

/// Network messages waiting for the pipeline; past it the session waits (and
/// with it the network's delivery), so nothing is dropped on the way in.
const INBOUND_BUFFER: usize = 256;

pub(super) struct Output {
    sink: EventSink,
    inbound: mpsc::Sender<Activity>,
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
    /// Opens the session's webhook queue and starts its inbound task.
    pub fn open(pipeline: Arc<EventPipeline>, row: &SessionRow) -> Output {
        let (target, settings) = settings_of(row);
        let events = Arc::new(pipeline.open(&row.client_id, target, settings));
        let sink = EventSink { pipeline, events };
        let (inbound, rx) = mpsc::channel(INBOUND_BUFFER);
        tokio::spawn(run_inbound(sink.clone(), rx));
        Output { sink, inbound }
    }

    /// Applies changed settings (webhook, token, org, groups, own LID) to the
    /// next event and the next delivery attempt.
    pub fn apply(&self, row: &SessionRow) {
        let (target, settings) = settings_of(row);
        self.sink.events.target.send_replace(target);
        self.sink.events.settings.send_replace(settings);
    }

    /// Hands a network message to the inbound task, in arrival order.
    pub async fn received(&self, activity: Activity) {
        if self.inbound.send(activity).await.is_err() {
            tracing::error!("the session's event task has ended; a message was not delivered");
        }
    }

    pub fn sink(&self) -> EventSink {
        self.sink.clone()
    }
}

async fn run_inbound(sink: EventSink, mut rx: mpsc::Receiver<Activity>) {
    while let Some(activity) = rx.recv().await {
        sink.process(activity).await;
    }
}

fn settings_of(row: &SessionRow) -> (Target, SessionSettings) {
    let target = Target {
        url: row.webhook_url.clone(),
        token: row.webhook_token.clone(),
    };
    let settings = SessionSettings {
        facts: SessionFacts {
            client_id: row.client_id.clone(),
            org_id: row.org_id.clone(),
            my_lid: row.lid.clone(),
            enable_group_ai: row.enable_group_ai,
        },
        poll_lookup_url: row.poll_lookup_url.clone(),
    };
    (target, settings)
}
