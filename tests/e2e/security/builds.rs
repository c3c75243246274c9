//! The program users build never dials a test network: `PARLEY_NETWORK_URL`
//! (honoured by the test-network build only, a workspace of its own under
//! tests/wire-network) makes it refuse to start rather than be ignored. That
//! this build checks the network's certificates is the adapter's own unit
//! test; that the test-network build refuses the network is the wire suite's.
use crate::support::*;

#[tokio::test]
async fn the_shipped_build_refuses_a_test_network_url() {
    let dir = tempfile::tempdir().unwrap();
    let all = vars(&[
        ("PARLEY_ACCOUNT_TOKEN", TOKEN),
        ("PARLEY_NETWORK", "whatsapp"),
        ("PARLEY_NETWORK_URL", "ws://127.0.0.1:9/ws/chat"),
        ("PARLEY_BIND", "127.0.0.1:0"),
        ("PARLEY_OPS_BIND", "127.0.0.1:0"),
    ]);
    let (ok, out) = parley_tests::process::run_once(bin(), &["serve"], dir.path(), &all).await;
    assert!(!ok, "it must not start: {out}");
    assert!(
        out.contains("PARLEY_NETWORK_URL is honoured only by the test-network build"),
        "{out}"
    );
}
