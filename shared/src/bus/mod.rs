//! The bus port: request-reply between API pods and the worker that owns a session.
//!
//! Subjects given to a [`Bus`] are relative (`session.<clientId>`, `start`); each
//! adapter prefixes them with its cluster name, so two clusters (or two tests)
//! sharing one NATS server never see each other's traffic.
pub mod commands;
pub mod memory;
pub mod nats;

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::future::BoxFuture;
use tokio::sync::mpsc;

/// Message headers (trace context, request ids, reply status).
pub type Headers = BTreeMap<String, String>;

/// A reply, or a request's payload, with its headers.
#[derive(Debug, Clone, Default)]
pub struct Message {
    pub headers: Headers,
    pub payload: Bytes,
}

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum BusError {
    /// Nobody subscribes to the subject: for a session subject, no worker owns it.
    #[error("no responders for {0}")]
    NoResponders(String),
    /// Somebody subscribes but did not answer in time.
    #[error("request to {0} timed out")]
    Timeout(String),
    #[error("bus unavailable: {0}")]
    Unavailable(String),
}

type ReplyFn = Box<dyn FnOnce(Message) -> BoxFuture<'static, Result<(), BusError>> + Send>;

/// A request delivered to a subscriber; answer it with [`Incoming::respond`].
pub struct Incoming {
    /// The relative subject the request was sent to.
    pub subject: String,
    pub headers: Headers,
    pub payload: Bytes,
    reply: Option<ReplyFn>,
}

impl Incoming {
    pub fn new(subject: String, headers: Headers, payload: Bytes, reply: Option<ReplyFn>) -> Self {
        Self {
            subject,
            headers,
            payload,
            reply,
        }
    }

    /// Sends the reply. A request sent without a reply address is answered by a no-op.
    pub async fn respond(mut self, reply: Message) -> Result<(), BusError> {
        match self.reply.take() {
            Some(f) => f(reply).await,
            None => Ok(()),
        }
    }
}

impl std::fmt::Debug for Incoming {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Incoming")
            .field("subject", &self.subject)
            .finish_non_exhaustive()
    }
}

/// A live subscription; dropping it unsubscribes.
pub struct Subscription {
    rx: mpsc::Receiver<Incoming>,
    registration: Box<dyn Registration>,
}

/// What keeps a [`Subscription`] registered with its bus; dropping it
/// unsubscribes at once.
pub trait Registration: Send + Sync {
    /// Asks the bus to route no new requests here. Requests already on their
    /// way still arrive; then [`Subscription::next`] answers `None`.
    fn drain(&self);
}

impl Subscription {
    pub fn new(rx: mpsc::Receiver<Incoming>, registration: Box<dyn Registration>) -> Self {
        Self { rx, registration }
    }

    /// The next request, or `None` once the bus closed the subscription.
    pub async fn next(&mut self) -> Option<Incoming> {
        self.rx.recv().await
    }

    /// The next message already here, without waiting.
    pub fn try_next(&mut self) -> Option<Incoming> {
        self.rx.try_recv().ok()
    }

    /// Stops new requests from coming here and hands back, through `next`, the
    /// ones already on their way, so a subscriber going away can answer each of
    /// them instead of leaving its caller to time out.
    pub fn drain(&self) {
        self.registration.drain();
    }
}

#[async_trait]
pub trait Bus: Send + Sync + 'static {
    /// Sends a request and waits for the first reply.
    /// Fails at once with [`BusError::NoResponders`] when nobody subscribes.
    async fn request(
        &self,
        subject: &str,
        request: Message,
        timeout: Duration,
    ) -> Result<Message, BusError>;

    /// Subscribes to a subject. With a queue group, each request goes to one member
    /// of the group; without, every subscriber receives it (the first reply wins).
    async fn subscribe(
        &self,
        subject: &str,
        queue_group: Option<&str>,
    ) -> Result<Subscription, BusError>;

    /// Hands `message` to every plain subscriber of `subject` and one member
    /// of each queue group, expecting no reply; with nobody subscribed it is
    /// dropped. At most once: a subscriber that is behind may miss it.
    async fn publish(&self, subject: &str, message: Message) -> Result<(), BusError>;

    /// Whether the bus is reachable now.
    async fn healthy(&self) -> bool;

    /// `"nats"` or `"in-process"`.
    fn kind(&self) -> &'static str;
}

/// Subject of the commands for one session.
pub fn session_subject(client_id: &str) -> String {
    format!("session.{client_id}")
}

/// Subject on which a session's owner announces each event it logged (its
/// `seq`), for the live feeds that read the session's log (`GET /events/feed`).
pub fn feed_subject(client_id: &str) -> String {
    format!("feed.{client_id}")
}

/// Subject of `/start` requests, served by a queue group of all workers.
pub const START_SUBJECT: &str = "start";
/// Queue group name of the workers.
pub const WORKERS_GROUP: &str = "workers";

/// Subject of start requests for one worker only: a worker handing a session
/// over to spread load asks the worker it chose to take it up.
pub fn worker_start_subject(pod_name: &str) -> String {
    format!("{START_SUBJECT}.{pod_name}")
}

/// Subject on which a worker answers that it is alive: a worker whose
/// membership fell silent and that nobody answers for here (its bus
/// connection closed) is gone.
pub fn worker_alive_subject(pod_name: &str) -> String {
    format!("alive.{pod_name}")
}
