//! Sessions end to end in one process: pairing by QR and by code through the
//! sandbox, settings, network-side logout, drops, restarts, bad input.
use serde_json::json;

use crate::support::*;

async fn serve_fast_qr(dir: &std::path::Path) -> Parley {
    serve_with(
        dir,
        &[
            ("PARLEY_SANDBOX_QR_FIRST_SECS", "2"),
            ("PARLEY_SANDBOX_QR_NEXT_SECS", "1"),
        ],
    )
    .await
}

/// Starts `id` and returns the string encoded in its current QR PNG.
async fn start_and_scan(p: &Parley, id: &str) -> String {
    let (status, body) = post(p, &format!("/start?clientId={id}"), json!({})).await;
    assert_eq!(status, 200, "{body}");
    eventually(15, "a QR code", || async {
        let (status, body) = get(p, &format!("/qr?clientId={id}")).await;
        assert_eq!(status, 200, "{body}");
        let qr = body["qr"].as_str().unwrap_or_default();
        (body["status"] == "qr" && !qr.is_empty()).then(|| parley_tests::qr::decode_data_url(qr))
    })
    .await
}

async fn connected_jid(p: &Parley, id: &str) -> String {
    eventually(15, "connected", || async {
        let (_, body) = post(p, "/check-state", json!({"clientId": id})).await;
        (body["status"] == true).then(|| body["state"].as_str().unwrap().to_string())
    })
    .await
}

#[tokio::test]
async fn pair_by_qr_and_code_then_restart_without_a_new_scan() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = serve_fast_qr(dir.path()).await;
    let hook = "https://example.com/hook";
    let (status, body) = post(
        &p,
        "/start?clientId=shop1",
        json!({"webhookUrl": hook, "webhookToken": "t".repeat(32)}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["clientId"], "shop1");
    assert_eq!(body["webhookUrl"], hook);
    assert!(body["podName"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(
        body.get("webhookToken").is_none(),
        "the webhook token is never returned"
    );

    let code = start_and_scan(&p, "shop1").await;
    let (status, linked) = post(
        &p,
        "/sandbox/link",
        json!({"phone": "4915112345678", "name": "Shop", "qr": code}),
    )
    .await;
    assert_eq!(status, 200, "{linked}");
    assert_eq!(linked["clientId"], "shop1");
    let jid = connected_jid(&p, "shop1").await;
    assert_eq!(jid, linked["jid"].as_str().unwrap());
    assert!(
        jid.starts_with("4915112345678:") && jid.ends_with("@s.whatsapp.net"),
        "{jid}"
    );
    assert_eq!(linked["lid"].as_str().unwrap().len(), 15);
    let (_, qr) = get(&p, "/qr?clientId=shop1").await;
    assert_eq!(
        (qr["status"].as_str(), qr["qr"].as_str()),
        (Some("connected"), Some(""))
    );
    let (status, _) = post(
        &p,
        "/pair-phone",
        json!({"clientId": "shop1", "phone": "4915112345678"}),
    )
    .await;
    assert_eq!(status, 409, "already paired");

    // Pairing by phone code, the first request refused by the network.
    start_and_scan(&p, "shop2").await;
    let (status, body) = post(
        &p,
        "/sandbox/faults",
        json!({"clientId": "shop2", "op": "pair-code"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = post(
        &p,
        "/pair-phone",
        json!({"clientId": "shop2", "phone": "+4917600000001"}),
    )
    .await;
    assert_eq!(status, 502, "{body}");
    assert!(
        body["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{body}"
    );
    let (status, pair) = post(
        &p,
        "/pair-phone",
        json!({"clientId": "shop2", "phone": "+4917600000001"}),
    )
    .await;
    assert_eq!(status, 200, "{pair}");
    let code = pair["code"].as_str().unwrap().to_string();
    assert_eq!(code.len(), 8);
    assert_eq!(pair["phone"], "4917600000001");
    let (status, _) = post(
        &p,
        "/sandbox/enter-code",
        json!({"clientId": "shop2", "code": "WRONG123"}),
    )
    .await;
    assert_eq!(status, 400);
    let (status, body) = post(
        &p,
        "/sandbox/enter-code",
        json!({"clientId": "shop2", "code": code}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(
        connected_jid(&p, "shop2")
            .await
            .starts_with("4917600000001:")
    );
    // Paired: no code is waiting any more, so any code is wrong (spec: 400).
    let (status, body) = post(
        &p,
        "/sandbox/enter-code",
        json!({"clientId": "shop2", "code": code}),
    )
    .await;
    assert_eq!(status, 400, "{body}");

    // Settings persist and need no restart.
    assert_eq!(
        post(
            &p,
            "/set-enable-group-ai",
            json!({"clientId": "shop1", "enabled": true})
        )
        .await
        .0,
        200
    );
    let (status, body) = post(
        &p,
        "/set-org-id",
        json!({"clientId": "shop1", "orgId": "org-7"}),
    )
    .await;
    assert_eq!(
        (status, body),
        (
            200,
            json!({"ok": true, "clientId": "shop1", "orgId": "org-7"})
        )
    );
    let (_, ready) = get(&p, "/health/ready").await;
    assert_eq!(
        ready["sessions"],
        json!({"total": 2, "connected": 2, "down": 0, "terminal": 0})
    );

    // Restart: both reconnect from stored state, without a scan, settings kept.
    assert_eq!(p.terminate().await, Some(0), "{}", p.output());
    let p = serve_fast_qr(dir.path()).await;
    assert_eq!(connected_jid(&p, "shop1").await, jid);
    connected_jid(&p, "shop2").await;
    let (_, clients) = get(&p, "/clients").await;
    let shop1 = clients["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["clientId"] == "shop1")
        .unwrap()
        .clone();
    assert_eq!(
        (shop1["orgId"].as_str(), shop1["webhookUrl"].as_str()),
        (Some("org-7"), Some(hook))
    );
    let (_, health) = get(&p, "/health/clients").await;
    let h1 = health["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["clientId"] == "shop1")
        .unwrap()
        .clone();
    assert_eq!(h1["enableGroupAi"], true);
    assert_eq!(h1["loggedIn"], true);

    // Disconnect removes the session; a later start pairs fresh.
    let (status, body) = post(&p, "/disconnect", json!({"clientId": "shop2"})).await;
    assert_eq!(
        (status, body),
        (200, json!({"ok": true, "clientId": "shop2"}))
    );
    let (_, state) = post(&p, "/check-state", json!({"clientId": "shop2"})).await;
    assert_eq!(state, json!({"status": false, "state": "unknown clientId"}));
    assert_eq!(get(&p, "/qr?clientId=shop2").await.0, 404);
    start_and_scan(&p, "shop2").await;
}

#[tokio::test]
async fn qr_codes_rotate_and_stale_ones_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_fast_qr(dir.path()).await;
    let first = start_and_scan(&p, "rot1").await;
    let second = eventually(15, "a rotated QR", || async {
        let (_, body) = get(&p, "/qr?clientId=rot1").await;
        let qr = body["qr"].as_str().unwrap_or_default();
        let code = (!qr.is_empty()).then(|| parley_tests::qr::decode_data_url(qr))?;
        (code != first).then_some(code)
    })
    .await;
    let (status, _) = post(
        &p,
        "/sandbox/link",
        json!({"phone": "4915100000002", "qr": first}),
    )
    .await;
    assert_eq!(status, 400, "a rotated code is refused");
    let (status, _) = post(
        &p,
        "/sandbox/link",
        json!({"phone": "4915100000002", "qr": second}),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = post(
        &p,
        "/sandbox/link",
        json!({"phone": "4915100000002", "clientId": "rot1"}),
    )
    .await;
    assert_eq!(status, 409, "already linked");
}

#[tokio::test]
async fn logout_drop_and_unconfirmed_logout() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_fast_qr(dir.path()).await;
    for (id, phone) in [("a1", "4915100000011"), ("a2", "4915100000012")] {
        start_and_scan(&p, id).await;
        let (status, _) = post(&p, "/sandbox/link", json!({"phone": phone, "clientId": id})).await;
        assert_eq!(status, 200);
        connected_jid(&p, id).await;
    }
    // A dropped connection comes back by itself and is counted.
    assert_eq!(
        post(
            &p,
            "/sandbox/faults",
            json!({"clientId": "a1", "op": "drop"})
        )
        .await
        .0,
        200
    );
    eventually(15, "a counted reconnect", || async {
        let (_, health) = get(&p, "/health/clients").await;
        let a1 = health["clients"]
            .as_array()?
            .iter()
            .find(|c| c["clientId"] == "a1")?
            .clone();
        (a1["reconnects"].as_i64() >= Some(1) && a1["connected"] == true).then_some(())
    })
    .await;
    let (_, health) = get(&p, "/health/clients").await;
    let a1 = health["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["clientId"] == "a1")
        .unwrap()
        .clone();
    assert_eq!(a1["lastDisconnect"], "connection-lost");

    // The phone unlinks the device: the session is terminal until paired again.
    assert_eq!(
        post(&p, "/sandbox/unlink", json!({"clientId": "a2"}))
            .await
            .0,
        200
    );
    eventually(15, "terminal", || async {
        let (_, ready) = get(&p, "/health/ready").await;
        (ready["sessions"]["terminal"] == 1).then_some(())
    })
    .await;
    let (_, state) = post(&p, "/check-state", json!({"clientId": "a2"})).await;
    assert_eq!(state["state"], "not connected");
    start_and_scan(&p, "a2").await;

    // Network-side logout not confirmed: still removed locally, with a warning.
    assert_eq!(
        post(
            &p,
            "/sandbox/faults",
            json!({"clientId": "a1", "op": "logout"})
        )
        .await
        .0,
        200
    );
    let (status, body) = post(&p, "/disconnect", json!({"clientId": "a1"})).await;
    assert_eq!(status, 200);
    assert!(
        body["warning"].as_str().is_some_and(|w| !w.is_empty()),
        "{body}"
    );
    let (_, state) = post(&p, "/check-state", json!({"clientId": "a1"})).await;
    assert_eq!(state["state"], "unknown clientId");
}

#[tokio::test]
async fn bad_input_gets_the_right_status() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_fast_qr(dir.path()).await;
    let long = "a".repeat(65);
    for q in [
        "/start?clientId=a-b",
        "/start?clientId=",
        "/start",
        &format!("/start?clientId={long}"),
    ] {
        assert_eq!(post(&p, q, json!({})).await.0, 400, "{q}");
    }
    for hook in ["http://example.com/h", "/relative", "ftp://example.com"] {
        assert_eq!(
            post(&p, "/start?clientId=ok1", json!({"webhookUrl": hook}))
                .await
                .0,
            400,
            "{hook}"
        );
    }
    assert_eq!(get(&p, "/qr?clientId=nobody").await.0, 404);
    assert_eq!(
        post(
            &p,
            "/pair-phone",
            json!({"clientId": "nobody", "phone": "4915100000001"})
        )
        .await
        .0,
        404
    );
    assert_eq!(
        post(
            &p,
            "/set-org-id",
            json!({"clientId": "nobody", "orgId": "x"})
        )
        .await
        .0,
        404
    );
    assert_eq!(
        post(&p, "/disconnect", json!({"clientId": "nobody"}))
            .await
            .0,
        404
    );
    assert_eq!(
        post(
            &p,
            "/set-webhook",
            json!({"clientId": "nobody", "webhookUrl": "nope"})
        )
        .await
        .0,
        400
    );
    assert_eq!(
        post(&p, "/set-webhook", json!({"webhookUrl": ""})).await.0,
        400
    );
    assert_eq!(post(&p, "/start?clientId=ok1", json!({})).await.0, 200);
    assert_eq!(
        post(&p, "/pair-phone", json!({"clientId": "ok1", "phone": "12"}))
            .await
            .0,
        400
    );
    assert_eq!(
        post(
            &p,
            "/set-api-secret",
            json!({"clientId": "ok1", "secret": "too-short"})
        )
        .await
        .0,
        400
    );
    let (status, body) = post(
        &p,
        "/set-webhook",
        json!({"clientId": "ok1", "webhookUrl": ""}),
    )
    .await;
    assert_eq!((status, body["webhookUrl"].as_str()), (200, Some("")));
    assert_eq!(
        post(
            &p,
            "/sandbox/faults",
            json!({"clientId": "ok1", "op": "meteor"})
        )
        .await
        .0,
        400
    );
}

#[tokio::test]
async fn concurrent_starts_create_one_session() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_fast_qr(dir.path()).await;
    let calls = (0..20).map(|_| post(&p, "/start?clientId=race1", json!({})));
    for (status, body) in futures::future::join_all(calls).await {
        assert_eq!(status, 200, "{body}");
    }
    let (_, clients) = get(&p, "/clients").await;
    assert_eq!(clients["clients"].as_array().unwrap().len(), 1);
    start_and_scan(&p, "race1").await;
}
