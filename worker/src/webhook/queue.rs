//! One session's delivery queue. Events come in as they are logged, through a
//! bounded channel; when it is full, and when events wait in the event log
//! (an earlier owner's, or queued again by `/events/redeliver`), the queue
//! reads them from the log instead, so a logged event is never dropped for
//! want of room. Without a log (benchmarks of the in-memory path) a full
//! channel drops the event, counted.
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use parley_model::ids::ClientId;
use parley_shared::db::events::LoggedEvent;
use tokio::sync::{Notify, Semaphore, mpsc, watch};
use tokio::task::JoinSet;
use tracing::Instrument;

use super::{Delivery, Dispatcher, DropReason, Target};

/// Events read from the log at a time.
const PAGE: u64 = 256;
/// The wait before reading the log again after it failed.
const LOG_RETRY: Duration = Duration::from_secs(1);

/// The sending side of one session's queue; closing it stops the queue after
/// the events in flight.
pub struct SessionQueue {
    tx: mpsc::Sender<(Delivery, Instant)>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    shared: Arc<Shared>,
    dispatcher: Arc<Dispatcher>,
    client_id: ClientId,
}

/// What the queue's task and its owner share.
struct Shared {
    /// Pending events after this seq wait in the log, not in the channel.
    backlog: Mutex<Option<u64>>,
    wake: Notify,
    closing: AtomicBool,
    /// Turned true with `closing` (with a log): deliveries waiting for a
    /// retry stop waiting, and the event stays pending for the next owner.
    stop: watch::Sender<bool>,
    /// The log refused an event for want of room; cleared when a delivery ends.
    full: AtomicBool,
}

impl Shared {
    /// Pending events after `after` are to be read from the log.
    fn mark(&self, after: u64) {
        {
            let mut backlog = self.backlog.lock().unwrap_or_else(|e| e.into_inner());
            *backlog = Some(backlog.map_or(after, |b| b.min(after)));
        }
        self.wake.notify_one();
    }

    fn take(&self) -> Option<u64> {
        self.backlog
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }
}

impl SessionQueue {
    /// Opens the queue; with a log, it first delivers what is pending there.
    pub(super) fn open(
        dispatcher: Arc<Dispatcher>,
        client_id: &ClientId,
        target: watch::Receiver<Target>,
    ) -> SessionQueue {
        let (tx, rx) = mpsc::channel(dispatcher.policy.queue.max(1));
        let shared = Arc::new(Shared {
            backlog: Mutex::new(None),
            wake: Notify::new(),
            closing: AtomicBool::new(false),
            stop: watch::Sender::new(false),
            full: AtomicBool::new(false),
        });
        if dispatcher.log.is_some() {
            shared.mark(0);
        }
        let run = Run {
            dispatcher: Arc::clone(&dispatcher),
            client_id: client_id.clone(),
            target,
            shared: Arc::clone(&shared),
            slots: Arc::new(Semaphore::new(dispatcher.policy.concurrency.max(1))),
            in_flight: HashSet::new(),
            finished: Arc::new(Mutex::new(Vec::new())),
            recheck: HashSet::new(),
            tasks: JoinSet::new(),
            covered: (0, 0),
        };
        SessionQueue {
            tx,
            task: Mutex::new(Some(tokio::spawn(run.run(rx)))),
            shared,
            dispatcher,
            client_id: client_id.clone(),
        }
    }

    /// Queues an event; `false` when it was dropped (a full queue without a
    /// log). A logged event that finds the channel full is read from the log.
    pub fn enqueue(&self, d: Delivery) -> bool {
        match self.tx.try_send((d, Instant::now())) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full((d, _)))
                if self.dispatcher.log.is_some() && d.seq > 0 =>
            {
                self.shared.mark(d.seq - 1);
                true
            }
            Err(
                mpsc::error::TrySendError::Full((d, at))
                | mpsc::error::TrySendError::Closed((d, at)),
            ) => {
                self.dispatcher
                    .stats
                    .dropped(DropReason::QueueFull, at.elapsed());
                tracing::warn!(client_id = %self.client_id, event_id = %d.id, event_type = %d.kind,
                    reason = DropReason::QueueFull.as_str(), "webhook event dropped");
                false
            }
        }
    }

    /// The log refused an event for want of room (its cap of undelivered events).
    pub fn mark_full(&self) {
        self.shared.full.store(true, Ordering::SeqCst);
    }

    /// Whether the log refused an event for want of room and no delivery has
    /// ended since.
    pub fn is_full(&self) -> bool {
        self.shared.full.load(Ordering::SeqCst)
    }

    /// Delivers the log's pending events after `after` (queued again by a redelivery).
    pub fn deliver_pending(&self, after: u64) {
        self.shared.mark(after);
    }

    /// Counts an event not queued because the session has no webhook or
    /// its webhook does not take the event's type (`no-webhook` and
    /// `not-selected` drops; not logged, they are the session's
    /// configuration).
    pub fn skip(&self, reason: DropReason) {
        self.dispatcher.stats.dropped(reason, Duration::ZERO);
    }

    /// With a log: stops taking events and waits until the attempts under
    /// way have ended and are recorded; deliveries waiting for a retry stop
    /// waiting. What is still pending stays in the log for the session's next
    /// owner, so a handover that waits for this before releasing the lease
    /// leaves no delivered event unrecorded (none delivered twice for it).
    /// Without a log the queue goes on until it is dropped.
    pub async fn stop(&self) {
        if self.dispatcher.log.is_none() {
            return;
        }
        self.shared.close();
        let task = self.task.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

impl Shared {
    /// The queue stops taking events (with a log, its retries stop waiting).
    fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
        self.stop.send_replace(true);
        self.wake.notify_one();
    }
}

/// Dropped with its session: the task stops taking events (with a log, the
/// pending ones stay there for the session's next owner).
impl Drop for SessionQueue {
    fn drop(&mut self) {
        if self.dispatcher.log.is_some() {
            self.shared.close();
        } else {
            self.shared.closing.store(true, Ordering::SeqCst);
            self.shared.wake.notify_one();
        }
    }
}

/// The queue's task.
struct Run {
    dispatcher: Arc<Dispatcher>,
    client_id: ClientId,
    target: watch::Receiver<Target>,
    shared: Arc<Shared>,
    slots: Arc<Semaphore>,
    /// The seqs being delivered, and those whose delivery ended since the
    /// last read of the log began: a page read before their delivery was
    /// recorded still shows them pending.
    in_flight: HashSet<u64>,
    /// Deliveries ended (their outcome recorded), to leave `in_flight` at
    /// the next read.
    finished: Arc<Mutex<Vec<u64>>>,
    /// Pending events a read of the log found while a delivery of theirs
    /// was still under way (queued again by a redelivery meanwhile): read
    /// again once that delivery ended, whose record of an earlier round
    /// left the redelivery pending.
    recheck: HashSet<u64>,
    tasks: JoinSet<()>,
    /// The seqs `(from, to]` the last reads of the log went through: an
    /// event of the channel among them was committed when its page was read
    /// (a session's seqs commit in order, so `to` committed means every
    /// lower one did), so the read took it already, if it was pending.
    /// Events below `from` were not read: the channel's own.
    covered: (u64, u64),
}

impl Run {
    async fn run(mut self, mut rx: mpsc::Receiver<(Delivery, Instant)>) {
        let durable = self.dispatcher.log.is_some();
        loop {
            if durable && self.shared.closing.load(Ordering::SeqCst) {
                break;
            }
            if let Some(after) = self.shared.take() {
                // What the channel holds came before the events that found it
                // full: delivered first, then the log from `after` on.
                while let Ok((d, _)) = rx.try_recv() {
                    self.take(d).await;
                }
                self.catch_up(after).await;
                continue;
            }
            tokio::select! {
                got = rx.recv() => match got {
                    Some((d, _)) => self.take(d).await,
                    None => break,
                },
                () = self.shared.wake.notified() => {}
            }
            // Reap finished deliveries so the sets stay small.
            while self.tasks.try_join_next().is_some() {}
            self.reap();
        }
        while self.tasks.join_next().await.is_some() {}
    }

    /// Delivers an event of the channel, unless a read of the log took it.
    async fn take(&mut self, d: Delivery) {
        let (from, to) = self.covered;
        if d.seq > from && d.seq <= to {
            return;
        }
        self.dispatch(d).await;
    }

    /// Delivers the pending events of the log after `after`, oldest first.
    async fn catch_up(&mut self, mut after: u64) {
        let Some(log) = self.dispatcher.log.clone() else {
            return;
        };
        // A read that starts within the last one's range continues it.
        let (from, to) = self.covered;
        if !(from..=to).contains(&after) {
            self.covered = (after, after);
        }
        loop {
            if self.shared.closing.load(Ordering::SeqCst) {
                return;
            }
            self.reap();
            let page = match log
                .pending_events(self.client_id.as_str(), after, PAGE)
                .await
            {
                Ok(page) => page,
                Err(e) => {
                    tracing::warn!(client_id = %self.client_id, error = %e,
                        "cannot read pending events; trying again");
                    self.shared.mark(after);
                    tokio::time::sleep(LOG_RETRY).await;
                    return;
                }
            };
            let Some(last) = page.last().map(|e| e.seq) else {
                return;
            };
            self.covered.1 = self.covered.1.max(last);
            after = last;
            for event in page {
                if self.in_flight.contains(&event.seq) {
                    self.recheck.insert(event.seq);
                } else {
                    self.dispatch(delivery_of(event)).await;
                }
            }
        }
    }

    /// Forgets the deliveries that ended: a read of the log begun after this
    /// finds their recorded outcome.
    fn reap(&mut self) {
        let done = std::mem::take(&mut *self.finished.lock().unwrap_or_else(|e| e.into_inner()));
        for seq in done {
            self.in_flight.remove(&seq);
            if self.recheck.remove(&seq) {
                self.shared.mark(seq.saturating_sub(1));
            }
        }
    }

    /// Starts one delivery once a slot is free.
    async fn dispatch(&mut self, delivery: Delivery) {
        let Ok(slot) = Arc::clone(&self.slots).acquire_owned().await else {
            return;
        };
        let seq = delivery.seq;
        self.in_flight.insert(seq);
        let stop = durable_stop(&self.dispatcher, &self.shared);
        let (dispatcher, target, client_id, finished, shared) = (
            Arc::clone(&self.dispatcher),
            self.target.clone(),
            self.client_id.clone(),
            Arc::clone(&self.finished),
            Arc::clone(&self.shared),
        );
        let span = tracing::info_span!(parent: &delivery.parent, "webhook.deliver",
            client_id = %client_id, event_type = %delivery.kind);
        self.tasks.spawn(
            async move {
                let _ = dispatcher
                    .deliver_until(&client_id, &target, &delivery, stop)
                    .await;
                // Delivered, rejected or dead: the event no longer holds room.
                shared.full.store(false, Ordering::SeqCst);
                finished.lock().unwrap_or_else(|e| e.into_inner()).push(seq);
                drop(slot);
                // Reaped at once: a redelivery waiting for it reads it again.
                shared.wake.notify_one();
            }
            .instrument(span),
        );
    }
}

/// With a log, a delivery's retries stop waiting when the queue closes.
fn durable_stop(dispatcher: &Dispatcher, shared: &Shared) -> Option<watch::Receiver<bool>> {
    dispatcher.log.as_ref().map(|_| shared.stop.subscribe())
}

fn delivery_of(event: LoggedEvent) -> Delivery {
    Delivery {
        id: event.event_id,
        seq: event.seq,
        attempts: event.delivery.attempts,
        requeues: event.delivery.requeues,
        kind: event.kind,
        body: Bytes::from(event.body),
        parent: tracing::Span::none(),
    }
}
