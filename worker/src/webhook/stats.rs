//! Delivery counters: delivered, retried, dropped (by reason) and latency per outcome.
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parley_shared::metrics::metrics;

/// Why an event was not delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The session's queue was full (a slow or dead receiver).
    QueueFull,
    /// The session has no webhook URL (delivery paused).
    NoWebhook,
    /// The session's webhook does not take the event's type.
    NotSelected,
    /// The receiver answered 4xx (not 429).
    Rejected,
    /// Every attempt failed.
    Exhausted,
    /// The egress guard refused the destination.
    Egress,
}

impl DropReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::QueueFull => "queue-full",
            DropReason::NoWebhook => "no-webhook",
            DropReason::NotSelected => "not-selected",
            DropReason::Rejected => "rejected",
            DropReason::Exhausted => "exhausted",
            DropReason::Egress => "egress-refused",
        }
    }
}

#[derive(Debug, Default)]
pub struct DeliveryStats {
    pub delivered: AtomicU64,
    pub retried: AtomicU64,
    pub dropped_queue_full: AtomicU64,
    pub dropped_no_webhook: AtomicU64,
    pub dropped_not_selected: AtomicU64,
    pub dropped_rejected: AtomicU64,
    pub dropped_exhausted: AtomicU64,
    pub dropped_egress: AtomicU64,
    /// Sum of microseconds from enqueue to outcome, and count, per outcome.
    pub delivered_latency_us: AtomicU64,
    pub dropped_latency_us: AtomicU64,
}

impl DeliveryStats {
    pub fn delivered(&self, latency: Duration) {
        self.delivered.fetch_add(1, Ordering::Relaxed);
        self.delivered_latency_us
            .fetch_add(micros(latency), Ordering::Relaxed);
        let m = metrics();
        m.webhook_delivered.inc();
        m.webhook_duration
            .with_label_values(&["delivered"])
            .observe(latency.as_secs_f64());
    }

    pub fn retried(&self) {
        self.retried.fetch_add(1, Ordering::Relaxed);
        metrics().webhook_retried.inc();
    }

    pub fn dropped(&self, reason: DropReason, latency: Duration) {
        let counter = match reason {
            DropReason::QueueFull => &self.dropped_queue_full,
            DropReason::NoWebhook => &self.dropped_no_webhook,
            DropReason::NotSelected => &self.dropped_not_selected,
            DropReason::Rejected => &self.dropped_rejected,
            DropReason::Exhausted => &self.dropped_exhausted,
            DropReason::Egress => &self.dropped_egress,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        self.dropped_latency_us
            .fetch_add(micros(latency), Ordering::Relaxed);
        let m = metrics();
        m.webhook_dropped
            .with_label_values(&[reason.as_str()])
            .inc();
        m.webhook_duration
            .with_label_values(&["dropped"])
            .observe(latency.as_secs_f64());
    }

    /// Every event not delivered, whatever the reason.
    pub fn dropped_total(&self) -> u64 {
        [
            &self.dropped_queue_full,
            &self.dropped_no_webhook,
            &self.dropped_not_selected,
            &self.dropped_rejected,
            &self.dropped_exhausted,
            &self.dropped_egress,
        ]
        .iter()
        .map(|c| c.load(Ordering::Relaxed))
        .sum()
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}
