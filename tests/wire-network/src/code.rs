//! Pairing by phone-number code. The companion asks for a code
//! (`companion_hello`: its ephemeral key wrapped with the code, which the
//! server cannot read); the user types the code on the phone, which unwraps
//! that key, answers with its own wrapped ephemeral key and identity
//! (`primary_hello`, sent to the companion as a notification); the companion
//! sends its identity in a key bundle encrypted to both ephemeral keys
//! (`companion_finish`); the phone opens it, derives the new ADV secret from
//! both key agreements, and has the server send the `pair-success` signed
//! with its identity and MAC'd with that secret.
use anyhow::{Context, anyhow, bail, ensure};
use whatsapp_rust::wacore::crypto::hkdf_sha256_into;
use whatsapp_rust::wacore::libsignal::crypto::aes_256_gcm_decrypt;
use whatsapp_rust::wacore::libsignal::protocol::{KeyPair, PublicKey};
use whatsapp_rust::wacore::pair_code::PairCodeUtils;
use whatsapp_rust::wacore_binary::node::Node;

use crate::nodes::{SERVER, attr, child, child_bytes, element, iq_result, leaf_bytes};

/// What the server keeps of a companion asking for a code.
#[derive(Clone)]
pub struct CodeRequest {
    /// The companion's noise key (its pairing socket).
    pub noise: [u8; 32],
    pub reference: Vec<u8>,
    /// `salt || iv || ciphertext` of its ephemeral key, under the code.
    pub wrapped_ephemeral: Vec<u8>,
    /// `companion_finish`: the wrapped key bundle and its identity key.
    pub finish: Option<(Vec<u8>, [u8; 32])>,
}

/// What a `link_code_companion_reg` IQ from an unregistered client asks.
pub enum Stage {
    Hello {
        phone: String,
        wrapped: Vec<u8>,
    },
    Finish {
        phone: String,
        bundle: Vec<u8>,
        identity: [u8; 32],
    },
}

/// Reads a `link_code_companion_reg` IQ, if `iq` is one.
pub fn stage(iq: &Node) -> Option<anyhow::Result<Stage>> {
    let reg = child(iq, "link_code_companion_reg")?;
    Some((|| {
        let jid = attr(reg, "jid").context("no jid")?;
        let phone = jid.split('@').next().unwrap_or_default().to_string();
        match attr(reg, "stage").as_deref() {
            Some("companion_hello") => {
                let wrapped = child_bytes(reg, "link_code_pairing_wrapped_companion_ephemeral_pub")
                    .context("no wrapped ephemeral key")?;
                ensure!(
                    wrapped.len() == 80,
                    "wrapped key of {} bytes",
                    wrapped.len()
                );
                Ok(Stage::Hello {
                    phone,
                    wrapped: wrapped.to_vec(),
                })
            }
            Some("companion_finish") => {
                let bundle = child_bytes(reg, "link_code_pairing_wrapped_key_bundle")
                    .context("no key bundle")?
                    .to_vec();
                let identity = child_bytes(reg, "companion_identity_public")
                    .context("no identity")?
                    .try_into()
                    .map_err(|_| anyhow!("identity is not 32 bytes"))?;
                Ok(Stage::Finish {
                    phone,
                    bundle,
                    identity,
                })
            }
            other => bail!("stage {other:?}"),
        }
    })())
}

/// The answer to `companion_hello`: the pairing ref.
pub fn hello_result(id: &str, reference: &[u8]) -> Node {
    iq_result(
        id,
        vec![element(
            "link_code_companion_reg",
            &[],
            vec![leaf_bytes("link_code_pairing_ref", reference.to_vec())],
        )],
    )
}

/// The phone's answer once the code was typed, and the key it keeps to open
/// the companion's bundle.
pub struct PrimaryHello {
    pub notification: Node,
    pub ephemeral: KeyPair,
    pub companion_ephemeral: [u8; 32],
}

/// Unwraps the companion's key with `code` and wraps a fresh one of the
/// phone's (PBKDF2 of 2^17 rounds each way: call off the async threads).
pub fn primary_hello(
    request: &CodeRequest,
    code: &str,
    identity: &KeyPair,
) -> anyhow::Result<PrimaryHello> {
    let companion_ephemeral =
        PairCodeUtils::decrypt_primary_ephemeral_pub(&request.wrapped_ephemeral, code)
            .map_err(|e| anyhow!("unwrapping the companion's key: {e}"))?;
    let ephemeral = KeyPair::generate(&mut rand10::rng());
    let ours: [u8; 32] = ephemeral
        .public_key
        .public_key_bytes()
        .try_into()
        .map_err(|_| anyhow!("ephemeral key length"))?;
    let wrapped = PairCodeUtils::encrypt_ephemeral_pub(&ours, code);
    let reg = element(
        "link_code_companion_reg",
        &[("stage", "primary_hello".into())],
        vec![
            leaf_bytes(
                "link_code_pairing_wrapped_primary_ephemeral_pub",
                wrapped.to_vec(),
            ),
            leaf_bytes(
                "primary_identity_pub",
                identity.public_key.public_key_bytes().to_vec(),
            ),
            leaf_bytes("link_code_pairing_ref", request.reference.clone()),
        ],
    );
    let notification = element(
        "notification",
        &[
            ("from", SERVER.into()),
            ("type", "link_code_companion_reg".into()),
            ("id", format!("code-{}", rand10::random::<u32>())),
            ("t", crate::nodes::now().to_string()),
        ],
        vec![reg],
    );
    Ok(PrimaryHello {
        notification,
        ephemeral,
        companion_ephemeral,
    })
}

/// Opens the companion's key bundle and derives the ADV secret the
/// `pair-success` is MAC'd with. Checks the bundle names both identities.
pub fn open_bundle(
    hello: &PrimaryHello,
    bundle: &[u8],
    companion_identity: &[u8; 32],
    identity: &KeyPair,
) -> anyhow::Result<[u8; 32]> {
    ensure!(
        bundle.len() == 32 + 12 + 96 + 16,
        "a key bundle of {} bytes",
        bundle.len()
    );
    let companion_ephemeral = PublicKey::from_djb_public_key_bytes(&hello.companion_ephemeral)
        .map_err(|e| anyhow!("companion ephemeral key: {e}"))?;
    let ephemeral_shared = hello
        .ephemeral
        .private_key
        .calculate_agreement(&companion_ephemeral)
        .map_err(|e| anyhow!("ephemeral agreement: {e}"))?;
    let mut key = [0u8; 32];
    hkdf_sha256_into(
        &ephemeral_shared,
        Some(&bundle[..32]),
        b"link_code_pairing_key_bundle_encryption_key",
        &mut key,
    )
    .map_err(|e| anyhow!("bundle key: {e:?}"))?;
    let iv: [u8; 12] = bundle[32..44].try_into().context("iv")?;
    let mut plain = Vec::with_capacity(96);
    aes_256_gcm_decrypt(&key, &iv, b"", &bundle[44..], &mut plain)
        .map_err(|e| anyhow!("the key bundle does not open: {e:?}"))?;
    ensure!(plain.len() == 96, "a bundle of {} bytes", plain.len());
    ensure!(
        &plain[..32] == companion_identity,
        "the bundle names another companion identity"
    );
    ensure!(
        plain[32..64] == *identity.public_key.public_key_bytes(),
        "the bundle names another phone"
    );
    let companion_identity = PublicKey::from_djb_public_key_bytes(companion_identity)
        .map_err(|e| anyhow!("companion identity: {e}"))?;
    let identity_shared = identity
        .private_key
        .calculate_agreement(&companion_identity)
        .map_err(|e| anyhow!("identity agreement: {e}"))?;
    let mut combined = Vec::with_capacity(96);
    combined.extend_from_slice(&ephemeral_shared);
    combined.extend_from_slice(&identity_shared);
    combined.extend_from_slice(&plain[64..96]);
    let mut adv_secret = [0u8; 32];
    hkdf_sha256_into(&combined, None, b"adv_secret", &mut adv_secret)
        .map_err(|e| anyhow!("ADV secret: {e:?}"))?;
    Ok(adv_secret)
}
