//! Connection faults through `parley serve` on the wire-level test network,
//! where the library alone does not bring the session back: the worker's
//! own bounded backoff does.
//!
//! Runs the `parley-test-network` binary that `scripts/wire-e2e.sh` builds.
mod api;

use api::*;
use parley_tests::receiver::Receiver;
use parley_wire_network::faults::Fault;

/// A login refused as too many (`<failure reason="429">`): whatsapp-rust
/// gives up on its own after a failure other than 500 and 503; the worker
/// connects the session again after its backoff, and messages flow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_refused_as_rate_limited_comes_back_by_the_workers_backoff() {
    let (net, phone, contact) = network_with_phones().await;
    let hooks = Receiver::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (p, _) = gateway(Shape::Serve, dir.path(), &net, &[]).await;
    let code = start_for_qr(&p, "wirek", &hooks.url).await;
    let linked = phone.scan(&net, &code).expect("the phone scans");
    connected(&p, "wirek").await;

    net.arm_fault(PHONE, linked.device, Fault::LoginRateLimited, 1);
    assert!(net.drop_socket(PHONE, linked.device));
    eventually("the refused login", || async {
        (net.faults_left(PHONE, linked.device, Fault::LoginRateLimited) == 0).then_some(())
    })
    .await;
    eventually("the session back online", || async {
        net.is_live(PHONE, linked.device).then_some(())
    })
    .await;
    connected(&p, "wirek").await;
    let id = send_text(&p, "wirek", CONTACT, "back after a 429").await;
    let got = contact.wait_for(WAIT, |r| r.id == id).await;
    assert_eq!(
        got.and_then(|r| r.text).as_deref(),
        Some("back after a 429"),
        "{}",
        p.output()
    );
    assert_eq!(net.most_live_sockets(PHONE, linked.device), 1);
}
