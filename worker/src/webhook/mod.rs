//! Webhook delivery: one POST per event with the spec's headers and a Standard
//! Webhooks signature, retried per the receiver contract, through the egress guard,
//! from a bounded queue per session with bounded concurrency, so a slow receiver
//! can neither exhaust memory nor delay other sessions. Every drop is counted and
//! logged without content.
mod policy;
mod sign;
mod stats;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use parley_shared::egress::{self, Egress, EgressError};
use tokio::sync::{Semaphore, mpsc, watch};
use tracing::Instrument;

pub use policy::{RetryPolicy, Verdict, classify};
pub use sign::signature;
pub use stats::{DeliveryStats, DropReason};

/// Where a session's events go now. An empty `url` pauses delivery.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Target {
    pub url: String,
    pub token: String,
}
parley_shared::debug_redacted!(Target { url; token });

/// One event, serialized once; `id` (the `webhook-id`) stays the same across retries.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub id: String,
    /// The event type (`X-SN-Event`).
    pub kind: String,
    pub body: Bytes,
    /// Where the event came from (an API send's trace, or none): the delivery's
    /// span is its child, so one trace shows the request through to the webhook.
    pub parent: tracing::Span,
}

/// Shared by every session of a worker: the HTTP client, the policy, the counters.
pub struct Dispatcher {
    client: reqwest::Client,
    egress: Egress,
    policy: RetryPolicy,
    stats: Arc<DeliveryStats>,
}

impl Dispatcher {
    pub fn new(egress: Egress, policy: RetryPolicy) -> Result<Arc<Dispatcher>, EgressError> {
        Ok(Arc::new(Dispatcher {
            // No redirects are followed: a receiver answers, it does not send us elsewhere.
            client: egress.client(policy.timeout, 0)?,
            egress,
            policy,
            stats: Arc::new(DeliveryStats::default()),
        }))
    }

    pub fn stats(&self) -> &DeliveryStats {
        &self.stats
    }

    /// Opens the delivery queue of one session; events follow `target` as it changes.
    pub fn session(
        self: &Arc<Self>,
        client_id: &str,
        target: watch::Receiver<Target>,
    ) -> SessionQueue {
        let (tx, rx) = mpsc::channel(self.policy.queue.max(1));
        let task = tokio::spawn(run_queue(
            Arc::clone(self),
            client_id.to_string(),
            target,
            rx,
        ));
        SessionQueue {
            tx,
            task,
            stats: Arc::clone(&self.stats),
            client_id: client_id.to_string(),
        }
    }

    /// Delivers one event with retries; returns how it ended.
    pub async fn deliver(
        &self,
        client_id: &str,
        target: &watch::Receiver<Target>,
        d: &Delivery,
    ) -> Result<(), DropReason> {
        let started = Instant::now();
        let outcome = self.attempts(target, d).await;
        match outcome {
            Ok(()) => self.stats.delivered(started.elapsed()),
            Err(DropReason::NoWebhook) => {
                // The webhook was removed after the event was queued: as intended.
                self.stats.dropped(DropReason::NoWebhook, started.elapsed());
                tracing::debug!(client_id, event_id = %d.id, event_type = %d.kind, "no webhook: event not delivered");
            }
            Err(reason) => {
                self.stats.dropped(reason, started.elapsed());
                tracing::warn!(client_id, event_id = %d.id, event_type = %d.kind, reason = reason.as_str(), "webhook event dropped");
            }
        }
        outcome
    }

    async fn attempts(
        &self,
        target: &watch::Receiver<Target>,
        d: &Delivery,
    ) -> Result<(), DropReason> {
        for attempt in 1..=self.policy.attempts {
            // Read at every attempt: a new URL or a rotated token applies to the next call.
            let Target { url, token } = target.borrow().clone();
            if url.is_empty() {
                return Err(DropReason::NoWebhook);
            }
            let verdict = self.attempt(&url, &token, d).await?;
            let wait = match verdict {
                Verdict::Delivered => return Ok(()),
                Verdict::Rejected => return Err(DropReason::Rejected),
                Verdict::Retry(after) => after,
            };
            if attempt == self.policy.attempts {
                break;
            }
            let wait = match wait {
                Some(after) if after > self.policy.max_retry_after => {
                    return Err(DropReason::Exhausted);
                }
                Some(after) => after.max(self.policy.delay(attempt)),
                None => self.policy.delay(attempt),
            };
            self.stats.retried();
            tokio::time::sleep(wait).await;
        }
        Err(DropReason::Exhausted)
    }

    async fn attempt(&self, url: &str, token: &str, d: &Delivery) -> Result<Verdict, DropReason> {
        let parsed = url::Url::parse(url).map_err(|_| DropReason::Rejected)?;
        if self.egress.check_url(&parsed).is_err() {
            return Err(DropReason::Egress);
        }
        let timestamp = chrono::Utc::now().timestamp();
        let sent = self
            .client
            .post(parsed)
            .bearer_auth(token)
            .header("user-agent", "Parley-Messaging/1")
            .header("x-sn-event", &d.kind)
            .header("content-type", "application/json")
            .header("webhook-id", &d.id)
            .header("webhook-timestamp", timestamp.to_string())
            .header(
                "webhook-signature",
                signature(token, &d.id, timestamp, &d.body),
            )
            .body(d.body.clone())
            .send()
            .await;
        match sent {
            Ok(res) => {
                let retry_after = res
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                Ok(classify(res.status().as_u16(), retry_after.as_deref()))
            }
            Err(e) if egress::refusal(&e).is_some() => Err(DropReason::Egress),
            // Timeouts and connection failures: the receiver may come back.
            Err(_) => Ok(Verdict::Retry(None)),
        }
    }
}

/// The sending side of one session's queue; dropping it stops the queue after the
/// events already in flight.
pub struct SessionQueue {
    tx: mpsc::Sender<(Delivery, Instant)>,
    task: tokio::task::JoinHandle<()>,
    stats: Arc<DeliveryStats>,
    client_id: String,
}

impl SessionQueue {
    /// Queues an event; `false` when the queue is full and the event was dropped.
    pub fn enqueue(&self, d: Delivery) -> bool {
        match self.tx.try_send((d, Instant::now())) {
            Ok(()) => true,
            Err(
                mpsc::error::TrySendError::Full((d, at))
                | mpsc::error::TrySendError::Closed((d, at)),
            ) => {
                self.stats.dropped(DropReason::QueueFull, at.elapsed());
                tracing::warn!(client_id = %self.client_id, event_id = %d.id, event_type = %d.kind,
                    reason = DropReason::QueueFull.as_str(), "webhook event dropped");
                false
            }
        }
    }

    /// Counts an event not queued because the session has no webhook (the
    /// `no-webhook` drop; not logged, it is the session's configuration).
    pub fn skip_without_webhook(&self) {
        self.stats.dropped(DropReason::NoWebhook, Duration::ZERO);
    }

    /// Stops taking events and waits until those queued and in flight are done.
    pub async fn close(self) {
        drop(self.tx);
        let _ = self.task.await;
    }
}

async fn run_queue(
    dispatcher: Arc<Dispatcher>,
    client_id: String,
    target: watch::Receiver<Target>,
    mut rx: mpsc::Receiver<(Delivery, Instant)>,
) {
    let slots = Arc::new(Semaphore::new(dispatcher.policy.concurrency.max(1)));
    let mut in_flight = tokio::task::JoinSet::new();
    while let Some((delivery, _queued_at)) = rx.recv().await {
        let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
            break;
        };
        let (dispatcher, target, client_id) =
            (Arc::clone(&dispatcher), target.clone(), client_id.clone());
        let span = tracing::info_span!(parent: &delivery.parent, "webhook.deliver",
            client_id = %client_id, event_type = %delivery.kind);
        in_flight.spawn(
            async move {
                let _ = dispatcher.deliver(&client_id, &target, &delivery).await;
                drop(slot);
            }
            .instrument(span),
        );
        // Reap finished deliveries so the set stays small.
        while in_flight.try_join_next().is_some() {}
    }
    while in_flight.join_next().await.is_some() {}
}

#[cfg(test)]
mod tests;
