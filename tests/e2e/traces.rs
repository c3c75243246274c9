//! One trace from the API request to the webhook: an API process and a worker
//! process export spans over OTLP/HTTP to a local collector; the send's HTTP
//! span, the bus request, the worker's command span and the webhook delivery of
//! its `fromMe` event share one trace id, parent to child.
use std::collections::HashMap;
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use parley_tests::receiver::Receiver;
use prost::Message;
use serde_json::json;

use crate::events::support::{CONTACT, HOOK_TOKEN, contact};
use crate::support::*;

struct Span {
    service: String,
    name: String,
    trace: Vec<u8>,
    id: Vec<u8>,
    parent: Vec<u8>,
}

fn spans(export: &[u8]) -> Vec<Span> {
    let request = ExportTraceServiceRequest::decode(export).expect("an OTLP trace export");
    let mut out = Vec::new();
    for resource in request.resource_spans {
        let service = resource
            .resource
            .iter()
            .flat_map(|r| &r.attributes)
            .find(|a| a.key == "service.name")
            .and_then(|a| a.value.as_ref())
            .map(|v| format!("{:?}", v.value))
            .unwrap_or_default();
        for scope in resource.scope_spans {
            for s in scope.spans {
                out.push(Span {
                    service: service.clone(),
                    name: s.name,
                    trace: s.trace_id,
                    id: s.span_id,
                    parent: s.parent_span_id,
                });
            }
        }
    }
    out
}

#[tokio::test]
async fn a_send_is_one_trace_from_the_api_to_the_webhook() {
    let dir = tempfile::tempdir().unwrap();
    let mut collector = Receiver::start().await;
    let endpoint = collector.url.trim_end_matches("/hook").to_string();
    let env = services::ClusterEnv::new().await;
    let mut hook = Receiver::start().await;
    let (mut api, mut worker) = api_and_worker(
        &env,
        dir.path(),
        &[
            ("PARLEY_ALLOW_PRIVATE_EGRESS", "true"),
            ("PARLEY_ALLOW_HTTP_WEBHOOKS", "true"),
            ("PARLEY_OTLP_ENDPOINT", &endpoint),
        ],
    )
    .await;
    crate::events::support::hooked(&api, "tr1", &hook.url, json!({})).await;
    contact(&api).await;
    let (status, sent) = post(
        &api,
        "/send-message",
        json!({"clientId": "tr1", "to": format!("+{CONTACT}"), "body": "traced"}),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    let event = hook.next(Duration::from_secs(10)).await;
    assert_eq!(event.json()["messageId"], sent["messageId"]);
    assert_eq!(
        event.header("authorization"),
        Some(format!("Bearer {HOOK_TOKEN}").as_str())
    );

    // Both processes flush their spans when they stop.
    assert_eq!(api.terminate().await, Some(0), "{}", api.output());
    assert_eq!(worker.terminate().await, Some(0), "{}", worker.output());
    let mut all: Vec<Span> = Vec::new();
    while let Some(req) = collector.maybe_next(Duration::from_secs(2)).await {
        assert_eq!(req.path, "/v1/traces");
        all.extend(spans(&req.body));
    }
    let send = all
        .iter()
        .find(|s| s.name == "POST /send-message")
        .unwrap_or_else(|| {
            let names: Vec<_> = all.iter().map(|s| (&s.service, &s.name)).collect();
            panic!("no span of the send request among {names:?}")
        });
    let trace: Vec<&Span> = all.iter().filter(|s| s.trace == send.trace).collect();
    let by_id: HashMap<&[u8], &Span> = trace.iter().map(|s| (s.id.as_slice(), *s)).collect();
    let find = |name: &str, service: &str| {
        trace
            .iter()
            .find(|s| s.name == name && s.service.contains(service))
            .unwrap_or_else(|| {
                let names: Vec<_> = trace.iter().map(|s| (&s.service, &s.name)).collect();
                panic!("no {name} span of {service} in the send's trace: {names:?}")
            })
    };
    let bus = find("bus.request", "parley-api");
    let command = find("session command", "parley-worker");
    let webhook = find("webhook.deliver", "parley-worker");
    // Each is a descendant of the one before.
    let descends = |child: &Span, ancestor: &Span| {
        let mut at = child;
        while let Some(parent) = by_id.get(at.parent.as_slice()) {
            if parent.id == ancestor.id {
                return true;
            }
            at = parent;
        }
        false
    };
    assert!(descends(bus, send), "bus request under the HTTP span");
    assert!(
        descends(command, bus),
        "worker command under the bus request"
    );
    assert!(
        descends(webhook, command),
        "webhook delivery under the worker command"
    );
}
