//! Authentication and error shapes over every registered route, read from the
//! router's own inventory (`GET /config`), so new routes are covered automatically.
use parley_shared::db::{Db, NewSession};
use serde_json::json;

use crate::support::*;

const PUBLIC: &[&str] = &[
    "GET /health",
    "GET /health/live",
    "GET /health/ready",
    "GET /health/clients",
    "GET /config",
    "GET /openapi.json",
    "GET /media/{key}",
    // The sandbox's signed picture links, like the network's own.
    "GET /sandbox/cdn/pictures/{lid}/{file}",
];

/// A concrete path for a route template.
fn concrete(template: &str) -> String {
    template
        .split('/')
        .map(|seg| if seg.starts_with('{') { "abc" } else { seg })
        .collect::<Vec<_>>()
        .join("/")
}

async fn inventory(p: &Parley) -> Vec<(String, String)> {
    let (status, facts) = json(client().get(p.url("/config")).send().await.unwrap()).await;
    assert_eq!(status, 200);
    facts["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let (m, path) = r.as_str().unwrap().split_once(' ').unwrap();
            (m.to_string(), path.to_string())
        })
        .collect()
}

#[tokio::test]
async fn every_route_requires_the_token_and_answers_json_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve(dir.path()).await;
    let routes = inventory(&p).await;
    assert!(routes.len() >= 10, "{routes:?}");
    let http = client();
    for (method, template) in &routes {
        let route = format!("{method} {template}");
        let path = concrete(template);
        let m: reqwest::Method = method.parse().unwrap();
        let public = PUBLIC.contains(&route.as_str());

        // No token, a wrong token in each header form.
        for req in [
            http.request(m.clone(), p.url(&path)),
            http.request(m.clone(), p.url(&path))
                .bearer_auth("wrong-token-wrong-token"),
            http.request(m.clone(), p.url(&path))
                .header("X-V3-Secret", "wrong-token-wrong-token"),
        ] {
            let res = req.json(&json!({})).send().await.unwrap();
            if public {
                assert_ne!(res.status(), 401, "{route} is public");
            } else {
                let (status, body) = json(res).await;
                assert_eq!(
                    (status, body.clone()),
                    (401, json!({"error": "unauthorized"})),
                    "{route}"
                );
            }
        }

        // The account token in either form passes authentication.
        for req in [
            http.request(m.clone(), p.url(&path)).bearer_auth(TOKEN),
            http.request(m.clone(), p.url(&path))
                .header("X-V3-Secret", TOKEN),
        ] {
            let res = req.json(&json!({})).send().await.unwrap();
            assert_ne!(res.status(), 401, "{route} refused the account token");
            assert_ne!(res.status(), 500, "{route} failed on an empty body");
        }

        // A method the route does not have: 405 with a JSON error.
        let other = if method == "GET" {
            reqwest::Method::DELETE
        } else {
            reqwest::Method::GET
        };
        let res = http
            .request(other, p.url(&path))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        // RFC 9110: a 405 names the methods the path has.
        let allow = res
            .headers()
            .get("allow")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let (status, body) = json(res).await;
        assert_eq!(status, 405, "{route}: {body}");
        assert!(body["error"].is_string());
        let allowed: Vec<&str> = allow.split(", ").collect();
        assert!(
            allowed.contains(&method.as_str()),
            "{route}: Allow {allow:?}"
        );

        if method == "POST"
            && !template.starts_with("/chatrooms/")
            && template != "/send-media-message"
        {
            // Malformed JSON, a wrong content type and an oversized body.
            let res = http
                .post(p.url(&path))
                .bearer_auth(TOKEN)
                .header("content-type", "application/json")
                .body("{not json")
                .send()
                .await
                .unwrap();
            let (status, body) = json(res).await;
            assert_eq!(status, 400, "{route}: {body}");
            assert!(
                body["error"].as_str().unwrap().contains("JSON"),
                "{route}: {body}"
            );
            let res = http
                .post(p.url(&path))
                .bearer_auth(TOKEN)
                .header("content-type", "text/plain")
                .body("hello")
                .send()
                .await
                .unwrap();
            let (status, _) = json(res).await;
            assert_eq!(status, 415, "{route}");
            let big = format!(
                "{{\"clientId\":\"a\",\"pad\":\"{}\"}}",
                "x".repeat(2 * 1024 * 1024)
            );
            let res = http
                .post(p.url(&path))
                .bearer_auth(TOKEN)
                .header("content-type", "application/json")
                .body(big)
                .send()
                .await
                .unwrap();
            let (status, _) = json(res).await;
            assert_eq!(status, 413, "{route}");
            // Deeply nested JSON within the size limit: refused (malformed, or
            // its unknown field skipped, then judged on the rest), never a
            // 500, a stall or a crash.
            let deep = format!(
                "{{\"clientId\":\"a\",\"x\":{}{}}}",
                "[".repeat(100_000),
                "]".repeat(100_000)
            );
            let res = http
                .post(p.url(&path))
                .bearer_auth(TOKEN)
                .header("content-type", "application/json")
                .body(deep)
                .send()
                .await
                .unwrap();
            let (status, body) = json(res).await;
            assert!((400..500).contains(&status), "{route}: {status} {body}");
            assert!(body["error"].is_string(), "{route}: {body}");
        }
    }

    // Unknown routes.
    let (status, body) = json(
        http.get(p.url("/no/such/route"))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 404);
    assert!(body["error"].is_string());
}

/// The crates whose handlers the API mounts, relative to the workspace root.
const ROUTE_SOURCES: &[&str] = &["api/src", "network-sandbox/src/routes"];

/// Handlers of the operations listener (`PARLEY_OPS_BIND`), which are not
/// part of the customer-facing API or its document.
const OPERATIONS: &[(&str, &str)] = &[("GET", "/metrics")];

/// Every `METHOD /path` a route attribute (`#[get("/x")]`, ...) declares in
/// `dir`, with actix's `{name:regex}` written `{name}` as OpenAPI does.
fn declared_routes(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            declared_routes(&path, out);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // A route registered another way would escape this check: refuse it.
        for other in ["web::resource(", ".route(\""] {
            assert!(
                !text.contains(other),
                "{}: {other} registers a route the drift check does not read; use a route attribute",
                path.display()
            );
        }
        for method in ["get", "post", "put", "patch", "delete", "head"] {
            let marker = format!("#[{method}(\"");
            for (at, _) in text.match_indices(&marker) {
                let rest = &text[at + marker.len()..];
                let template = &rest[..rest.find('"').unwrap()];
                let openapi: Vec<String> = template
                    .split('/')
                    .map(|seg| match seg.split_once(':') {
                        Some((name, _)) if seg.starts_with('{') => format!("{name}}}"),
                        _ => seg.to_string(),
                    })
                    .collect();
                out.push((method.to_uppercase(), openapi.join("/")));
            }
        }
    }
}

/// The document against the code and the running server, both ways: every
/// handler the code declares is documented, and every documented operation
/// reaches a handler (anything but the router's own 404 and 405).
#[tokio::test]
async fn the_openapi_document_matches_the_code_and_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve(dir.path()).await;
    let (status, doc) = json(client().get(p.url("/openapi.json")).send().await.unwrap()).await;
    assert_eq!(status, 200);
    let mut documented: Vec<(String, String)> = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            documented.push((method.to_uppercase(), path.clone()));
        }
    }
    documented.sort();

    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut declared = Vec::new();
    for dir in ROUTE_SOURCES {
        declared_routes(&root.join(dir), &mut declared);
    }
    declared.retain(|(m, path)| !OPERATIONS.contains(&(m.as_str(), path.as_str())));
    declared.sort();
    let undocumented: Vec<_> = declared
        .iter()
        .filter(|r| !documented.contains(r))
        .collect();
    let unknown: Vec<_> = documented
        .iter()
        .filter(|r| !declared.contains(r))
        .collect();
    assert!(
        undocumented.is_empty(),
        "handlers missing from the document: {undocumented:?}"
    );
    assert!(
        unknown.is_empty(),
        "documented without a handler in the code: {unknown:?}"
    );

    let http = client();
    for (method, template) in &documented {
        let m: reqwest::Method = method.parse().unwrap();
        let mut req = http
            .request(m, p.url(&concrete(template)))
            .bearer_auth(TOKEN);
        if method != "GET" {
            req = req.json(&json!({}));
        }
        let res = req.send().await.unwrap();
        let status = res.status().as_u16();
        // Not every answer is JSON (`/metrics`, stored files).
        let body: serde_json::Value =
            serde_json::from_str(&res.text().await.unwrap()).unwrap_or_default();
        let unrouted = status == 405
            || (status == 404
                && body["error"]
                    .as_str()
                    .is_some_and(|e| e.starts_with("no route for")));
        assert!(
            !unrouted,
            "{method} {template} reaches no handler: {status} {body}"
        );
    }
}

/// A server error names no internals and carries the request id a caller can
/// quote; every answer carries one.
#[tokio::test]
async fn every_answer_carries_a_request_id() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve(dir.path()).await;
    let mut seen = std::collections::HashSet::new();
    for path in ["/health", "/no/such/route", "/clients"] {
        let res = client().get(p.url(path)).send().await.unwrap();
        let id = res
            .headers()
            .get("x-request-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        assert!(uuid::Uuid::parse_str(&id).is_ok(), "{path}: {id:?}");
        assert!(seen.insert(id), "request ids repeat");
    }
}

#[tokio::test]
async fn a_session_secret_reaches_its_own_session_only() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve(dir.path()).await;
    // Seed two sessions in the process's own database (session creation is its own issue).
    let db = Db::connect(&format!(
        "sqlite://{}",
        dir.path().join("parley-data/parley.sqlite").display()
    ))
    .await
    .unwrap();
    for id in ["alpha", "beta"] {
        db.create_session(NewSession {
            client_id: id.into(),
            ..Default::default()
        })
        .await
        .unwrap();
    }
    let http = client();
    let secret = "alpha-secret-0123456789";
    let res = http
        .post(p.url("/set-api-secret"))
        .bearer_auth(TOKEN)
        .json(&json!({"clientId": "alpha", "secret": secret}))
        .send()
        .await
        .unwrap();
    let (status, body) = json(res).await;
    assert_eq!(
        (status, body),
        (200, json!({"clientId": "alpha", "hasSecret": true}))
    );
    let stored = db
        .session("alpha")
        .await
        .unwrap()
        .unwrap()
        .secret_hash
        .unwrap();
    assert_ne!(stored, secret, "secrets are stored hashed");

    // JSON body naming the session, in both header forms.
    let res = http
        .post(p.url("/check-state"))
        .bearer_auth(secret)
        .json(&json!({"clientId": "alpha"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        json(res).await,
        (200, json!({"status": false, "state": "not connected"}))
    );
    let res = http
        .post(p.url("/check-state"))
        .header("X-V3-Secret", secret)
        .json(&json!({"clientId": "alpha"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    // Query string naming the session.
    let res = http
        .get(p.url("/clients?clientId=alpha"))
        .bearer_auth(secret)
        .send()
        .await
        .unwrap();
    let (status, body) = json(res).await;
    assert_eq!(status, 200);
    assert_eq!(body["clients"].as_array().unwrap().len(), 1);
    // Another session, no session named, or two different sessions named: refused.
    for (url, body) in [
        ("/check-state", Some(json!({"clientId": "beta"}))),
        ("/clients", None),
        (
            "/check-state?clientId=alpha",
            Some(json!({"clientId": "beta"})),
        ),
    ] {
        let req = match body {
            Some(b) => http.post(p.url(url)).json(&b),
            None => http.get(p.url(url)),
        };
        let (status, body) = json(req.bearer_auth(secret).send().await.unwrap()).await;
        assert_eq!(
            (status, body),
            (401, json!({"error": "unauthorized"})),
            "{url}"
        );
    }
    // Too short is refused; empty revokes.
    let res = http
        .post(p.url("/set-api-secret"))
        .bearer_auth(TOKEN)
        .json(&json!({"clientId": "alpha", "secret": "short"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 400);
    let res = http
        .post(p.url("/set-api-secret"))
        .bearer_auth(TOKEN)
        .json(&json!({"clientId": "alpha", "secret": ""}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        json(res).await,
        (200, json!({"clientId": "alpha", "hasSecret": false}))
    );
    let res = http
        .post(p.url("/check-state"))
        .bearer_auth(secret)
        .json(&json!({"clientId": "alpha"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 401);
}
