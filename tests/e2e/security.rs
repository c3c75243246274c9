//! What a hostile contact, customer or URL can do with the gateway: files a
//! contact sends are never active content, on the gateway's origin (`parley
//! serve` serves `/media/...` itself) nor in the bucket (the cluster); the
//! egress guard holds for webhooks, poll lookups and media URLs even when
//! the environment names a proxy; secrets at rest (`at_rest`), large files
//! received (`mirror`) and sent (`sends`) streamed, never whole in memory.
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine;
use parley_tests::receiver::Receiver;
use serde_json::{Value, json};

use crate::events::history::{org, serve_hosted};
use crate::events::support::*;
use crate::support::*;

mod at_rest;
mod builds;
mod mirror;
mod sends;

/// An HTML page with a script, a scriptable SVG and a PNG a contact sends,
/// each with the headers its stored copy is served with.
const FILES: &[(&str, &str, &str)] = &[
    (
        "document",
        "text/html",
        "<html><script>alert(document.cookie)</script></html>",
    ),
    (
        "document",
        "image/svg+xml",
        "<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(1)\"/>",
    ),
    (
        "image",
        "image/png",
        "\u{89}PNG\r\n\u{1a}\nnot really a picture",
    ),
];

/// Injects each of [`FILES`] into session `id` and returns each stored link.
async fn mirrored(p: &Parley, rx: &mut Receiver, id: &str) -> Vec<String> {
    let mut links = Vec::new();
    for (kind, mime, body) in FILES {
        let data = base64::engine::general_purpose::STANDARD.encode(body.as_bytes());
        let sent = inject(
            p,
            id,
            json!({"type": kind, "data": data, "mimeType": mime, "fileName": "x"}),
        )
        .await;
        let (e, _) = until_message(rx, &sent).await;
        let e: Value = e.json();
        assert_eq!(
            e["media"]["mimeType"], *mime,
            "the event keeps the declared type: {e}"
        );
        let link = e["media"]["downloadUrl"].as_str().unwrap_or_default();
        assert!(link.starts_with("http"), "a stored link: {e}");
        links.push(link.to_string());
    }
    links
}

/// The Content-Type and Content-Disposition a stored file of `mime` is
/// served with: raster images inline, everything else as inert bytes.
fn served_as(mime: &str) -> (&'static str, &'static str) {
    match mime {
        "image/png" => ("image/png", "inline"),
        _ => ("application/octet-stream", "attachment"),
    }
}

fn header(res: &reqwest::Response, name: &str) -> String {
    res.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn files_from_contacts_never_run_on_the_gateways_origin() {
    let dir = tempfile::tempdir().unwrap();
    let mut rx = Receiver::start().await;
    let p = serve_hosted(dir.path(), &rx.url, &[]).await;
    hooked(&p, "sec1", &rx.url, json!({})).await;
    org(&p, "sec1").await;
    contact(&p).await;
    let links = mirrored(&p, &mut rx, "sec1").await;
    for (link, (_, mime, body)) in links.iter().zip(FILES) {
        assert!(link.starts_with(&p.base), "served by the gateway: {link}");
        let res = client().get(link).send().await.unwrap();
        assert_eq!(res.status(), 200, "{link}");
        assert_eq!(header(&res, "x-content-type-options"), "nosniff", "{mime}");
        assert_eq!(header(&res, "content-security-policy"), "sandbox", "{mime}");
        let (kind, disposition) = served_as(mime);
        assert_eq!(header(&res, "content-type"), kind, "{mime}");
        assert_eq!(header(&res, "content-disposition"), disposition, "{mime}");
        assert_eq!(res.bytes().await.unwrap().as_ref(), body.as_bytes());
    }
}

#[tokio::test]
async fn files_from_contacts_are_stored_inert_in_the_bucket() {
    let dir = tempfile::tempdir().unwrap();
    let env = services::ClusterEnv::new().await;
    let mut rx = Receiver::start().await;
    let mut more = EVENT_VARS.to_vec();
    more.push(("PARLEY_HOSTED_RECEIVER_URL", &rx.url));
    let (api, _worker) = api_and_worker(&env, dir.path(), &more).await;
    hooked(&api, "sec2", &rx.url, json!({})).await;
    org(&api, "sec2").await;
    contact(&api).await;
    let links = mirrored(&api, &mut rx, "sec2").await;
    for (link, (_, mime, body)) in links.iter().zip(FILES) {
        assert!(link.contains(&env.bucket), "in the bucket: {link}");
        let res = client().get(link).send().await.unwrap();
        assert_eq!(res.status(), 200, "{link}");
        let (kind, disposition) = served_as(mime);
        assert_eq!(header(&res, "content-type"), kind, "{mime}");
        assert_eq!(header(&res, "content-disposition"), disposition, "{mime}");
        assert_eq!(res.bytes().await.unwrap().as_ref(), body.as_bytes());
    }
}

/// A proxy that counts the connections it gets and answers each `200 {}`.
async fn counting_proxy() -> (String, Arc<AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&count);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = socket.read(&mut buf).await;
                let _ = socket
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
                    .await;
            });
        }
    });
    (url, count)
}

#[tokio::test]
async fn the_environments_proxy_never_carries_a_customer_url() {
    let (proxy, used) = counting_proxy().await;
    let dir = tempfile::tempdir().unwrap();
    let p = serve_with(
        dir.path(),
        &[
            ("PARLEY_ALLOW_HTTP_WEBHOOKS", "true"),
            ("HTTP_PROXY", &proxy),
            ("http_proxy", &proxy),
            ("HTTPS_PROXY", &proxy),
            ("ALL_PROXY", &proxy),
        ],
    )
    .await;
    // Names that resolve to loopback: through the proxy they would pass,
    // since the proxy resolves them; direct, the guard refuses them.
    let internal = "http://localhost:9";
    hooked(
        &p,
        "sec3",
        &format!("{internal}/hook"),
        json!({"pollLookupUrl": format!("{internal}/poll")}),
    )
    .await;
    contact(&p).await;

    // A webhook: refused by the guard, never handed to the proxy.
    text(&p, "sec3", "hello").await;
    dropped_reaches(&p, "egress-refused", 1).await;
    // A poll lookup, before the vote's own (refused) webhook.
    inject(
        &p,
        "sec3",
        json!({"type": "vote_update", "pollMessageId": "3EB0UNKNOWNPOLL", "selectedOptions": ["Yes"]}),
    )
    .await;
    dropped_reaches(&p, "egress-refused", 2).await;
    // A file by URL: the send fails as the spec says for a refused URL.
    let (status, body) = post(
        &p,
        "/send-media-message",
        json!({"clientId": "sec3", "to": format!("+{CONTACT}"), "downloadUrl": format!("{internal}/a.png")}),
    )
    .await;
    assert_eq!(status, 502, "{body}");
    assert!(
        body["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{body}"
    );

    assert_eq!(
        used.load(Ordering::SeqCst),
        0,
        "the environment's proxy carried a customer URL:\n{}",
        p.output()
    );
}

#[tokio::test]
async fn no_secret_reaches_the_logs_even_at_trace_level() {
    const SESSION_SECRET: &str = "session-secret-0123456789abcdef";
    const NEW_HOOK_TOKEN: &str = "rotated-webhook-token-0123456789abcdef";
    let dir = tempfile::tempdir().unwrap();
    let mut rx = Receiver::start().await;
    let mut vars = EVENT_VARS.to_vec();
    vars.push(("RUST_LOG", "trace"));
    let p = serve_with(dir.path(), &vars).await;
    hooked(&p, "sec4", &rx.url, json!({})).await;
    contact(&p).await;
    let (status, body) = post(
        &p,
        "/set-api-secret",
        json!({"clientId": "sec4", "secret": SESSION_SECRET}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let first = text(&p, "sec4", "hello").await;
    until_message(&mut rx, &first).await;
    let (status, body) = post(
        &p,
        "/set-webhook",
        json!({"clientId": "sec4", "webhookUrl": rx.url, "webhookToken": NEW_HOOK_TOKEN}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let second = text(&p, "sec4", "again").await;
    let (got, _) = until_message(&mut rx, &second).await;
    assert_headers(&got, NEW_HOOK_TOKEN);
    // A request with the session's secret, and one with a wrong token.
    let res = client()
        .post(p.url("/check-state"))
        .bearer_auth(SESSION_SECRET)
        .json(&json!({"clientId": "sec4"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let (status, _) = post(
        &p,
        "/send-message",
        json!({"clientId": "sec4", "to": format!("+{CONTACT}"), "body": "hi"}),
    )
    .await;
    assert_eq!(status, 200);

    let logs = p.output();
    assert!(
        logs.contains("parley serve is listening"),
        "the process logged:\n{logs}"
    );
    for secret in [TOKEN, HOOK_TOKEN, NEW_HOOK_TOKEN, SESSION_SECRET] {
        assert!(
            !logs.contains(secret),
            "a secret ({}...) is in the logs:\n{logs}",
            &secret[..6]
        );
    }
}
