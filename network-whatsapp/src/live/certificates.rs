//! The second line of defence against a build that accepts any server: before
//! the adapter dials the real network, it checks that the library it was
//! built with refuses a certificate chain nobody signed. whatsapp-rust's
//! `danger-skip-cert-chain-verify` feature (which the test-network build turns
//! on, and which Cargo could unify into another build) makes the Noise
//! handshake skip that check; this test does not depend on features, it asks
//! the library's own `verify_server_cert`.
use std::sync::OnceLock;

use whatsapp_rust::wacore::noise::{HandshakeError, HandshakeUtils};
use whatsapp_rust::waproto::buffa::{self, Message};
use whatsapp_rust::waproto::whatsapp::{self as wa, cert_chain::noise_certificate};

/// `Ok` when the library refuses an unsigned server certificate chain, as it
/// must to talk to the real network; else why this build must not. Checked
/// once per process.
pub fn verified() -> Result<(), String> {
    static CHECKED: OnceLock<Result<(), String>> = OnceLock::new();
    CHECKED.get_or_init(check).clone()
}

fn check() -> Result<(), String> {
    let server_static = [0x5a; 32];
    let chain = unsigned_chain(&server_static);
    match HandshakeUtils::verify_server_cert(&chain, &server_static) {
        Err(HandshakeError::CertVerification(_)) => Ok(()),
        Ok(_) => Err(
            "this build accepts a server certificate chain nobody signed (whatsapp-rust's \
             certificate check is off, as in the test-network build): it must not dial the \
             network, only a test network server (PARLEY_NETWORK_URL)"
                .into(),
        ),
        Err(e) => Err(format!(
            "the network's certificate check could not be confirmed: {e}"
        )),
    }
}

/// A well-formed certificate chain (intermediate and leaf, the leaf naming
/// `server_static`) whose signatures are zeros.
fn unsigned_chain(server_static: &[u8; 32]) -> Vec<u8> {
    let intermediate = noise_certificate::Details {
        serial: Some(1),
        issuer_serial: Some(0),
        key: Some(vec![0x33; 32]),
        not_before: Some(1_700_000_000),
        not_after: Some(4_000_000_000),
    };
    let leaf = noise_certificate::Details {
        serial: Some(2),
        issuer_serial: Some(1),
        key: Some(server_static.to_vec()),
        not_before: Some(1_700_000_000),
        not_after: Some(4_000_000_000),
    };
    let certificate = |details: noise_certificate::Details| wa::cert_chain::NoiseCertificate {
        details: Some(details.encode_to_vec()),
        signature: Some(vec![0; 64]),
    };
    wa::CertChain {
        intermediate: buffa::MessageField::some(certificate(intermediate)),
        leaf: buffa::MessageField::some(certificate(leaf)),
    }
    .encode_to_vec()
}

#[cfg(test)]
mod tests {
    /// In the build users get, the check passes; the test-network build's
    /// own test shows it failing there (tests/wire-network).
    #[test]
    fn the_shipped_build_refuses_an_unsigned_chain() {
        assert_eq!(super::verified(), Ok(()));
    }
}
