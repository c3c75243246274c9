//! Connection faults through `parley serve` on the wire-level test network,
//! where the library alone does not bring the session back: the worker's
//! own bounded backoff does.
//!
//! Runs the `parley-test-network` binary that `scripts/wire-e2e.sh` builds.
mod api;

use api::*;
use parley_wire_network::faults::Fault;

/// A login refused as too many (`<failure reason="429">`): whatsapp-rust
/// gives up on its own after a failure other than 500 and 503; the worker
/// connects the session again after its backoff, and messages flow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_refused_as_rate_limited_comes_back_by_the_workers_backoff() {
    let LinkedServe {
        net,
        contact,
        p,
        device,
        // Kept alive: the phone shares the app-state key (and with it
        // the salt) and the directory holds the database.
        phone: _phone,
        dir: _dir,
        ..
    } = linked_on_serve("wirek").await;
    net.arm_fault(PHONE, device, Fault::LoginRateLimited, 1);
    assert!(net.drop_socket(PHONE, device));
    eventually("the refused login", || async {
        (net.faults_left(PHONE, device, Fault::LoginRateLimited) == 0).then_some(())
    })
    .await;
    eventually("the session back online", || async {
        net.is_live(PHONE, device).then_some(())
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
    assert_eq!(net.most_live_sockets(PHONE, device), 1);
}
