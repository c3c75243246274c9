//! The gateway with the real adapter on the wire-level test network, through
//! its HTTP API: `parley serve` (device keys in SQLite) pairing by QR, a text
//! out and one in (as a webhook), and a restart that comes back without a
//! scan; on `serve` and on a cluster (an API and two workers, keys in
//! PostgreSQL): pairing by code, and `/disconnect` unlinking the device;
//! number checks, user info and a contact's picture, mirrored to storage;
//! at-least-once reception: a message refused by the log, one that arrives
//! damaged, one whose Signal session the receiving side lost (asked again
//! of its sender, or of the session's phone), and one left to a newer owner.
//!
//! Runs this workspace's `parley-test-network` binary (the program built
//! with the adapter's test-network feature).
use parley_tests::receiver::Receiver;
use parley_wire_network::faults::Fault;
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
    let db = serve_db(dir.path()).await;
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

/// The test-network build serves `/sandbox/*` over the test network only
/// when it is given a test network's control API: without one its routes
/// are the spec's 404, as in every build a user can get.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_routes_are_404_without_a_control_url() {
    let net = WireNetwork::start().await.expect("test network");
    let dir = tempfile::tempdir().expect("temp dir");
    let p = serve(dir.path(), &net, &[]).await;
    let (status, started) = post(&p, "/start?clientId=plain", json!({})).await;
    assert_eq!(status, 200, "{started}");
    for (path, body) in [
        (
            "/sandbox/link",
            json!({"clientId": "plain", "phone": "4915100000001"}),
        ),
        ("/sandbox/contacts", json!({"phone": "4915100000002"})),
        (
            "/sandbox/faults",
            json!({"clientId": "plain", "op": "drop"}),
        ),
    ] {
        let (status, answer) = post(&p, path, body).await;
        assert_eq!(status, 404, "{path}: {answer}");
    }
    let (status, answer) = get(&p, "/sandbox/outbox?clientId=plain").await;
    assert_eq!(status, 404, "{answer}");
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

/// At-least-once reception through whatsapp-rust's durability hook: a
/// message whose event the log refuses (the session's cap is reached while
/// its receiver retries an older one) is not acknowledged to the network;
/// the network sends it again at the next login, the library replays it from
/// the device store's pending inbound buffer, and its event arrives once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_whose_event_is_refused_comes_again_and_is_delivered() {
    use parley_tests::receiver::Behaviour;
    let (net, phone, contact) = network_with_phones().await;
    net.redeliver_unacked(true);
    let mut hooks = Receiver::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    // Room for one undelivered event.
    let p = serve(dir.path(), &net, &[("PARLEY_EVENT_SESSION_CAP", "1")]).await;
    let code = start_for_qr(&p, "wire9", &hooks.url).await;
    let linked = phone.scan(&net, &code).expect("the phone scans");
    connected(&p, "wire9").await;
    // A text out first: the contact learns the device (as a customer who
    // was written to).
    let out = send_text(&p, "wire9", CONTACT, "Your order shipped").await;
    contact
        .wait_for(WAIT, |r| r.id == out)
        .await
        .unwrap_or_else(|| panic!("the contact did not get {out}:\n{}", p.output()));
    event_for(&mut hooks, &p, &out).await;
    logged_as_delivered(&p, "wire9", &out).await;

    // The receiver answers 503: the first event stays pending through its
    // retries (about 3.5 s), then is a dead letter.
    hooks.set_default(Behaviour::Status(503));
    let first = contact
        .send_text(&phone.jid(), "first")
        .await
        .expect("the contact writes");
    event_for(&mut hooks, &p, &first).await;
    let second = contact
        .send_text(&phone.jid(), "second")
        .await
        .expect("the contact writes again");
    // The second is refused by the log meanwhile: not logged, not acknowledged.
    eventually("the second message refused by the log", || async {
        let metrics = reqwest::get(p.ops_url("/metrics"))
            .await
            .ok()?
            .text()
            .await
            .ok()?;
        metrics
            .lines()
            .any(|l| l.starts_with("parley_event_log_failures_total") && l.contains("received"))
            .then_some(())
    })
    .await;
    hooks.set_default(Behaviour::Status(200));
    // The first is delivered on a retry: room again. The network sends the
    // unacknowledged second once the device logs in again.
    logged_as_delivered(&p, "wire9", &first).await;
    let (_, body) = get(&p, "/events?clientId=wire9").await;
    let logged: Vec<serde_json::Value> = body["events"].as_array().cloned().unwrap_or_default();
    assert!(
        logged
            .iter()
            .all(|e| e["event"]["messageId"] != second.as_str()),
        "the second was not logged: {body}"
    );
    assert!(
        net.drop_socket(PHONE, linked.device),
        "the device was online"
    );
    let event = event_for(&mut hooks, &p, &second).await;
    assert_eq!(event["body"], "second", "{event}");
    assert_eq!(event["eventId"], format!("msg_wire9_{second}").as_str());
    let (_, body) = get(&p, "/events?clientId=wire9").await;
    let seqs: Vec<u64> = body["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["seq"].as_u64().expect("seq"))
        .collect();
    assert_eq!(seqs, [1, 2, 3], "{body}");
    // Nothing more: the second is delivered once.
    assert!(
        hooks
            .maybe_next(std::time::Duration::from_secs(2))
            .await
            .is_none(),
        "no duplicate"
    );
}

/// A contact's message that reaches the session damaged (its MAC no longer
/// matches: "Bad MAC") is asked for again: the session's client sends a
/// retry receipt, the contact's client seals the message anew and sends it
/// once more, and its event arrives once; nothing of the damaged copy
/// reaches the webhook.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_that_arrives_damaged_is_asked_for_again_and_delivered_once() {
    let (net, phone, contact) = network_with_phones().await;
    let mut hooks = Receiver::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let p = serve(dir.path(), &net, &[]).await;
    let code = start_for_qr(&p, "wire11", &hooks.url).await;
    let linked = phone.scan(&net, &code).expect("the phone scans");
    connected(&p, "wire11").await;
    // A text each way: the contact's next message is an ordinary Signal
    // message of an established session.
    let out = send_text(&p, "wire11", CONTACT, "Your order shipped").await;
    contact
        .wait_for(WAIT, |r| r.id == out)
        .await
        .unwrap_or_else(|| panic!("the contact did not get {out}:\n{}", p.output()));
    let first = contact
        .send_text(&phone.jid(), "Thanks!")
        .await
        .expect("the contact writes");
    event_for(&mut hooks, &p, &first).await;

    net.arm_fault(PHONE, linked.device, Fault::Garble, 1);
    let damaged = contact
        .send_text(&phone.jid(), "Where is it now?")
        .await
        .expect("the contact writes again");
    let event = event_for(&mut hooks, &p, &damaged).await;
    assert_eq!(event["body"], "Where is it now?", "{event}");
    assert_eq!(
        net.faults_left(PHONE, linked.device, Fault::Garble),
        0,
        "the message arrived damaged"
    );
    let asked_again = net
        .relayed_from(PHONE, linked.device)
        .iter()
        .any(|r| r.id == damaged && r.kind == "receipt:retry");
    assert!(asked_again, "{:?}", net.relayed_from(PHONE, linked.device));
    delivered_once(&mut hooks, &p, "wire11", &damaged).await;
}

/// Two sessions of one gateway, the shop's (a device its phone linked) and
/// the customer's (a device the contact's phone linked), write each other;
/// then the customer's session loses its Signal session with the shop's
/// device (its database restored from an older backup while `serve` was
/// stopped), and the contact's phone is offline. The shop's next message,
/// an ordinary Signal message of the session that is gone, cannot be opened
/// ("no session"): the customer's client asks for it again with retry
/// receipts, the second carrying its keys, and the shop's client builds a
/// new session from them and sends the message once more. The customer's
/// event arrives once, and each side logs the message once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_lost_its_signal_session_asks_again_and_delivers_once() {
    let (net, contact, buyer, after) = lost_session("1", false).await;
    let retries = net
        .relayed_from(CONTACT, buyer)
        .iter()
        .filter(|r| r.id == after && r.kind == "receipt:retry")
        .count();
    // The first without keys (the shop's client resends on the session it
    // holds), the second with them.
    assert!(retries >= 2, "{:?}", net.relayed_from(CONTACT, buyer));
    assert!(contact.placeholders_answered().is_empty());
}

/// The same with the contact's phone online: the customer's session asks
/// it for the message too, and whichever answers first, the sender or the
/// phone, the event arrives once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_lost_its_signal_session_and_its_phone_deliver_once() {
    let (net, contact, buyer, after) = lost_session("2", true).await;
    let asked_again = net
        .relayed_from(CONTACT, buyer)
        .iter()
        .any(|r| r.id == after && r.kind == "receipt:retry");
    assert!(asked_again, "{:?}", net.relayed_from(CONTACT, buyer));
    assert!(
        contact.placeholders_answered().contains(&after),
        "the phone sent it: {:?}",
        contact.placeholders_answered()
    );
}

/// The shop (`shop<n>`) and the customer (`buyer<n>`), the customer's
/// session's Signal session with the shop's device lost, the contact's
/// phone answering placeholder requests when `phone_online`; the shop's
/// next message, checked delivered once and logged once on each side.
/// Returns the network, the contact's phone, the customer's device number
/// and that message's id.
async fn lost_session(n: &str, phone_online: bool) -> (WireNetwork, TestDevice, u16, String) {
    let (shop_id, buyer_id) = (format!("shop{n}"), format!("buyer{n}"));
    let LinkedServe {
        net,
        contact,
        hooks: mut shop_hooks,
        mut p,
        device,
        dir,
        ..
    } = linked_on_serve(&shop_id).await;
    let mut buyer_hooks = Receiver::start().await;
    let code = start_for_qr(&p, &buyer_id, &buyer_hooks.url).await;
    let buyer = contact
        .scan(&net, &code)
        .expect("the contact's phone links the customer's session");
    connected(&p, &buyer_id).await;
    let ready = net
        .watcher()
        .keys_uploaded(CONTACT, buyer.device, WAIT)
        .await;
    assert!(ready, "the customer's session uploads its keys");
    // The contact writes first: its phone issues the shop a privacy token,
    // as the shop's answer issues the customer's session one (neither waits
    // for its salt by app state). Then a text each way between the two
    // sessions: the next one is an ordinary Signal message.
    let hello = contact
        .send_text(&format!("{PHONE}@s.whatsapp.net"), "Hello")
        .await
        .expect("the contact writes");
    event_for(&mut shop_hooks, &p, &hello).await;
    assert!(
        net.watcher()
            .holds_token(PHONE, device, CONTACT, WAIT)
            .await
    );
    let out = send_text(&p, &shop_id, CONTACT, "Your order shipped").await;
    event_for(&mut buyer_hooks, &p, &out).await;
    let watcher = net.watcher();
    let issued = watcher
        .holds_token(CONTACT, buyer.device, PHONE, WAIT)
        .await;
    assert!(issued, "the customer's session holds the shop's token");
    let back = send_text(&p, &buyer_id, PHONE, "Thanks!").await;
    event_for(&mut shop_hooks, &p, &back).await;

    contact.answer_placeholders(phone_online);
    p.terminate().await;
    let shop = format!("{}:{device}@", net.lid_of(PHONE).expect("the shop's LID"));
    let forgotten = forget_sessions(dir.path(), &buyer_id, &shop).await;
    assert_eq!(forgotten, 1, "the customer's session held one with {shop}");
    let p = serve(dir.path(), &net, &[]).await;
    connected(&p, &shop_id).await;
    connected(&p, &buyer_id).await;

    let after = send_text(&p, &shop_id, CONTACT, "It arrives tomorrow").await;
    let event = event_for(&mut buyer_hooks, &p, &after).await;
    assert_eq!(event["body"], "It arrives tomorrow", "{event}");
    delivered_once(&mut buyer_hooks, &p, &buyer_id, &after).await;
    assert_eq!(events_logged(&p, &shop_id, &after).await, 1, "the shop's");
    (net, contact, buyer.device, after)
}

/// The session's store lost its Signal session with the contact's phone
/// (its database restored from an older backup while `serve` was stopped):
/// the contact's next message cannot be opened. Besides the retry receipts
/// to the contact, the session's client asks its own phone for the message
/// (a placeholder resend request); the phone, which opened its copy, sends
/// it, and its event arrives once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_the_session_cannot_open_comes_from_its_phone_once() {
    let LinkedServe {
        net,
        phone,
        contact,
        mut hooks,
        mut p,
        device,
        dir,
    } = linked_on_serve("wire13").await;
    // The contact writes (its phone issues the session a privacy token) and
    // the session answers: the contact's next message is an ordinary
    // Signal message.
    let first = contact
        .send_text(&phone.jid(), "Is my order ready?")
        .await
        .expect("the contact writes");
    event_for(&mut hooks, &p, &first).await;
    assert!(
        net.watcher()
            .holds_token(PHONE, device, CONTACT, WAIT)
            .await
    );
    let out = send_text(&p, "wire13", CONTACT, "It shipped").await;
    contact
        .wait_for(WAIT, |r| r.id == out)
        .await
        .unwrap_or_else(|| panic!("the contact did not get {out}:\n{}", p.output()));

    p.terminate().await;
    let contact_phone = format!("{}@", net.lid_of(CONTACT).expect("the contact's LID"));
    let forgotten = forget_sessions(dir.path(), "wire13", &contact_phone).await;
    assert_eq!(forgotten, 1, "the session held one with {contact_phone}");
    let p = serve(dir.path(), &net, &[]).await;
    connected(&p, "wire13").await;

    let theirs = contact
        .send_text(&phone.jid(), "Is it here yet?")
        .await
        .expect("the contact writes again");
    let event = event_for(&mut hooks, &p, &theirs).await;
    assert_eq!(event["body"], "Is it here yet?", "{event}");
    assert!(
        phone.placeholders_answered().contains(&theirs),
        "the phone sent it: {:?}",
        phone.placeholders_answered()
    );
    delivered_once(&mut hooks, &p, "wire13", &theirs).await;
}

/// The message `message_id`, whose event came, comes no second time (no
/// more webhooks for it within 2 s), and session `id`'s log holds it once.
async fn delivered_once(
    hooks: &mut Receiver,
    p: &parley_tests::Parley,
    id: &str,
    message_id: &str,
) {
    while let Some(more) = hooks.maybe_next(std::time::Duration::from_secs(2)).await {
        let more = more.json();
        assert_ne!(more["messageId"], message_id, "delivered twice: {more}");
    }
    assert_eq!(events_logged(p, id, message_id).await, 1, "logged once");
}

/// How many events of the message `message_id` the session's log holds.
async fn events_logged(p: &parley_tests::Parley, id: &str, message_id: &str) -> usize {
    let (_, body) = get(p, &format!("/events?clientId={id}")).await;
    body["events"]
        .as_array()
        .unwrap_or_else(|| panic!("no events: {body}"))
        .iter()
        .filter(|e| e["event"]["messageId"] == message_id)
        .count()
}

/// Deletes, from `serve`'s database in `dir` (not running), the Signal
/// sessions the session `id` holds with the devices whose addresses start
/// with `with`; returns how many.
async fn forget_sessions(dir: &std::path::Path, id: &str, with: &str) -> u64 {
    let db = serve_db(dir).await;
    let deleted = db
        .conn()
        .execute_raw(sea_orm::Statement::from_sql_and_values(
            db.conn().get_database_backend(),
            "DELETE FROM wa_signal_sessions WHERE client_id = ? AND address LIKE ?",
            [id.into(), format!("{with}%").into()],
        ))
        .await
        .expect("delete the sessions");
    deleted.rows_affected()
}

/// An owner that a newer one has fenced out (its fence is behind the one in
/// the database) never acknowledges a message it could not log: the network
/// keeps it, the owner stops at once, and the session's next connection (the
/// next owner, here `serve` claiming it again once the newer fence is behind
/// it) receives it again and delivers it, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fenced_out_owner_leaves_the_message_to_the_next_connection() {
    let (net, phone, contact) = network_with_phones().await;
    net.redeliver_unacked(true);
    let mut hooks = Receiver::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let p = serve(dir.path(), &net, &[]).await;
    let code = start_for_qr(&p, "wire10", &hooks.url).await;
    phone.scan(&net, &code).expect("the phone scans");
    connected(&p, "wire10").await;
    let out = send_text(&p, "wire10", CONTACT, "Your order shipped").await;
    contact
        .wait_for(WAIT, |r| r.id == out)
        .await
        .unwrap_or_else(|| panic!("the contact did not get {out}:\n{}", p.output()));
    event_for(&mut hooks, &p, &out).await;

    // A newer owner's claim, as the database shows it: a fence 3 s ahead of
    // any this process can be granted before then.
    let db = serve_db(dir.path()).await;
    let ahead = u64::try_from(chrono_now_micros()).unwrap() + 3_000_000;
    let newer = parley_shared::db::StatePatch::default();
    assert!(
        db.fenced_update("wire10", ahead, newer)
            .await
            .expect("update")
    );

    let fenced = contact
        .send_text(&phone.jid(), "while fenced out")
        .await
        .expect("the contact writes");
    // Refused where the owner first meets the newer fence: its device store
    // (decrypting the message writes its keys) or its event log.
    eventually("the owner fenced out", || async {
        let out = p.output();
        out.contains("a newer owner holds the session")
            .then_some(())
    })
    .await;
    // Delivered once the session runs again with a fence past the newer one,
    // from the network's redelivery to the new connection.
    let event = event_for(&mut hooks, &p, &fenced).await;
    assert_eq!(event["body"], "while fenced out", "{event}");
    let (_, body) = get(&p, "/events?clientId=wire10").await;
    let ids: Vec<&str> = body["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| e["event"]["messageId"].as_str())
        .collect();
    assert_eq!(ids, [out.as_str(), fenced.as_str()], "logged once: {body}");
    assert!(
        hooks
            .maybe_next(std::time::Duration::from_secs(2))
            .await
            .is_none(),
        "no duplicate"
    );
}

fn chrono_now_micros() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_micros()
}
