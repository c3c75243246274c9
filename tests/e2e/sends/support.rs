//! Helpers of the send tests: a linked sandbox session, the outbox, hand-built
//! multipart bodies (and the test file server, re-exported).
pub use parley_tests::files::{Answer, serve as file_server};
pub use parley_tests::multipart::{Part, multipart};
use serde_json::{Value, json};

use crate::support::*;

/// The phone the sessions link as.
pub const OWN_PHONE: &str = "4915100000100";

/// `parley serve` on the sandbox; `allow_private`: downloads may reach loopback.
pub async fn serve_sends(dir: &std::path::Path, allow_private: bool) -> Parley {
    let allow = if allow_private { "true" } else { "false" };
    serve_with(dir, &[("PARLEY_ALLOW_PRIVATE_EGRESS", allow)]).await
}

/// Starts `id` and waits until it shows a QR code (started, not linked).
pub async fn started(p: &Parley, id: &str) {
    let (status, body) = post(p, &format!("/start?clientId={id}"), json!({})).await;
    assert_eq!(status, 200, "{body}");
    eventually(15, "a QR code", || async {
        let (_, body) = get(p, &format!("/qr?clientId={id}")).await;
        (body["status"] == "qr").then_some(())
    })
    .await;
}

/// Starts `id`, links it as [`OWN_PHONE`] and waits until it is connected.
pub async fn linked(p: &Parley, id: &str) {
    started(p, id).await;
    let (status, body) = post(
        p,
        "/sandbox/link",
        json!({"phone": OWN_PHONE, "clientId": id}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    eventually(15, "connected", || async {
        let (_, body) = post(p, "/check-state", json!({"clientId": id})).await;
        (body["status"] == true).then_some(())
    })
    .await;
}

/// Registers a contact on the simulated network; returns its LID.
pub async fn contact(p: &Parley, phone: &str) -> String {
    let (status, body) = post(
        p,
        "/sandbox/contacts",
        json!({"phone": phone, "name": "Contact"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["lid"].as_str().expect("lid").to_string()
}

/// The session's outbox entries (`query` appended to the URL).
pub async fn outbox(p: &Parley, id: &str, query: &str) -> Vec<Value> {
    let (status, body) = get(p, &format!("/sandbox/outbox?clientId={id}{query}")).await;
    assert_eq!(status, 200, "{body}");
    body["messages"].as_array().expect("messages").clone()
}

/// The last outbox entry of the session.
pub async fn last(p: &Parley, id: &str) -> Value {
    outbox(p, id, "").await.pop().expect("an outbox entry")
}

/// Posts a multipart form to `/send-media-message` (`query` after the path).
pub async fn upload(p: &Parley, query: &str, parts: &[Part<'_>]) -> (u16, Value) {
    upload_as(p, TOKEN, query, parts).await
}

/// [`upload`] with another token (a session secret).
pub async fn upload_as(p: &Parley, token: &str, query: &str, parts: &[Part<'_>]) -> (u16, Value) {
    let (content_type, body) = multipart(parts);
    json(
        client()
            .post(p.url(&format!("/send-media-message{query}")))
            .bearer_auth(token)
            .header("content-type", content_type)
            .body(body)
            .send()
            .await
            .expect("request"),
    )
    .await
}

/// Hex SHA-256.
pub fn sha256(data: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(data))
}
