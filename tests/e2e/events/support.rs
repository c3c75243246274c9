//! Helpers of the event tests: a session linked with its webhook pointing at a
//! local receiver, messages injected through the sandbox, header checks.
use std::time::Duration;

use base64::Engine;
use parley_tests::receiver::{Received, Receiver};
use serde_json::{Value, json};

use crate::support::*;

/// The phone the sessions link as.
pub const OWN_PHONE: &str = "4915100000300";
/// A contact that writes to the sessions.
pub const CONTACT: &str = "4917600000301";
/// Webhook tokens are 32 characters or more.
pub const HOOK_TOKEN: &str = "events-webhook-token-0123456789ab";

/// Longest wait for one webhook request.
pub const WAIT: Duration = Duration::from_secs(10);

/// What lets a deployment deliver to loopback receivers over http.
pub const EVENT_VARS: &[(&str, &str)] = &[
    ("PARLEY_ALLOW_HTTP_WEBHOOKS", "true"),
    ("PARLEY_ALLOW_PRIVATE_EGRESS", "true"),
];

/// `parley serve` on the sandbox, delivering to loopback receivers over http.
pub async fn serve_events(dir: &std::path::Path) -> Parley {
    serve_with(dir, EVENT_VARS).await
}

/// Turns on the opt-in `events` of session `id` (`/set-events`); its answer.
pub async fn turn_on(p: &Parley, id: &str, events: &[&str]) -> Value {
    let (status, set) = post(p, "/set-events", json!({"clientId": id, "events": events})).await;
    assert_eq!(status, 200, "{set}");
    set
}

/// Starts `id` with its webhook at `hook` (plus `more` start settings), links
/// it as [`OWN_PHONE`] and waits until it is connected; returns its LID.
pub async fn hooked(p: &Parley, id: &str, hook: &str, more: Value) -> String {
    hooked_as(p, id, hook, more, OWN_PHONE).await
}

/// [`hooked`], linked as `phone` (sessions of one phone are devices of one
/// account on the real network: each receives what the account receives).
pub async fn hooked_as(p: &Parley, id: &str, hook: &str, more: Value, phone: &str) -> String {
    started(p, id, hook, more).await;
    linked_as(p, id, phone).await
}

/// Starts `id` with its webhook at `hook` (plus `more` start settings) and
/// waits until it shows a QR code.
pub async fn started(p: &Parley, id: &str, hook: &str, more: Value) {
    let mut body = json!({"webhookUrl": hook, "webhookToken": HOOK_TOKEN});
    if let (Some(body), Some(more)) = (body.as_object_mut(), more.as_object()) {
        body.extend(more.clone());
    }
    let (status, started) = post(p, &format!("/start?clientId={id}"), body).await;
    assert_eq!(status, 200, "{started}");
    eventually(15, "a QR code", || async {
        let (_, body) = get(p, &format!("/qr?clientId={id}")).await;
        (body["status"] == "qr").then_some(())
    })
    .await;
}

/// The phone `phone` links the started session `id`; waits until it is
/// connected and returns its LID.
pub async fn linked_as(p: &Parley, id: &str, phone: &str) -> String {
    let (status, linked) = post(
        p,
        "/sandbox/link",
        json!({"phone": phone, "clientId": id, "name": "Own Phone"}),
    )
    .await;
    assert_eq!(status, 200, "{linked}");
    eventually(15, "connected", || async {
        let (_, body) = post(p, "/check-state", json!({"clientId": id})).await;
        (body["status"] == true).then_some(())
    })
    .await;
    linked["lid"].as_str().expect("lid").to_string()
}

/// Registers [`CONTACT`] with a name; returns its LID.
pub async fn contact(p: &Parley) -> String {
    let (status, body) = post(
        p,
        "/sandbox/contacts",
        json!({"phone": CONTACT, "name": "Carla"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["lid"].as_str().expect("lid").to_string()
}

/// Someone sends the session a message; returns its id.
pub async fn inject(p: &Parley, id: &str, message: Value) -> String {
    let mut body = json!({"clientId": id, "from": CONTACT});
    if let (Some(body), Some(message)) = (body.as_object_mut(), message.as_object()) {
        body.extend(message.clone());
    }
    let (status, sent) = post(p, "/sandbox/messages", body).await;
    assert_eq!(status, 200, "{sent}");
    sent["messageId"].as_str().expect("messageId").to_string()
}

/// A text from [`CONTACT`]; returns its id.
pub async fn text(p: &Parley, id: &str, body: &str) -> String {
    inject(p, id, json!({"type": "text", "body": body})).await
}

/// Takes requests until the one for `message_id` (earlier ones are returned too).
pub async fn until_message(rx: &mut Receiver, message_id: &str) -> (Received, Vec<Received>) {
    let mut before = Vec::new();
    loop {
        let req = rx.next(WAIT).await;
        if req.json()["messageId"] == message_id {
            return (req, before);
        }
        before.push(req);
    }
}

/// Waits for the webhook request of `message_id`, which must be the next
/// one: nothing was delivered before it.
pub async fn next_is_message(rx: &mut Receiver, message_id: &str) -> Received {
    let (req, before) = until_message(rx, message_id).await;
    assert!(
        before.is_empty(),
        "delivered before {message_id}: {:?}",
        before.iter().map(|r| r.json()).collect::<Vec<_>>()
    );
    req
}

/// Each of `cases` posted to `path` is refused with its status and an `{error}`
/// that says something.
pub async fn refused<const N: usize>(p: &Parley, path: &str, cases: [(Value, u16); N]) {
    for (body, status) in cases {
        let (got, answer) = post(p, path, body.clone()).await;
        assert_eq!(got, status, "{body}: {answer}");
        assert!(
            answer["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{answer}"
        );
    }
}

/// Checks the spec's headers and the Standard Webhooks signature of `req`.
pub fn assert_headers(req: &Received, token: &str) {
    let event = req.json();
    assert_eq!(req.method, "POST");
    let bearer = format!("Bearer {token}");
    assert_eq!(req.header("authorization"), Some(bearer.as_str()));
    assert_eq!(req.header("user-agent"), Some("Parley-Messaging/1"));
    assert_eq!(req.header("x-sn-event"), event["type"].as_str());
    assert!(
        req.header("content-type")
            .is_some_and(|c| c.starts_with("application/json")),
        "{:?}",
        req.headers
    );
    let mut headers = http::HeaderMap::new();
    for name in ["webhook-id", "webhook-timestamp", "webhook-signature"] {
        let value = req.header(name).unwrap_or_else(|| panic!("{name} missing"));
        headers.insert(name, value.parse().unwrap());
    }
    let secret = format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(token)
    );
    standardwebhooks::Webhook::new(&secret)
        .unwrap()
        .verify(&req.body, &headers)
        .expect("a Standard Webhooks verifier accepts the signature");
}

/// `parley_webhook_dropped_total{reason=...}` as the process reports it.
pub async fn dropped(p: &Parley, reason: &str) -> u64 {
    let res = client().get(p.ops_url("/metrics")).send().await.unwrap();
    let text = res.text().await.unwrap();
    let prefix = format!("parley_webhook_dropped_total{{reason=\"{reason}\"}}");
    text.lines()
        .find(|l| l.starts_with(&prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse::<f64>().ok())
        .map_or(0, |v| v as u64)
}

/// Waits until `reason` drops reach `count`.
pub async fn dropped_reaches(p: &Parley, reason: &str, count: u64) {
    eventually(30, &format!("{count} drops ({reason})"), || async {
        (dropped(p, reason).await >= count).then_some(())
    })
    .await;
}
