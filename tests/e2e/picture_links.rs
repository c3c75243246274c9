//! The sandbox stands in for the network's picture CDN: `/profile-picture`'s
//! `url` is a working signed link to the picture bytes, fetched without the
//! account token until it expires or the picture changes, on `serve` and on
//! the cluster (served by every process of a deployment). `storedUrl` stays
//! the permanent mirrored copy.
use serde_json::{Value, json};

use crate::contacts::{avatar, b64, fetch, picture, register};
use crate::events::support::{EVENT_VARS, hooked};
use crate::shapes::{Deployment, Shape};
use crate::support::*;

const ANN: &str = "4917600000401";

/// A GET without any token: `(status, content type, body)`.
async fn anonymous(url: &str) -> (u16, String, Vec<u8>) {
    let res = client().get(url).send().await.expect("request");
    let status = res.status().as_u16();
    let content_type = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    (status, content_type, res.bytes().await.unwrap().to_vec())
}

/// The link's path and query (to ask another process of the deployment).
fn path_of(url: &str) -> &str {
    let start = url.find("/sandbox/cdn/pictures/").expect("a picture link");
    &url[start..]
}

fn query_value<'a>(url: &'a str, key: &str) -> &'a str {
    let query = url.split_once('?').expect("query").1;
    query
        .split('&')
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("{key} in {url}"))
}

async fn lookup(p: &Parley, refresh: bool) -> Value {
    let query = format!("&jid=%2B{ANN}&refresh={refresh}");
    let (status, body) = picture(p, "pl", &query).await;
    assert_eq!(status, 200, "{body}");
    body
}

#[tokio::test]
async fn picture_links_serve_the_bytes_without_a_token_on_serve() {
    links(Shape::Serve, None).await;
}

#[tokio::test]
async fn picture_links_serve_the_bytes_without_a_token_on_a_cluster() {
    links(Shape::Cluster, Some(3600)).await;
}

async fn links(shape: Shape, ttl: Option<u64>) {
    let dir = tempfile::tempdir().unwrap();
    let ttl_var = ttl.map(|t| t.to_string());
    let mut more = EVENT_VARS.to_vec();
    if let Some(t) = &ttl_var {
        more.push(("PARLEY_SANDBOX_PICTURE_LINK_SECS", t));
    }
    let d = Deployment::start(shape, dir.path(), &more).await;
    let p = &d.api;
    let rx = parley_tests::receiver::Receiver::start().await;
    hooked(p, "pl", &rx.url, json!({})).await;
    let first = avatar("ann-1");
    register(p, ANN, json!({"avatar": b64(&first)})).await;

    let body = lookup(p, false).await;
    let url = body["url"].as_str().expect("url").to_string();
    let stored = body["storedUrl"].as_str().expect("storedUrl").to_string();
    let (status, content_type, bytes) = anonymous(&url).await;
    assert_eq!(status, 200, "{url}");
    assert_eq!((content_type.as_str(), &bytes), ("image/png", &first));
    assert_eq!(fetch(&stored).await, first, "the mirrored copy");
    // Every process of the deployment serves the same link.
    let via_api = p.url(path_of(&url));
    assert_eq!(anonymous(&via_api).await.2, first, "{via_api}");
    for (_, worker) in &d.workers {
        let via_worker = worker.url(path_of(&url));
        assert_eq!(anonymous(&via_worker).await.0, 200, "{via_worker}");
    }
    // Valid for the configured time (about 10 days by default).
    let expires = i64::from_str_radix(query_value(&url, "oe"), 16).expect("hex expiry");
    let want = chrono::Utc::now().timestamp() + ttl.map_or(10 * 24 * 3600, |t| t as i64);
    assert!(
        (expires - want).abs() < 120,
        "expires {expires}, want about {want}"
    );

    // A changed signature, user or picture id: refused, with a JSON error.
    let sig = query_value(&url, "oh");
    let forged_sig = url.replace(sig, &"0".repeat(sig.len()));
    let forged_user = url.replace(
        &format!("/pictures/{}/", path_of(&url).split('/').nth(4).unwrap()),
        "/pictures/123456789012345/",
    );
    for forged in [forged_sig, forged_user] {
        let (status, _, body) = anonymous(&forged).await;
        assert_eq!(status, 403, "{forged}");
        let error: Value = serde_json::from_slice(&body).expect("JSON error");
        assert!(
            error["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{error}"
        );
    }

    // The contact changes its picture: the old link is gone, a new lookup
    // hands out a link to the new bytes.
    let second = avatar("ann-2");
    register(p, ANN, json!({"avatar": b64(&second)})).await;
    assert_eq!(anonymous(&url).await.0, 404, "the old picture's link");
    let body = lookup(p, true).await;
    let next = body["url"].as_str().expect("url");
    assert_ne!(next, url);
    assert_eq!(anonymous(next).await.2, second);
}
