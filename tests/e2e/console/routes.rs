//! The overview routes on `parley serve`: sessions searched and paged with
//! their health and webhook state, a session's state history, the cluster
//! summary; what a session's secret may see; bad input; the audit trail.
use parley_tests::receiver::{Behaviour, Receiver};
use serde_json::json;

use super::support::*;
use crate::support::*;

const SECRET: &str = "console-session-secret-0123456789";

#[tokio::test]
async fn sessions_are_listed_searched_paged_and_scoped_to_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_with(
        dir.path(),
        &[
            ("PARLEY_ALLOW_HTTP_WEBHOOKS", "true"),
            ("PARLEY_ALLOW_PRIVATE_EGRESS", "true"),
        ],
    )
    .await;
    // The receiver refuses every event: each becomes a dead letter.
    let rx = Receiver::start().await;
    rx.set_default(Behaviour::Status(400));
    let hook = json!({"webhookUrl": rx.url, "webhookToken": "console-webhook-token-0123456789ab"});
    linked(&p, "shopNorth", "4915100000401", hook).await;
    for id in ["shopSouth", "other"] {
        let (status, _) = post(&p, &format!("/start?clientId={id}"), json!({})).await;
        assert_eq!(status, 200);
    }
    let (status, _) = post(
        &p,
        "/sandbox/contacts",
        json!({"phone": "4917600000402", "name": "Carla"}),
    )
    .await;
    assert_eq!(status, 200);
    let (status, sent) = post(
        &p,
        "/sandbox/messages",
        json!({"clientId": "shopNorth", "from": "4917600000402", "type": "text", "body": "hi"}),
    )
    .await;
    assert_eq!(status, 200, "{sent}");

    let north = eventually(30, "the event is a dead letter", || async {
        let (_, page) = get(&p, "/sessions?q=north").await;
        let s = page["sessions"][0].clone();
        (s["webhook"]["state"] == "dead-letters").then_some(s)
    })
    .await;
    assert_eq!(north["clientId"], "shopNorth");
    assert_eq!(north["status"], "connected");
    assert_eq!(north["connected"], true);
    assert!(!north["podName"].as_str().unwrap().is_empty(), "{north}");
    assert!(
        north["connectedAt"].as_str().unwrap().ends_with('Z'),
        "{north}"
    );
    assert!(
        north["jid"].as_str().unwrap().starts_with("4915100000401"),
        "{north}"
    );
    assert_eq!(north["webhook"]["deadLetters"], 1);
    assert_eq!(north["webhook"]["pending"], 0);
    assert_eq!(north["webhook"]["url"], rx.url.as_str());
    assert!(north["lastEventSeq"].as_u64().unwrap() >= 1);
    assert!(north.get("webhookToken").is_none(), "no token in a listing");

    let (status, all) = get(&p, "/sessions").await;
    assert_eq!(status, 200);
    assert_eq!(
        all["pagination"],
        json!({"page": 1, "limit": 50, "total": 3})
    );
    let ids: Vec<&str> = all["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["clientId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["other", "shopNorth", "shopSouth"]);
    let south = &all["sessions"][2];
    assert_eq!(south["webhook"]["state"], "none");
    assert_eq!(south["connectedAt"], "");
    assert_eq!(south["lastEventSeq"], 0);

    let (_, page2) = get(&p, "/sessions?q=SHOP&page=2&limit=1").await;
    assert_eq!(page2["sessions"][0]["clientId"], "shopSouth");
    assert_eq!(page2["pagination"]["total"], 2);

    for bad in [
        "/sessions?limit=0",
        "/sessions?limit=201",
        "/sessions?page=0",
        "/sessions?page=",
        "/sessions?limit=x",
    ] {
        let (status, body) = get(&p, bad).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(body["error"].is_string());
    }
    let (status, _) = get(&p, &format!("/sessions?q={}", "x".repeat(129))).await;
    assert_eq!(status, 400);

    // A session's secret sees its own session only, and no cluster.
    let (status, _) = post(
        &p,
        "/set-api-secret",
        json!({"clientId": "shopSouth", "secret": SECRET}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        get_as(&p, SECRET, "/sessions").await.0,
        401,
        "names no session"
    );
    let (status, own) = get_as(&p, SECRET, "/sessions?clientId=shopSouth").await;
    assert_eq!(status, 200);
    assert_eq!(own["pagination"]["total"], 1);
    assert_eq!(own["sessions"][0]["clientId"], "shopSouth");
    assert_eq!(own["sessions"][0]["hasSecret"], true);
    let (_, none) = get_as(&p, SECRET, "/sessions?clientId=shopSouth&q=north").await;
    assert_eq!(none["pagination"]["total"], 0);
    let (status, _) = get_as(&p, SECRET, "/sessions?clientId=shopNorth").await;
    assert_eq!(status, 401, "another session");
    let (_, exact) = get(&p, "/sessions?clientId=shop").await;
    assert_eq!(exact["pagination"]["total"], 0, "clientId is exact");
    assert_eq!(get(&p, "/sessions?clientId=a-b").await.0, 400);
    assert_eq!(get_as(&p, SECRET, "/cluster").await.0, 401);
    let (status, _) = get_as(&p, SECRET, "/session-history?clientId=shopNorth").await;
    assert_eq!(status, 401);
    assert_eq!(
        get_as(&p, "wrong-token-0123456789abcdef", "/sessions")
            .await
            .0,
        401
    );
}

#[tokio::test]
async fn a_sessions_history_and_the_cluster_summary() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve(dir.path()).await;
    linked(&p, "hist", "4915100000411", json!({})).await;
    let (_, history) = get(&p, "/session-history?clientId=hist").await;
    let changes = history["changes"].as_array().unwrap();
    assert_eq!(history["clientId"], "hist");
    assert_eq!(changes[0]["status"], "connected", "newest first: {history}");
    assert_eq!(changes[0]["connected"], true);
    assert!(!changes[0]["podName"].as_str().unwrap().is_empty());
    assert!(
        changes.iter().any(|c| c["status"] == "qr"),
        "the QR before it: {history}"
    );
    assert_eq!(get(&p, "/session-history?clientId=nobody").await.0, 404);
    assert_eq!(get(&p, "/session-history").await.0, 400);
    assert_eq!(get(&p, "/session-history?clientId=a-b").await.0, 400);

    let summary = eventually(15, "this pod announced", || async {
        let (status, s) = get(&p, "/cluster").await;
        assert_eq!(status, 200, "{s}");
        (!s["apiPods"].as_array().unwrap().is_empty()).then_some(s)
    })
    .await;
    assert_eq!(summary["mode"], "serve");
    assert_eq!(summary["apiPods"][0]["name"], summary["podName"]);
    assert_eq!(
        summary["dependencies"],
        json!({"database": true, "bus": true, "leases": true, "storage": true, "events": true})
    );
    assert_eq!(summary["sessions"]["total"], 1);
    assert_eq!(summary["sessions"]["connected"], 1);
    let workers = summary["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 1, "{summary}");
    assert_eq!(workers[0]["sessions"], 1);
    assert_eq!(workers[0]["connected"], 1);
    assert_eq!(summary["events"], json!({"pending": 0, "deadLetters": 0}));
    assert_eq!(summary["disconnectsLastHour"], 0);
}

#[tokio::test]
async fn destructive_actions_name_who_did_them() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve(dir.path()).await;
    linked(&p, "audited", "4915100000421", json!({})).await;
    let (status, _) = post(
        &p,
        "/set-api-secret",
        json!({"clientId": "audited", "secret": SECRET}),
    )
    .await;
    assert_eq!(status, 200);
    let res = client()
        .post(p.url("/disconnect"))
        .bearer_auth(SECRET)
        .json(&json!({"clientId": "audited"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let lines = eventually(10, "the audit lines", || async {
        let out = p.output();
        let lines: Vec<String> = out
            .lines()
            .filter(|l| l.contains("parley::audit"))
            .map(String::from)
            .collect();
        (lines.len() >= 2).then_some(lines)
    })
    .await;
    assert!(
        lines[0].contains("set session secret") && lines[0].contains("account token"),
        "{lines:?}"
    );
    assert!(
        lines[1].contains("disconnect") && lines[1].contains("session secret of audited"),
        "{lines:?}"
    );
    assert!(!lines.iter().any(|l| l.contains(SECRET)), "{lines:?}");
}

#[tokio::test]
async fn the_cluster_summary_names_the_api_pod_and_the_worker() {
    let dir = tempfile::tempdir().unwrap();
    let env = services::ClusterEnv::new().await;
    let (api, _worker) = api_and_worker(&env, dir.path(), &[]).await;
    let summary = eventually(30, "the API pod and the worker", || async {
        let (status, s) = get(&api, "/cluster").await;
        assert_eq!(status, 200, "{s}");
        let ready = s["apiPods"].as_array().is_some_and(|a| !a.is_empty())
            && s["workers"].as_array().is_some_and(|w| !w.is_empty());
        ready.then_some(s)
    })
    .await;
    assert_eq!(summary["mode"], "cluster");
    assert_eq!(summary["apiPods"].as_array().unwrap().len(), 1, "{summary}");
    assert_eq!(summary["apiPods"][0]["name"], summary["podName"]);
    assert_eq!(summary["workers"].as_array().unwrap().len(), 1, "{summary}");
    assert_eq!(summary["dependencies"]["bus"], true);
    assert_eq!(summary["dependencies"]["leases"], true);
    // The API pod serves the console too.
    let res = client().get(api.url("/console/")).send().await.unwrap();
    assert_eq!(res.status(), 200);
}
