//! The test-network build guards itself: its library accepts a certificate
//! chain nobody signed (the switch these tests need), the adapter's own check
//! sees that, and the program refuses to dial the network with it. The
//! shipped build's side (the check passes, `PARLEY_NETWORK_URL` refused) is
//! tested in the root workspace.
use std::path::Path;

use parley_network_whatsapp::live::{certificates_verified, test_network_build};

#[test]
fn the_adapters_check_sees_the_certificate_switch_of_this_build() {
    assert!(test_network_build());
    let refused = certificates_verified().expect_err("this build accepts any server");
    assert!(refused.contains("must not dial the network"), "{refused}");
}

#[tokio::test]
async fn the_test_network_build_refuses_to_start_the_network_without_a_test_url() {
    let dir = tempfile::tempdir().expect("temp dir");
    let vars: Vec<(String, String)> = [
        ("PARLEY_NETWORK", "whatsapp"),
        (
            "PARLEY_ACCOUNT_TOKEN",
            "test-token-0123456789abcdef0123456789",
        ),
        ("PARLEY_BIND", "127.0.0.1:0"),
        ("PARLEY_OPS_BIND", "127.0.0.1:0"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let bin = Path::new(env!("CARGO_BIN_EXE_parley-test-network"));
    let (ok, out) = parley_tests::process::run_once(bin, &["serve"], dir.path(), &vars).await;
    assert!(!ok, "it must not start: {out}");
    assert!(
        out.contains("refusing to start the whatsapp network")
            && out.contains("test-network build"),
        "{out}"
    );
}
