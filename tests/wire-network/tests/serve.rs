//! `parley serve` with the real adapter (device keys in SQLite) on the
//! wire-level test network, through its HTTP API: pairing by QR, a text out
//! and one in (as a webhook), and a restart that comes back without a scan.
//!
//! Runs the `parley-test-network` binary that `scripts/wire-e2e.sh` builds
//! and names in `PARLEY_TEST_NETWORK_BIN`.
use parley_tests::Parley;
use parley_tests::receiver::Receiver;
use parley_wire_network::{TestDevice, WireNetwork};

mod api;

use api::*;

async fn serve(dir: &std::path::Path, net: &WireNetwork) -> Parley {
    let vars: Vec<(String, String)> = [
        ("PARLEY_ACCOUNT_TOKEN", TOKEN.to_string()),
        ("PARLEY_NETWORK", "whatsapp".to_string()),
        ("PARLEY_NETWORK_URL", net.url()),
        ("PARLEY_ALLOW_HTTP_WEBHOOKS", "true".to_string()),
        ("PARLEY_ALLOW_PRIVATE_EGRESS", "true".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    Parley::start(&bin(), &["serve"], dir, &vars).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_pairs_texts_both_ways_and_restarts_without_a_scan() {
    let net = WireNetwork::start().await.expect("test network");
    let phone = TestDevice::start(&net, PHONE, "Shop phone")
        .await
        .expect("phone");
    let contact = TestDevice::start(&net, CONTACT, "Customer")
        .await
        .expect("contact");
    let mut hooks = Receiver::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut p = serve(dir.path(), &net).await;

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
    let until = tokio::time::Instant::now() + WAIT;
    let event = loop {
        let left = until.saturating_duration_since(tokio::time::Instant::now());
        let Some(hook) = hooks.maybe_next(left).await else {
            panic!("no webhook for {theirs}:\n{}", p.output());
        };
        let body = hook.json();
        if body.to_string().contains(&theirs) {
            break body;
        }
    };
    assert!(
        event.to_string().contains("Thanks, when will it arrive?"),
        "{event}"
    );

    // A restart comes back from the stored device keys, without a scan.
    p.terminate().await;
    let p = serve(dir.path(), &net).await;
    let again = connected(&p, "wire1").await;
    assert_eq!(again, jid);
    assert!(net.handshakes("IK") >= 1, "the restart resumed with IK");
}
