//! The gateway with the real adapter on the wire-level test network, through
//! its HTTP API: `parley serve` (device keys in SQLite) pairing by QR, a text
//! out and one in (as a webhook), and a restart that comes back without a
//! scan; on `serve` and on a cluster (an API and two workers, keys in
//! PostgreSQL): pairing by code, and `/disconnect` unlinking the device;
//! number checks, user info and a contact's picture, mirrored to storage.
//!
//! Runs the `parley-test-network` binary that `scripts/wire-e2e.sh` builds
//! and names in `PARLEY_TEST_NETWORK_BIN`.
use parley_tests::receiver::Receiver;
use parley_wire_network::{Avatar, TestDevice, WireNetwork};

mod api;

use api::*;
use parley_shared::db::ConnectionTrait;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_pairs_texts_both_ways_and_restarts_without_a_scan() {
    let (net, phone, contact) = network_with_phones().await;
    let mut hooks = Receiver::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut p = serve(dir.path(), &net, &[]).await;

    let code = start_for_qr(&p, "wire1", &hooks.url).await;
    let linked = phone.scan(&net, &code).expect("the phone scans");
    let jid = connected(&p, "wire1").await;
    assert_eq!(jid, linked.jid, "{}", p.output());

    // A text out, through the API, to the contact's phone number.
    let id = send_text(&p, "wire1", CONTACT, "Your order shipped").await;
    let got = contact
        .wait_for(WAIT, |r| r.id == id)
        .await
        .unwrap_or_else(|| panic!("the contact did not get {id}:\n{}", p.output()));
    assert_eq!(got.text.as_deref(), Some("Your order shipped"));

    // A text in, as a webhook event.
    let theirs = contact
        .send_text(&phone.jid(), "Thanks, when will it arrive?")
        .await
        .expect("the contact writes");
    let event = event_for(&mut hooks, &p, &theirs).await;
    assert_eq!(
        (&event["type"], &event["body"]),
        (&json!("text"), &json!("Thanks, when will it arrive?")),
        "{event}"
    );

    // The device's private keys are sealed at rest (with the key file serve
    // generated beside its data).
    let url = format!(
        "sqlite://{}",
        dir.path().join("parley-data/parley.sqlite").display()
    );
    let db = parley_shared::db::Db::connect(&url)
        .await
        .expect("open the database");
    let rows = db
        .conn()
        .query_all_raw(sea_orm::Statement::from_string(
            db.conn().get_database_backend(),
            "SELECT noise_key, identity_key, signed_pre_key, adv_secret_key FROM wa_devices",
        ))
        .await
        .expect("query");
    assert_eq!(rows.len(), 1);
    for column in [
        "noise_key",
        "identity_key",
        "signed_pre_key",
        "adv_secret_key",
    ] {
        let stored: Vec<u8> = rows[0].try_get("", column).expect("column");
        assert!(stored.starts_with(b"PK1"), "{column} is stored sealed");
    }
    drop(db);

    // A restart comes back from the stored device keys, without a scan.
    p.terminate().await;
    let p = serve(dir.path(), &net, &[]).await;
    let again = connected(&p, "wire1").await;
    assert_eq!(again, jid);
    assert!(net.handshakes("IK") >= 1, "the restart resumed with IK");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pairs_by_code_and_unlinks_on_disconnect_on_serve() {
    pairs_by_code_and_unlinks_on_disconnect(Shape::Serve).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pairs_by_code_and_unlinks_on_disconnect_on_a_cluster() {
    pairs_by_code_and_unlinks_on_disconnect(Shape::Cluster).await;
}

async fn pairs_by_code_and_unlinks_on_disconnect(shape: Shape) {
    let net = WireNetwork::start().await.expect("test network");
    let phone = TestDevice::start(&net, PHONE, "Shop phone")
        .await
        .expect("phone");
    let hooks = Receiver::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (p, workers) = gateway(shape, dir.path(), &net, &[]).await;

    let code = start_for_code(&p, "wire2", &hooks.url, PHONE).await;
    let linked = phone
        .enter_code(&net, &code)
        .await
        .expect("the code is typed");
    assert_eq!(
        connected(&p, "wire2").await,
        linked.jid,
        "{}",
        outputs(&p, &workers)
    );
    let (status, body) = post(
        &p,
        "/pair-phone",
        json!({"clientId": "wire2", "phone": PHONE}),
    )
    .await;
    assert_eq!(status, 409, "already paired: {body}");

    // `/disconnect` unlinks the device on the network's side.
    assert_eq!(net.devices_of(PHONE), vec![0, linked.device]);
    let (status, body) = post(&p, "/disconnect", json!({"clientId": "wire2"})).await;
    assert_eq!(status, 200, "{body}");
    let gone = net.watcher().device_gone(PHONE, linked.device, WAIT).await;
    assert!(
        gone,
        "the phone no longer lists the device: {:?}",
        net.devices_of(PHONE)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn looks_up_contacts_and_mirrors_their_pictures_on_serve() {
    looks_up_contacts_and_mirrors_their_pictures(Shape::Serve).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn looks_up_contacts_and_mirrors_their_pictures_on_a_cluster() {
    looks_up_contacts_and_mirrors_their_pictures(Shape::Cluster).await;
}

async fn looks_up_contacts_and_mirrors_their_pictures(shape: Shape) {
    let (net, phone, _contact) = network_with_phones().await;
    let hooks = Receiver::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (p, workers) = gateway(shape, dir.path(), &net, &[]).await;
    let code = start_for_qr(&p, "wire3", &hooks.url).await;
    phone.scan(&net, &code).expect("the phone scans");
    connected(&p, "wire3").await;
    let picture: Vec<u8> = b"\x89PNG\r\n\x1a\nwire-avatar".to_vec();
    net.set_profile(
        CONTACT,
        "At the shop until 6",
        Avatar::Image(picture.clone()),
    );

    let (status, found) = post(
        &p,
        "/check-owner-lid",
        json!({"clientId": "wire3", "number": CONTACT}),
    )
    .await;
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["isOnWhatsApp"], true, "{found}");
    let lid = found["numberLid"]
        .as_str()
        .expect("the number's LID")
        .to_string();
    assert!(!lid.is_empty(), "{found}");
    let (status, unknown) = post(
        &p,
        "/check-owner-lid",
        json!({"clientId": "wire3", "number": "4915100000499"}),
    )
    .await;
    assert_eq!(
        (status, &unknown["isOnWhatsApp"]),
        (200, &json!(false)),
        "{unknown}"
    );

    let (status, info) = post(
        &p,
        "/user-info",
        json!({"clientId": "wire3", "jid": format!("+{CONTACT}")}),
    )
    .await;
    assert_eq!(status, 200, "{info}");
    assert_eq!(info["status"], "At the shop until 6", "{info}");

    let path = format!("/profile-picture?clientId=wire3&jid=%2B{CONTACT}");
    let (status, shown) = get(&p, &path).await;
    assert_eq!(status, 200, "{shown}\n{}", outputs(&p, &workers));
    assert_eq!(shown["jid"], format!("{lid}@lid"), "{shown}");
    assert_eq!(shown["mirrored"], true, "{shown}");
    assert_eq!(shown["id"], info["pictureId"], "{shown} {info}");
    let stored = shown["storedUrl"].as_str().expect("a stored copy");
    assert_eq!(fetch(stored).await, picture, "the mirrored copy");

    // A contact without a picture: 200 with an empty link and a reason.
    net.set_profile(CONTACT, "", Avatar::None);
    let (status, none) = get(&p, &format!("{path}&refresh=true")).await;
    assert_eq!(status, 200, "{none}");
    assert_eq!(none["url"], "", "{none}");
    assert!(
        none["reason"].as_str().is_some_and(|r| !r.is_empty()),
        "{none}"
    );
}
