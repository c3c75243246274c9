//! Helpers of the console tests: sessions started and linked through the
//! sandbox, requests with another credential.
use serde_json::{Value, json};

use crate::support::*;

/// Starts `id` (with `body`) and links it through the sandbox as `phone`.
pub async fn linked(p: &Parley, id: &str, phone: &str, body: Value) {
    let (status, started) = post(p, &format!("/start?clientId={id}"), body).await;
    assert_eq!(status, 200, "{started}");
    eventually(15, "a QR code", || async {
        let (_, qr) = get(p, &format!("/qr?clientId={id}")).await;
        (qr["status"] == "qr").then_some(())
    })
    .await;
    let (status, body) = post(
        p,
        "/sandbox/link",
        json!({"clientId": id, "phone": phone, "name": "Phone"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    eventually(15, "connected", || async {
        let (_, state) = post(p, "/check-state", json!({"clientId": id})).await;
        (state["status"] == true).then_some(())
    })
    .await;
}

/// `GET path` with `token` instead of the account token.
pub async fn get_as(p: &Parley, token: &str, path: &str) -> (u16, Value) {
    let res = client()
        .get(p.url(path))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    json(res).await
}
