//! Pairing from the phone's side: the QR's fields, and the pair-success the
//! phone has the server send (the ADV identity signed with the phone's
//! identity key, wrapped in an HMAC keyed with the QR's secret, or with the
//! secret a code pairing derived: see `code`).
use anyhow::{Context, anyhow, bail};
use base64::Engine as _;
use base64::prelude::BASE64_STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use whatsapp_rust::buffa::Message;
use whatsapp_rust::wacore::libsignal::protocol::KeyPair;
use whatsapp_rust::wacore_binary::node::Node;
use whatsapp_rust::waproto::whatsapp as wa;

use crate::nodes::{SERVER, attr, child, element, leaf_bytes, now};
use crate::registry::device_jid;

/// The account-signature prefix of an ADV device identity.
const ADV_ACCOUNT_SIGNATURE: &[u8] = &[6, 0];

/// What a QR code says: `ref,noise,identity,adv-secret[,client-type]`.
pub struct Qr {
    pub reference: String,
    pub noise: [u8; 32],
    pub identity: [u8; 32],
    pub adv_secret: Vec<u8>,
}

fn key32(b64: &str, what: &str) -> anyhow::Result<[u8; 32]> {
    let bytes = BASE64_STANDARD
        .decode(b64)
        .with_context(|| format!("the QR's {what} is not base64"))?;
    bytes
        .try_into()
        .map_err(|_| anyhow!("the QR's {what} is not 32 bytes"))
}

impl Qr {
    pub fn parse(code: &str) -> anyhow::Result<Self> {
        let parts: Vec<&str> = code.split(',').collect();
        if parts.len() < 4 || parts.iter().take(4).any(|p| p.is_empty()) {
            bail!("not a pairing QR code: {code:?}");
        }
        Ok(Self {
            reference: parts[0].to_string(),
            noise: key32(parts[1], "noise key")?,
            identity: key32(parts[2], "identity key")?,
            adv_secret: BASE64_STANDARD
                .decode(parts[3])
                .context("the QR's secret is not base64")?,
        })
    }
}

/// Who is being linked: the account and the device number it gets.
pub struct Linked<'a> {
    pub phone: &'a str,
    pub lid: &'a str,
    pub device: u16,
    pub key_index: u32,
    pub raw_id: u32,
}

/// A pair-success the server sent and the companion has yet to sign: whom
/// it links, and the keys its signature is checked against.
#[derive(Debug)]
pub struct Pending {
    pub user: String,
    pub device: u16,
    key_index: u32,
    companion: [u8; 32],
    phone: [u8; 32],
}

impl Pending {
    pub fn new(linked: &Linked<'_>, companion: [u8; 32], phone_identity: &KeyPair) -> Self {
        let mut phone = [0; 32];
        phone.copy_from_slice(phone_identity.public_key.public_key_bytes());
        Self {
            user: linked.phone.to_string(),
            device: linked.device,
            key_index: linked.key_index,
            companion,
            phone,
        }
    }

    /// Checks the companion's `pair-device-sign` as the server does before
    /// it links anyone: the device identity it returns carries the phone's
    /// account signature over this companion's identity key and the
    /// companion's own device signature over both (the chain every client
    /// checks of another account's companion: wacore's
    /// `validate_adv_with_identity_key`), for the key index the phone gave.
    /// Returns the signed identity the server keeps and hands out.
    pub fn check(&self, sign: &Node) -> anyhow::Result<Vec<u8>> {
        use whatsapp_rust::wacore::adv::{AdvValidation, validate_adv_with_identity_key};
        let identity = child(sign, "device-identity").context("no device-identity")?;
        if attr(identity, "key-index") != Some(self.key_index.to_string()) {
            bail!("the device identity names another key index");
        }
        let bytes = crate::nodes::bytes(identity).context("an empty device-identity")?;
        match validate_adv_with_identity_key(bytes, &self.companion, Some(&self.phone)) {
            AdvValidation::Valid => Ok(bytes.to_vec()),
            other => bail!("the companion's device identity does not verify ({other:?})"),
        }
    }
}

/// The `pair-success` IQ for the companion whose identity key is
/// `companion_identity`, MAC'd with `adv_secret` (the QR's, or the one a
/// code pairing derived).
pub fn pair_success(
    companion_identity: &[u8; 32],
    adv_secret: &[u8],
    linked: &Linked<'_>,
    phone_identity: &KeyPair,
) -> anyhow::Result<Node> {
    let details = wa::ADVDeviceIdentity {
        raw_id: Some(linked.raw_id),
        timestamp: Some(now()),
        key_index: Some(linked.key_index),
        account_type: Some(wa::ADVEncryptionType::E2EE),
        device_type: Some(wa::ADVEncryptionType::E2EE),
    }
    .encode_to_vec();
    let mut signed_bytes = ADV_ACCOUNT_SIGNATURE.to_vec();
    signed_bytes.extend_from_slice(&details);
    signed_bytes.extend_from_slice(companion_identity);
    let signature = phone_identity
        .private_key
        .calculate_signature(&signed_bytes, &mut rand10::rng())
        .map_err(|e| anyhow!("signing the device identity: {e}"))?;
    let signed = wa::ADVSignedDeviceIdentity {
        details: Some(details),
        account_signature_key: Some(phone_identity.public_key.public_key_bytes().to_vec()),
        account_signature: Some(signature.to_vec()),
        device_signature: None,
    }
    .encode_to_vec();
    let mut mac =
        Hmac::<Sha256>::new_from_slice(adv_secret).map_err(|e| anyhow!("HMAC key: {e}"))?;
    mac.update(&signed);
    let container = wa::ADVSignedDeviceIdentityHMAC {
        details: Some(signed),
        hmac: Some(mac.finalize().into_bytes().to_vec()),
        account_type: Some(wa::ADVEncryptionType::E2EE),
    }
    .encode_to_vec();
    let device = element(
        "device",
        &[
            ("jid", device_jid(linked.phone, linked.device, SERVER)),
            ("lid", device_jid(linked.lid, linked.device, "lid")),
        ],
        vec![],
    );
    let platform = element("platform", &[("name", "android".into())], vec![]);
    // Accounts on the network today have their 1:1 chats on LIDs: a companion
    // learns it at pairing and addresses direct messages by LID.
    let props = wa::ClientPairingProps {
        is_chat_db_lid_migrated: Some(true),
        ..Default::default()
    }
    .encode_to_vec();
    let success = element(
        "pair-success",
        &[],
        vec![
            leaf_bytes("device-identity", container),
            device,
            platform,
            leaf_bytes("client-props", props),
        ],
    );
    Ok(element(
        "iq",
        &[
            ("from", SERVER.into()),
            ("type", "set".into()),
            ("id", format!("pair-success-{}", linked.device)),
            ("t", now().to_string()),
        ],
        vec![success],
    ))
}

/// The IQ that shows an unregistered client its QR references.
pub fn pair_device(refs: &[String]) -> Node {
    let refs = refs
        .iter()
        .map(|r| leaf_bytes("ref", r.as_bytes().to_vec()))
        .collect();
    element(
        "iq",
        &[
            ("from", SERVER.into()),
            ("type", "set".into()),
            ("id", "pair-device-1".into()),
        ],
        vec![element("pair-device", &[], refs)],
    )
}
