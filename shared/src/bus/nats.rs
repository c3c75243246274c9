//! The NATS bus: request-reply over core NATS, subjects under `{prefix}.`.
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Poll;
use std::time::Duration;

use async_nats::client::RequestErrorKind;
use async_nats::connection::State;
use async_nats::{Client, HeaderMap, HeaderName, HeaderValue};
use async_trait::async_trait;
use futures::task::AtomicWaker;
use futures::{FutureExt, Stream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::{Bus, BusError, Headers, Incoming, Message, Registration, ReplyFn, Subscription};

/// Requests a subscriber may have waiting before the NATS client drops more.
const CAPACITY: usize = 1024;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// A bus over one NATS connection; every subject is sent as `{prefix}.{subject}`.
pub struct NatsBus {
    client: Client,
    prefix: String,
}

impl NatsBus {
    /// The connection, for other users of the same server (the event stream).
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// Connects to the NATS server at `url`; fails when it is unreachable.
    pub async fn connect(url: &str, prefix: &str) -> Result<NatsBus, BusError> {
        let client = async_nats::ConnectOptions::new()
            .connection_timeout(CONNECT_TIMEOUT)
            .connect(url)
            .await
            .map_err(unavailable)?;
        Ok(NatsBus {
            client,
            prefix: prefix.to_owned(),
        })
    }

    fn full(&self, subject: &str) -> String {
        format!("{}.{subject}", self.prefix)
    }
}

fn unavailable(error: impl std::fmt::Display) -> BusError {
    BusError::Unavailable(error.to_string())
}

fn to_nats(headers: &Headers) -> Result<HeaderMap, BusError> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let invalid = || BusError::Unavailable(format!("invalid header {name:?}"));
        let name = HeaderName::try_from(name.as_str()).map_err(|_| invalid())?;
        let value: HeaderValue = value.parse().map_err(|_| invalid())?;
        map.insert(name, value);
    }
    Ok(map)
}

/// Keeps the last value of a repeated header.
fn from_nats(headers: Option<&HeaderMap>) -> Headers {
    headers
        .into_iter()
        .flat_map(HeaderMap::iter)
        .filter_map(|(name, values)| Some((name.to_string(), values.last()?.to_string())))
        .collect()
}

type Shared = Arc<Mutex<Option<async_nats::Subscriber>>>;

fn lock(subscriber: &Shared) -> MutexGuard<'_, Option<async_nats::Subscriber>> {
    subscriber.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Dropping the NATS subscriber queues its UNSUB at once, so a later request of
/// this client already finds it gone; the forwarding task then ends.
struct Unsubscribe {
    subscriber: Shared,
    task: JoinHandle<()>,
    drain: Arc<DrainSignal>,
}

impl Drop for Unsubscribe {
    fn drop(&mut self) {
        lock(&self.subscriber).take();
        self.task.abort();
    }
}

/// A drain asked of the forwarding task, which owns the polling of the subscriber.
#[derive(Default)]
struct DrainSignal {
    asked: AtomicBool,
    sent: AtomicBool,
    waker: AtomicWaker,
}

/// The NATS drain: UNSUB and a PING, then every message the server sent before
/// it took the UNSUB, then the end of the stream at the PONG. (The vendored
/// async-nats ends the stream at that PONG; 0.51 as published ends it once the
/// UNSUB is written and drops what arrives after: see
/// `vendor/async-nats/PARLEY-PATCH.md`.)
impl Registration for Unsubscribe {
    fn drain(&self) {
        self.drain.asked.store(true, Ordering::Release);
        self.drain.waker.wake();
    }
}

/// Hands each message over to the [`Subscription`] until either side is gone.
async fn forward(
    client: Client,
    subject: String,
    subscriber: Shared,
    drain: Arc<DrainSignal>,
    tx: mpsc::Sender<Incoming>,
) {
    // The lock is only held while polling, never across an await.
    let next = || {
        futures::future::poll_fn(|cx| {
            drain.waker.register(cx.waker());
            let mut guard = lock(&subscriber);
            let Some(subscriber) = guard.as_mut() else {
                return Poll::Ready(None);
            };
            if drain.asked.load(Ordering::Acquire) && !drain.sent.load(Ordering::Acquire) {
                let queued = {
                    let ask = subscriber.drain();
                    futures::pin_mut!(ask);
                    ask.poll(cx)
                };
                match queued {
                    // Queued (or the client is gone, which ends the stream anyway).
                    Poll::Ready(_) => drain.sent.store(true, Ordering::Release),
                    // The client's command queue is full: ask again right away.
                    Poll::Pending => cx.waker().wake_by_ref(),
                }
            }
            Pin::new(subscriber).poll_next(cx)
        })
    };
    while let Some(message) = next().await {
        let reply = message.reply.map(|to| {
            let client = client.clone();
            let reply: ReplyFn = Box::new(move |reply: Message| {
                async move {
                    let headers = to_nats(&reply.headers)?;
                    client
                        .publish_with_headers(to, headers, reply.payload)
                        .await
                        .map_err(unavailable)
                }
                .boxed()
            });
            reply
        });
        let headers = from_nats(message.headers.as_ref());
        let incoming = Incoming::new(subject.clone(), headers, message.payload, reply);
        if tx.send(incoming).await.is_err() {
            break;
        }
    }
}

#[async_trait]
impl Bus for NatsBus {
    async fn request(
        &self,
        subject: &str,
        request: Message,
        timeout: Duration,
    ) -> Result<Message, BusError> {
        // Lost connection: say so at once rather than let the caller wait out
        // its timeout and report a silent owner.
        if self.client.connection_state() != State::Connected {
            return Err(unavailable("not connected to the NATS server"));
        }
        let nats_request = async_nats::Request::new()
            .payload(request.payload)
            .headers(to_nats(&request.headers)?)
            .timeout(Some(timeout));
        match self
            .client
            .send_request(self.full(subject), nats_request)
            .await
        {
            Ok(reply) => Ok(Message {
                headers: from_nats(reply.headers.as_ref()),
                payload: reply.payload,
            }),
            Err(error) => Err(match error.kind() {
                RequestErrorKind::NoResponders => BusError::NoResponders(subject.to_owned()),
                RequestErrorKind::TimedOut
                    if self.client.connection_state() != State::Connected =>
                {
                    unavailable("the connection to the NATS server was lost")
                }
                RequestErrorKind::TimedOut => BusError::Timeout(subject.to_owned()),
                _ => unavailable(error),
            }),
        }
    }

    async fn publish(&self, subject: &str, message: Message) -> Result<(), BusError> {
        if self.client.connection_state() != State::Connected {
            return Err(unavailable("not connected to the NATS server"));
        }
        let subject = self.full(subject);
        if message.headers.is_empty() {
            self.client.publish(subject, message.payload).await
        } else {
            let headers = to_nats(&message.headers)?;
            (self.client)
                .publish_with_headers(subject, headers, message.payload)
                .await
        }
        .map_err(unavailable)
    }

    async fn subscribe(
        &self,
        subject: &str,
        queue_group: Option<&str>,
    ) -> Result<Subscription, BusError> {
        let full = self.full(subject);
        let subscriber = match queue_group {
            Some(group) => self.client.queue_subscribe(full, group.to_owned()).await,
            None => self.client.subscribe(full).await,
        }
        .map_err(unavailable)?;
        let subscriber: Shared = Arc::new(Mutex::new(Some(subscriber)));
        let drain = Arc::new(DrainSignal::default());
        let (tx, rx) = mpsc::channel(CAPACITY);
        let task = tokio::spawn(forward(
            self.client.clone(),
            subject.to_owned(),
            subscriber.clone(),
            Arc::clone(&drain),
            tx,
        ));
        Ok(Subscription::new(
            rx,
            Box::new(Unsubscribe {
                subscriber,
                task,
                drain,
            }),
        ))
    }

    async fn healthy(&self) -> bool {
        self.client.connection_state() == State::Connected
    }

    fn kind(&self) -> &'static str {
        "nats"
    }
}
