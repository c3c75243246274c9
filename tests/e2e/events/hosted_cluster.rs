//! The hosted inbox written by events through the cluster roles: the worker
//! process stores history in PostgreSQL and files in the S3 bucket, the API
//! process reads them back; inbound and outbound media links serve the
//! original bytes.
use base64::Engine;
use parley_tests::receiver::Receiver;
use serde_json::json;

use super::history::{org, rooms};
use super::support::*;
use crate::contacts::fetch;
use crate::sends::support::{Part, upload};
use crate::support::*;

#[tokio::test]
async fn webhook_driven_history_lands_in_postgres_and_the_bucket() {
    let dir = tempfile::tempdir().unwrap();
    let env = services::ClusterEnv::new().await;
    let mut rx = Receiver::start().await;
    let (api, _worker) = api_and_worker(
        &env,
        dir.path(),
        &[
            ("PARLEY_ALLOW_HTTP_WEBHOOKS", "true"),
            ("PARLEY_ALLOW_PRIVATE_EGRESS", "true"),
            ("PARLEY_HOSTED_RECEIVER_URL", &rx.url),
        ],
    )
    .await;
    let my_lid = hooked(&api, "hc", &rx.url, json!({})).await;
    org(&api, "hc").await;
    let lid = contact(&api).await;
    let room = format!("hc-{my_lid}-{lid}");

    // Inbound: a text and a photo; the photo's link is in the bucket.
    let hello = text(&api, "hc", "hello").await;
    until_message(&mut rx, &hello).await;
    let photo: Vec<u8> = (0..7000u32).map(|i| (i * 7 % 253) as u8).collect();
    let b64 = base64::engine::general_purpose::STANDARD.encode(&photo);
    let photo_id = inject(
        &api,
        "hc",
        json!({"type": "image", "data": b64, "mimeType": "image/jpeg", "caption": "photo"}),
    )
    .await;
    let (e, _) = until_message(&mut rx, &photo_id).await;
    let inbound_url = e.json()["media"]["downloadUrl"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(inbound_url.contains(&env.bucket), "{inbound_url}");
    assert_eq!(fetch(&inbound_url).await, photo, "inbound bytes");

    // A duplicate delivery: logged once (the same eventId), so neither
    // delivered again nor stored twice; the message after it arrives alone.
    inject(
        &api,
        "hc",
        json!({"type": "text", "body": "hello", "messageId": hello}),
    )
    .await;
    let after = text(&api, "hc", "after the duplicate").await;
    let (_, before) = until_message(&mut rx, &after).await;
    assert!(
        before
            .iter()
            .all(|r| r.json()["messageId"] != hello.as_str()),
        "the duplicate is not delivered again"
    );

    // Outbound: a file sent through the API; its fromMe event has the link.
    let doc: Vec<u8> = (0..9000u32).map(|i| (i * 13 % 241) as u8).collect();
    let (status, sent) = upload(
        &api,
        "?clientId=hc",
        &[
            Part::File {
                name: "file",
                file_name: "invoice.pdf",
                content_type: "application/pdf",
                data: &doc,
            },
            Part::Text("to", &lid),
            Part::Text("caption", "your invoice"),
        ],
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    assert!(sent.get("warning").is_none(), "{sent}");
    let sent_id = sent["messageId"].as_str().unwrap().to_string();
    let (e, _) = until_message(&mut rx, &sent_id).await;
    let outbound_url = e.json()["media"]["downloadUrl"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(outbound_url.contains(&env.bucket), "{outbound_url}");
    assert_eq!(fetch(&outbound_url).await, doc, "outbound bytes");

    // The API process reads what the worker process stored.
    let listed = rooms(&api, "hc").await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(
        (
            listed[0]["chatRoomId"].as_str(),
            listed[0]["unreadCount"].as_u64()
        ),
        (Some(room.as_str()), Some(3))
    );
    let (status, body) = get(&api, &format!("/chatrooms/{room}/messages")).await;
    assert_eq!(status, 200, "{body}");
    let ids: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["messageId"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            hello.as_str(),
            photo_id.as_str(),
            after.as_str(),
            sent_id.as_str()
        ]
    );
    let (status, body) = get(
        &api,
        &format!("/chatrooms/{room}/messages/{photo_id}/media-url"),
    )
    .await;
    assert_eq!(
        (status, body["url"].as_str()),
        (200, Some(inbound_url.as_str()))
    );
    let (status, page) = get(&api, "/media-files?clientId=hc&orgId=org-9&limit=1").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        page["pagination"],
        json!({"page": 1, "limit": 1, "total": 2})
    );
    let newest = &page["files"][0];
    assert_eq!(newest["fileName"], "invoice.pdf");
    let (status, body) = get(
        &api,
        &format!("/media-files/{}/url", newest["messageId"].as_str().unwrap()),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(fetch(body["url"].as_str().unwrap()).await, doc);
}
