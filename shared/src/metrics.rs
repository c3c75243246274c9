//! Prometheus metrics of every role, in one registry, rendered as text at `/metrics`.
use std::sync::LazyLock;

use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry, TextEncoder,
};

/// Latency buckets in seconds, from sub-millisecond bus hops to slow receivers.
const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

pub struct Metrics {
    registry: Registry,
    pub http_requests: IntCounterVec,
    pub http_duration: HistogramVec,
    pub bus_duration: HistogramVec,
    pub bus_no_responders: IntCounter,
    pub bus_timeouts: IntCounter,
    pub sessions: IntGaugeVec,
    pub lease_events: IntCounterVec,
    pub reconnects: IntCounter,
    pub webhook_delivered: IntCounter,
    pub webhook_retried: IntCounter,
    pub webhook_dropped: IntCounterVec,
    pub webhook_duration: HistogramVec,
    pub event_log_failures: IntCounterVec,
    /// Events per event-log transaction (group commit).
    pub event_log_batch: Histogram,
    /// Writes per device-store transaction (the real network's group commit).
    pub device_store_batch: Histogram,
    pub history_writes: IntCounterVec,
    /// Messages of history syncs, by what became of them.
    pub history_sync_messages: IntCounterVec,
    pub media_stored_bytes: IntCounter,
    pub media_mirrors_active: IntGauge,
    pub media_not_stored: IntCounterVec,
    pub media_sends_refused: IntCounter,
}

fn gauge(registry: &Registry, name: &str, help: &str) -> IntGauge {
    let g = IntGauge::new(name, help).unwrap_or_else(|e| panic!("metric {name}: {e}"));
    registry
        .register(Box::new(g.clone()))
        .unwrap_or_else(|e| panic!("metric {name}: {e}"));
    g
}

fn counter(registry: &Registry, name: &str, help: &str) -> IntCounter {
    let c = IntCounter::new(name, help).unwrap_or_else(|e| panic!("metric {name}: {e}"));
    registry
        .register(Box::new(c.clone()))
        .unwrap_or_else(|e| panic!("metric {name}: {e}"));
    c
}

fn counter_vec(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    let c = IntCounterVec::new(Opts::new(name, help), labels)
        .unwrap_or_else(|e| panic!("metric {name}: {e}"));
    registry
        .register(Box::new(c.clone()))
        .unwrap_or_else(|e| panic!("metric {name}: {e}"));
    c
}

/// Events per group-commit transaction: 1 when idle, up to 256.
const BATCH_BUCKETS: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];

fn histogram(registry: &Registry, name: &str, help: &str, buckets: &[f64]) -> Histogram {
    let opts = HistogramOpts::new(name, help).buckets(buckets.to_vec());
    let h = Histogram::with_opts(opts).unwrap_or_else(|e| panic!("metric {name}: {e}"));
    registry
        .register(Box::new(h.clone()))
        .unwrap_or_else(|e| panic!("metric {name}: {e}"));
    h
}

fn histogram_vec(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> HistogramVec {
    let opts = HistogramOpts::new(name, help).buckets(BUCKETS.to_vec());
    let h = HistogramVec::new(opts, labels).unwrap_or_else(|e| panic!("metric {name}: {e}"));
    registry
        .register(Box::new(h.clone()))
        .unwrap_or_else(|e| panic!("metric {name}: {e}"));
    h
}

impl Metrics {
    // The names and labels are constants: registration can only fail on a typo,
    // which the first test run shows.
    fn new() -> Metrics {
        let r = Registry::new_custom(Some("parley".into()), None).unwrap_or_default();
        let sessions = IntGaugeVec::new(
            Opts::new("sessions", "Sessions owned by this worker, by state"),
            &["state"],
        )
        .unwrap_or_else(|e| panic!("metric sessions: {e}"));
        r.register(Box::new(sessions.clone()))
            .unwrap_or_else(|e| panic!("metric sessions: {e}"));
        Metrics {
            http_requests: counter_vec(
                &r,
                "http_requests_total",
                "HTTP requests by route, method and status",
                &["route", "method", "status"],
            ),
            http_duration: histogram_vec(
                &r,
                "http_request_duration_seconds",
                "HTTP request latency by route",
                &["route", "method"],
            ),
            bus_duration: histogram_vec(
                &r,
                "bus_request_duration_seconds",
                "Bus request-reply latency by subject kind and outcome",
                &["subject", "outcome"],
            ),
            bus_no_responders: counter(
                &r,
                "bus_no_responders_total",
                "Bus requests nobody subscribed to",
            ),
            bus_timeouts: counter(
                &r,
                "bus_timeouts_total",
                "Bus requests without an answer in time",
            ),
            sessions,
            lease_events: counter_vec(
                &r,
                "lease_events_total",
                "Lease acquisitions, renewals and losses",
                &["event"],
            ),
            reconnects: counter(
                &r,
                "reconnects_total",
                "Session reconnects after a dropped connection",
            ),
            webhook_delivered: counter(&r, "webhook_delivered_total", "Webhook events delivered"),
            webhook_retried: counter(&r, "webhook_retried_total", "Webhook delivery retries"),
            webhook_dropped: counter_vec(
                &r,
                "webhook_dropped_total",
                "Webhook events not delivered, by reason",
                &["reason"],
            ),
            event_log_failures: counter_vec(
                &r,
                "event_log_failures_total",
                "Events the event log could not take, by origin (received: not acknowledged to the network; sent: retried) and reason (full, unavailable)",
                &["origin", "reason"],
            ),
            event_log_batch: histogram(
                &r,
                "event_log_batch_events",
                "Events written per event-log transaction (group commit: what queued while the previous one committed)",
                BATCH_BUCKETS,
            ),
            device_store_batch: histogram(
                &r,
                "device_store_batch_writes",
                "Device-store writes per transaction of the real network's sessions (group commit: what queued while the previous one committed)",
                BATCH_BUCKETS,
            ),
            webhook_duration: histogram_vec(
                &r,
                "webhook_delivery_seconds",
                "Time to deliver or drop a webhook event",
                &["outcome"],
            ),
            history_writes: counter_vec(
                &r,
                "history_writes_total",
                "Hosted-inbox writes by outcome",
                &["outcome"],
            ),
            history_sync_messages: counter_vec(
                &r,
                "history_sync_messages_total",
                "Messages of the phone's history syncs: stored in the hosted inbox, skipped (no hosted inbox, or a kind it does not keep), or failed",
                &["outcome"],
            ),
            media_stored_bytes: counter(
                &r,
                "media_stored_bytes_total",
                "Bytes written to the media store",
            ),
            media_mirrors_active: gauge(
                &r,
                "media_mirrors_active",
                "Inbound files being copied to the media store now",
            ),
            media_not_stored: counter_vec(
                &r,
                "media_not_stored_total",
                "Inbound files history stored without their file, by reason",
                &["reason"],
            ),
            media_sends_refused: counter(
                &r,
                "media_sends_refused_total",
                "Media sends refused (503) because the worker's send slots stayed full",
            ),
            registry: r,
        }
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            tracing::warn!(error = %e, "cannot encode metrics");
        }
        String::from_utf8(out).unwrap_or_default()
    }
}

/// The process's metrics.
pub fn metrics() -> &'static Metrics {
    static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);
    &METRICS
}

#[cfg(test)]
mod tests {
    #[test]
    fn renders_registered_metrics() {
        let m = super::metrics();
        m.bus_no_responders.inc();
        m.http_requests
            .with_label_values(&["/start", "POST", "200"])
            .inc();
        let text = m.render();
        assert!(text.contains("parley_bus_no_responders_total"));
        assert!(
            text.contains(
                r#"parley_http_requests_total{method="POST",route="/start",status="200"}"#
            ),
            "{text}"
        );
    }
}
