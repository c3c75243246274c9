//! Webhook delivery: one POST per event with the spec's headers and a Standard
//! Webhooks signature, retried per the receiver contract, through the egress guard,
//! from a bounded queue per session with bounded concurrency, so a slow receiver
//! can neither exhaust memory nor delay other sessions. With the event log, every
//! attempt is recorded there (state, attempts, last status), so whoever delivers
//! an event next continues its count, and an event whose attempts ran out or that
//! was rejected stays as a dead letter. Every drop is counted and logged without
//! content.
mod policy;
mod queue;
mod sign;
mod stats;

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use parley_model::ids::ClientId;
use parley_shared::db::Db;
use parley_shared::db::events::DeliveryState;
use parley_shared::egress::{self, Egress, EgressError};
use tokio::sync::watch;

pub use policy::{RetryPolicy, Verdict, classify};
pub use queue::SessionQueue;
pub use sign::signature;
pub use stats::{DeliveryStats, DropReason};

/// Where a session's events go now. An empty `url` pauses delivery.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Target {
    pub url: String,
    pub token: String,
}
parley_contract::debug_redacted!(Target { url; token });

/// One event, serialized once; `id` (the `webhook-id`) stays the same across retries.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub id: String,
    /// Its place in the session's event log (0 without a log).
    pub seq: u64,
    /// Attempts already made (by this worker or an earlier owner).
    pub attempts: u32,
    /// How many times the log's row was queued again when this was read
    /// (0 for a new event): its records apply only to that round.
    pub requeues: u32,
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
    /// The event log, where attempts are recorded (none: in memory only).
    log: Option<Db>,
}

impl Dispatcher {
    pub fn new(egress: Egress, policy: RetryPolicy) -> Result<Arc<Dispatcher>, EgressError> {
        Dispatcher::with_log(egress, policy, None)
    }

    /// A dispatcher that records every attempt in the event log of `log`.
    pub fn with_log(
        egress: Egress,
        policy: RetryPolicy,
        log: Option<Db>,
    ) -> Result<Arc<Dispatcher>, EgressError> {
        Ok(Arc::new(Dispatcher {
            // No redirects are followed: a receiver answers, it does not send us elsewhere.
            client: egress.client(policy.timeout, 0)?,
            egress,
            policy,
            stats: Arc::new(DeliveryStats::default()),
            log,
        }))
    }

    pub fn log(&self) -> Option<&Db> {
        self.log.as_ref()
    }

    pub fn stats(&self) -> &DeliveryStats {
        &self.stats
    }

    /// Opens the delivery queue of one session; events follow `target` as it changes.
    /// Events still pending in the log (an earlier owner's) are delivered first.
    pub fn session(
        self: &Arc<Self>,
        client_id: &ClientId,
        target: watch::Receiver<Target>,
    ) -> SessionQueue {
        SessionQueue::open(Arc::clone(self), client_id, target)
    }

    /// Delivers one event with retries; returns how it ended.
    pub async fn deliver(
        &self,
        client_id: &ClientId,
        target: &watch::Receiver<Target>,
        d: &Delivery,
    ) -> Result<(), DropReason> {
        match self.deliver_until(client_id, target, d, None).await {
            Delivered::Ended(outcome) => outcome,
            // Without a stop signal a delivery always ends.
            Delivered::Stopped => Err(DropReason::Exhausted),
        }
    }

    /// Delivers one event with retries until it ends, or until `stop` turns
    /// true while it waits for its next attempt: its session is handed over,
    /// and the event stays pending in the log, its attempts counted, for the
    /// next owner. An attempt under way is always finished and recorded
    /// first, so a handover never leaves a delivered event unrecorded.
    pub async fn deliver_until(
        &self,
        client_id: &ClientId,
        target: &watch::Receiver<Target>,
        d: &Delivery,
        stop: Option<watch::Receiver<bool>>,
    ) -> Delivered {
        let started = Instant::now();
        let outcome = match self.attempts(client_id, target, d, stop).await {
            Delivered::Ended(outcome) => outcome,
            Delivered::Stopped => {
                tracing::debug!(client_id = %client_id, event_id = %d.id, event_type = %d.kind,
                    "handed over while waiting for a retry; the event stays pending");
                return Delivered::Stopped;
            }
        };
        match outcome {
            Ok(()) => self.stats.delivered(started.elapsed()),
            Err(DropReason::NoWebhook) => {
                // The webhook was removed after the event was queued: as intended.
                self.stats.dropped(DropReason::NoWebhook, started.elapsed());
                tracing::debug!(client_id = %client_id, event_id = %d.id, event_type = %d.kind, "no webhook: event not delivered");
            }
            Err(reason) => {
                self.stats.dropped(reason, started.elapsed());
                tracing::warn!(client_id = %client_id, event_id = %d.id, event_type = %d.kind, reason = reason.as_str(), "webhook event dropped");
            }
        }
        Delivered::Ended(outcome)
    }

    async fn attempts(
        &self,
        client_id: &ClientId,
        target: &watch::Receiver<Target>,
        d: &Delivery,
        mut stop: Option<watch::Receiver<bool>>,
    ) -> Delivered {
        use Delivered::Ended;
        // An event taken over mid-retry continues its count; it gets one more
        // attempt at least.
        let first = d.attempts.min(self.policy.attempts.saturating_sub(1)) + 1;
        for attempt in first..=self.policy.attempts {
            // Read at every attempt: a new URL or a rotated token applies to the next call.
            let Target { url, token } = target.borrow().clone();
            if url.is_empty() {
                self.record(client_id, d, DeliveryState::None, None, false)
                    .await;
                return Ended(Err(DropReason::NoWebhook));
            }
            let (verdict, status) = match self.attempt(&url, &token, d).await {
                Ok(answer) => answer,
                Err(reason) => {
                    let state = match reason {
                        DropReason::Rejected => DeliveryState::Rejected,
                        _ => DeliveryState::Dead,
                    };
                    self.record(client_id, d, state, None, true).await;
                    return Ended(Err(reason));
                }
            };
            let wait = match verdict {
                Verdict::Delivered => {
                    self.record(client_id, d, DeliveryState::Delivered, status, true)
                        .await;
                    return Ended(Ok(()));
                }
                Verdict::Rejected => {
                    self.record(client_id, d, DeliveryState::Rejected, status, true)
                        .await;
                    return Ended(Err(DropReason::Rejected));
                }
                Verdict::Retry(after) => after,
            };
            let wait = match wait {
                _ if attempt == self.policy.attempts => None,
                Some(after) if after > self.policy.max_retry_after => None,
                Some(after) => Some(after.max(self.policy.delay(attempt))),
                None => Some(self.policy.delay(attempt)),
            };
            let Some(wait) = wait else {
                self.record(client_id, d, DeliveryState::Dead, status, true)
                    .await;
                return Ended(Err(DropReason::Exhausted));
            };
            self.record(client_id, d, DeliveryState::Pending, status, true)
                .await;
            self.stats.retried();
            if !wait_unless_stopped(wait, stop.as_mut()).await {
                return Delivered::Stopped;
            }
        }
        Ended(Err(DropReason::Exhausted))
    }

    /// Records how an attempt ended in the event log (when there is one). A
    /// failure to record is logged: the event may then be delivered again by
    /// a later owner (at least once), never lost.
    async fn record(
        &self,
        client_id: &ClientId,
        d: &Delivery,
        state: DeliveryState,
        status: Option<u16>,
        attempted: bool,
    ) {
        let Some(log) = &self.log else {
            return;
        };
        let recorded = if attempted {
            log.record_attempt(client_id.as_str(), d.seq, d.requeues, state, status)
                .await
        } else {
            log.set_event_state(client_id.as_str(), d.seq, d.requeues, state)
                .await
        };
        if let Err(e) = recorded {
            tracing::warn!(client_id = %client_id, event_id = %d.id, error = %e, "a delivery attempt was not recorded");
        }
    }

    /// One POST: what its answer means, and its status when there was one.
    async fn attempt(
        &self,
        url: &str,
        token: &str,
        d: &Delivery,
    ) -> Result<(Verdict, Option<u16>), DropReason> {
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
                let status = res.status().as_u16();
                Ok((classify(status, retry_after.as_deref()), Some(status)))
            }
            Err(e) if egress::refusal(&e).is_some() => Err(DropReason::Egress),
            // Timeouts and connection failures: the receiver may come back.
            Err(_) => Ok((Verdict::Retry(None), None)),
        }
    }
}

/// How a delivery ended, or that it was stopped between attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivered {
    Ended(Result<(), DropReason>),
    Stopped,
}

/// Sleeps `wait`; `false` when `stop` turned true (or its sender went away)
/// first.
async fn wait_unless_stopped(
    wait: std::time::Duration,
    stop: Option<&mut watch::Receiver<bool>>,
) -> bool {
    let Some(stop) = stop else {
        tokio::time::sleep(wait).await;
        return true;
    };
    tokio::select! {
        () = tokio::time::sleep(wait) => true,
        _ = stop.wait_for(|stopped| *stopped) => false,
    }
}

#[cfg(test)]
mod tests;
