//! The in-process bus: NATS request-reply semantics without a server, for tests
//! and single-process deployments.
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use futures::FutureExt;
use tokio::sync::{mpsc, oneshot};

use super::{Bus, BusError, Incoming, Message, Registration, ReplyFn, Subscription};

/// Requests a subscriber may have waiting before more are dropped (they time out).
const CAPACITY: usize = 1024;

/// An in-process bus. Clones, and buses made by [`MemoryBus::with_prefix`], share
/// one network, as clients of one NATS server do.
#[derive(Clone)]
pub struct MemoryBus {
    prefix: String,
    network: Arc<Mutex<Network>>,
}

#[derive(Default)]
struct Network {
    next_id: u64,
    /// Subscribers by full subject.
    subjects: HashMap<String, Subscribers>,
}

#[derive(Default)]
struct Subscribers {
    /// Requests sent so far: picks the member of each queue group in turn.
    sent: usize,
    list: Vec<Subscriber>,
}

struct Subscriber {
    id: u64,
    queue_group: Option<String>,
    tx: mpsc::Sender<Incoming>,
}

impl MemoryBus {
    /// A bus on a new, empty network.
    pub fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.to_owned(),
            network: Arc::default(),
        }
    }

    /// A bus on the same network under another prefix.
    pub fn with_prefix(&self, prefix: &str) -> Self {
        Self {
            prefix: prefix.to_owned(),
            network: self.network.clone(),
        }
    }

    fn full(&self, subject: &str) -> String {
        format!("{}.{subject}", self.prefix)
    }

    /// Who a message to `subject` goes to (see [`Subscribers::targets`]).
    fn targets(&self, subject: &str) -> Vec<mpsc::Sender<Incoming>> {
        lock(&self.network)
            .subjects
            .get_mut(&self.full(subject))
            .map(Subscribers::targets)
            .unwrap_or_default()
    }
}

fn lock(network: &Mutex<Network>) -> MutexGuard<'_, Network> {
    network.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Subscribers {
    /// The subscribers a request goes to: every plain one, one of each queue group.
    fn targets(&mut self) -> Vec<mpsc::Sender<Incoming>> {
        self.list.retain(|s| !s.tx.is_closed());
        let turn = self.sent;
        self.sent = self.sent.wrapping_add(1);
        let mut groups: HashMap<&str, Vec<&Subscriber>> = HashMap::new();
        let mut targets = Vec::new();
        for s in &self.list {
            match &s.queue_group {
                Some(group) => groups.entry(group).or_default().push(s),
                None => targets.push(s.tx.clone()),
            }
        }
        targets.extend(
            groups
                .values()
                .map(|members| members[turn % members.len()].tx.clone()),
        );
        targets
    }
}

/// Removes the subscriber from the network when the [`Subscription`] drains or drops.
struct Unsubscribe {
    network: Arc<Mutex<Network>>,
    subject: String,
    id: u64,
}

impl Unsubscribe {
    fn remove(&self) {
        let mut network = lock(&self.network);
        if let Some(subscribers) = network.subjects.get_mut(&self.subject) {
            subscribers.list.retain(|s| s.id != self.id);
            if subscribers.list.is_empty() {
                network.subjects.remove(&self.subject);
            }
        }
    }
}

impl Drop for Unsubscribe {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Leaving the network drops its sender: once the requests already handed
/// over are read, the channel ends.
impl Registration for Unsubscribe {
    fn drain(&self) {
        self.remove();
    }
}

#[async_trait]
impl Bus for MemoryBus {
    async fn request(
        &self,
        subject: &str,
        request: Message,
        timeout: Duration,
    ) -> Result<Message, BusError> {
        let targets = self.targets(subject);
        if targets.is_empty() {
            return Err(BusError::NoResponders(subject.to_owned()));
        }

        // Every target may answer; the first reply wins and later ones are dropped.
        let (reply_tx, reply_rx) = oneshot::channel();
        let reply_tx = Arc::new(Mutex::new(Some(reply_tx)));
        for tx in targets {
            let reply_tx = reply_tx.clone();
            let reply: ReplyFn = Box::new(move |message| {
                let first = reply_tx
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take();
                if let Some(first) = first {
                    // The requester may have given up already: like NATS, not an error.
                    let _ = first.send(message);
                }
                futures::future::ready(Ok(())).boxed()
            });
            let incoming = Incoming::new(
                subject.to_owned(),
                request.headers.clone(),
                request.payload.clone(),
                Some(reply),
            );
            // A full queue loses the request, as a slow NATS consumer does: it times out.
            let _ = tx.try_send(incoming);
        }
        drop(reply_tx);

        // When every target dropped the request unanswered, wait for the timeout as NATS does.
        let reply = async {
            match reply_rx.await {
                Ok(message) => message,
                Err(_) => futures::future::pending().await,
            }
        };
        tokio::time::timeout(timeout, reply)
            .await
            .map_err(|_| BusError::Timeout(subject.to_owned()))
    }

    async fn publish(&self, subject: &str, message: Message) -> Result<(), BusError> {
        let targets = self.targets(subject);
        for tx in targets {
            // A full queue loses the message, as a slow NATS consumer does.
            let _ = tx.try_send(Incoming::new(
                subject.to_owned(),
                message.headers.clone(),
                message.payload.clone(),
                None,
            ));
        }
        Ok(())
    }

    async fn subscribe(
        &self,
        subject: &str,
        queue_group: Option<&str>,
    ) -> Result<Subscription, BusError> {
        let (tx, rx) = mpsc::channel(CAPACITY);
        let full = self.full(subject);
        let mut network = lock(&self.network);
        network.next_id += 1;
        let id = network.next_id;
        let subscriber = Subscriber {
            id,
            queue_group: queue_group.map(str::to_owned),
            tx,
        };
        network
            .subjects
            .entry(full.clone())
            .or_default()
            .list
            .push(subscriber);
        drop(network);
        let guard = Unsubscribe {
            network: self.network.clone(),
            subject: full,
            id,
        };
        Ok(Subscription::new(rx, Box::new(guard)))
    }

    async fn healthy(&self) -> bool {
        true
    }

    fn kind(&self) -> &'static str {
        "in-process"
    }
}
