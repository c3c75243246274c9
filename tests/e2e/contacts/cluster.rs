//! Profile pictures through the cluster roles: the API process asks the
//! worker process over NATS, the worker mirrors into the S3 bucket, and the
//! stored copy is fetched from the bucket's public link.
use serde_json::json;

use super::{avatar, b64, fetch, picture, register};
use crate::sends::support::*;
use crate::support::*;

#[tokio::test]
async fn pictures_are_mirrored_to_the_bucket_through_api_and_worker_processes() {
    let dir = tempfile::tempdir().unwrap();
    let env = services::ClusterEnv::new().await;
    let (api, _worker) = api_and_worker(&env, dir.path(), &[]).await;
    linked(&api, "cl2").await;
    let data = avatar("cluster");
    let lid = register(&api, "4917600000311", json!({"avatar": b64(&data)})).await;

    let (status, body) = picture(&api, "cl2", &format!("&jid={lid}")).await;
    assert_eq!(status, 200, "{body}");
    let stored = body["storedUrl"].as_str().unwrap();
    assert!(stored.contains(&env.bucket), "{stored}");
    assert_eq!(fetch(stored).await, data);
    let (_, again) = picture(&api, "cl2", &format!("&jid={lid}&refresh=true")).await;
    assert_eq!(
        (again["storedUrl"].as_str(), again["mirrored"].as_bool()),
        (Some(stored), Some(false))
    );
}
