//! Tracing setup (text or JSON logs, optional OTLP export) and trace-context
//! propagation through bus headers.
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::bus::Headers;

/// Keeps the exporter alive; flushes pending spans when dropped.
pub struct TelemetryGuard {
    provider: Option<SdkTracerProvider>,
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take() {
            let _ = provider.shutdown();
        }
    }
}

/// Parley's own log targets.
const OWN_TARGETS: &[&str] = &[
    "parley",
    "parley_api",
    "parley_worker",
    "parley_model",
    "parley_contract",
    "parley_shared",
    "parley_network",
    "parley_network_sandbox",
    "parley_network_whatsapp",
    "parley_migrations",
];

/// What third-party crates log at most unless named: their debug and trace
/// output carries statements with their values, frames and headers.
const THIRD_PARTY: &str = "info,sqlx=warn,sea_orm=warn,async_nats=warn";

/// The filter for `RUST_LOG`. A bare level more verbose than `info`
/// (`RUST_LOG=trace`) applies to Parley's own targets; third-party crates stay
/// at [`THIRD_PARTY`] unless a directive names them (`RUST_LOG=trace,sqlx=debug`).
pub fn log_filter(rust_log: Option<&str>) -> String {
    let Some(wanted) = rust_log.map(str::trim).filter(|s| !s.is_empty()) else {
        return THIRD_PARTY.to_string();
    };
    let mut directives = vec![THIRD_PARTY.to_string()];
    for d in wanted.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let verbose = matches!(d.to_ascii_lowercase().as_str(), "debug" | "trace");
        if verbose {
            directives.extend(OWN_TARGETS.iter().map(|t| format!("{t}={d}")));
        } else {
            directives.push(d.to_string());
        }
    }
    directives.join(",")
}

/// Installs the global subscriber. `RUST_LOG` filters (see [`log_filter`]; default `info`).
/// With an OTLP endpoint (HTTP/protobuf), spans are exported to `<endpoint>/v1/traces`.
pub fn init(
    service: &str,
    json: bool,
    otlp_endpoint: Option<&str>,
) -> anyhow::Result<TelemetryGuard> {
    let wanted = std::env::var("RUST_LOG").ok();
    let filter = EnvFilter::try_new(log_filter(wanted.as_deref()))
        .or_else(|_| EnvFilter::try_new(log_filter(None)))?;
    let provider = match otlp_endpoint {
        Some(endpoint) => Some(otlp_provider(service, endpoint)?),
        None => None,
    };
    let otel = provider
        .as_ref()
        .map(|p| tracing_opentelemetry::layer().with_tracer(p.tracer("parley")));
    let registry = tracing_subscriber::registry().with(filter).with(otel);
    let result = if json {
        registry
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .flatten_event(true)
                    .with_current_span(false),
            )
            .try_init()
    } else {
        registry.with(tracing_subscriber::fmt::layer()).try_init()
    };
    if let Err(e) = result {
        // A subscriber is already installed (tests that start several apps): keep it.
        tracing::debug!(error = %e, "tracing already initialised");
    }
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    Ok(TelemetryGuard { provider })
}

fn otlp_provider(service: &str, endpoint: &str) -> anyhow::Result<SdkTracerProvider> {
    use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
    let endpoint = endpoint.trim_end_matches('/');
    let endpoint = if endpoint.ends_with("/v1/traces") {
        endpoint.to_string()
    } else {
        format!("{endpoint}/v1/traces")
    };
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(endpoint)
        .with_headers(Default::default())
        .build()?;
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name(service.to_string())
        .build();
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build())
}

struct HeaderInjector<'a>(&'a mut Headers);

impl Injector for HeaderInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_string(), value);
    }
}

struct HeaderExtractor<'a>(&'a Headers);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }
    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

/// Writes the current span's trace context (W3C `traceparent`) into bus headers.
pub fn inject_context(headers: &mut Headers) {
    let cx = tracing::Span::current().context();
    TraceContextPropagator::new().inject_context(&cx, &mut HeaderInjector(headers));
}

/// Makes `span` a child of the trace context carried in bus headers, if any.
pub fn set_parent_from(span: &tracing::Span, headers: &Headers) {
    let cx = TraceContextPropagator::new().extract(&HeaderExtractor(headers));
    let _ = span.set_parent(cx);
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::TraceContextExt;
    use tracing_subscriber::layer::SubscriberExt;

    use super::*;

    #[test]
    fn trace_context_round_trips_through_bus_headers() {
        let provider = SdkTracerProvider::builder().build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
        tracing::subscriber::with_default(subscriber, || {
            let api_span = tracing::info_span!("api request");
            let mut headers = Headers::new();
            api_span.in_scope(|| inject_context(&mut headers));
            let parent = headers
                .get("traceparent")
                .expect("traceparent header")
                .clone();
            let api_trace = api_span.context().span().span_context().trace_id();
            assert!(parent.contains(&api_trace.to_string()), "{parent}");

            let worker_span = tracing::info_span!("worker command");
            set_parent_from(&worker_span, &headers);
            let worker_trace = worker_span.context().span().span_context().trace_id();
            assert_eq!(
                worker_trace, api_trace,
                "the worker's span joins the API's trace"
            );
        });
    }
}
