//! Sends through the cluster roles on real services: an API process and a
//! worker process over NATS, Redis, PostgreSQL and S3. The upload goes from the
//! API into the bucket and the command carries only its key; the worker fetches
//! URLs through its own egress guard; the API reads the outbox from PostgreSQL.
use serde_json::json;

use super::support::*;
use crate::support::*;

#[tokio::test]
async fn sends_reach_the_network_through_api_and_worker_processes() {
    let dir = tempfile::tempdir().unwrap();
    let env = services::ClusterEnv::new().await;
    let (api, _worker) =
        api_and_worker(&env, dir.path(), &[("PARLEY_ALLOW_PRIVATE_EGRESS", "true")]).await;
    linked(&api, "cl1").await;

    let (status, body) = post(
        &api,
        "/send-message",
        json!({"clientId": "cl1", "to": "123456789012345", "body": "over NATS"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(last(&api, "cl1").await["messageId"], body["messageId"]);

    // Larger than one S3 part (8 MiB): the store takes it as a multipart upload.
    let data: Vec<u8> = (0..9 * 1024 * 1024u32).map(|i| (i % 253) as u8).collect();
    let (status, body) = upload(
        &api,
        "?clientId=cl1",
        &[
            Part::Text("to", "123456789012345"),
            Part::File {
                name: "file",
                file_name: "clip.mp4",
                content_type: "video/mp4",
                data: &data,
            },
        ],
    )
    .await;
    assert_eq!(
        (status, body["mediaType"].as_str()),
        (200, Some("video")),
        "{body}"
    );
    let entry = last(&api, "cl1").await;
    assert_eq!(entry["payload"]["sha256"], sha256(&data));
    assert_eq!(entry["payload"]["bytes"], data.len());

    let server = file_server(Answer::file("image/png", b"\x89PNG cluster".to_vec())).await;
    let (status, body) = post(
        &api,
        "/send-media-message",
        json!({"clientId": "cl1", "to": "123456789012345",
               "downloadUrl": format!("{}/p.png", server.base)}),
    )
    .await;
    assert_eq!((status, body["bytes"].as_u64()), (200, Some(12)), "{body}");
    assert_eq!(outbox(&api, "cl1", "").await.len(), 3);
}
