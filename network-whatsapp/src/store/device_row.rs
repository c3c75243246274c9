//! The library's `Device` to and from a `wa_devices` row, field by field (key
//! pairs as private||public bytes, the account as its protobuf encoding). Every
//! persisted field of `Device` is listed, so a library upgrade that adds one
//! fails to compile here instead of silently dropping it. The private keys
//! (noise, identity, signed pre-key, ADV secret) are sealed with the store
//! keys, each bound to its column and clientId.
use std::sync::Arc;

use parley_shared::store_keys::StoreKeys;
use whatsapp_rust::Jid;
use whatsapp_rust::wacore::client_profile::ClientProfile;
use whatsapp_rust::wacore::libsignal::protocol::{KeyPair, PrivateKey, PublicKey};
use whatsapp_rust::wacore::store::device::{DEVICE_PROPS, account_serde};
use whatsapp_rust::wacore::store::error::StoreError;
use whatsapp_rust::wacore::store::{CachedNoiseCert, CachedServerCertChain, Device};

use super::error::invalid;
use super::tables::device::Model;
use super::values::{array, big, i32_of, u32_of};

/// Where a sealed column of `client_id` belongs (the associated data).
pub(super) fn place(column: &str, client_id: &str) -> String {
    format!("wa_devices.{column}:{client_id}")
}

/// The row of `client_id` holding `d`, its private keys sealed.
pub(super) fn to_row(keys: &StoreKeys, client_id: String, d: &Device) -> Model {
    let cert = d.server_cert_chain.as_ref();
    let seal = |column: &str, plain: &[u8]| keys.seal(&place(column, &client_id), plain);
    let noise_key = seal("noise_key", &key_pair_bytes(&d.noise_key));
    let identity_key = seal("identity_key", &key_pair_bytes(&d.identity_key));
    let signed_pre_key = seal("signed_pre_key", &key_pair_bytes(&d.signed_pre_key));
    let adv_secret_key = seal("adv_secret_key", &d.adv_secret_key);
    Model {
        client_id,
        pn: d.pn.as_ref().map(ToString::to_string),
        lid: d.lid.as_ref().map(ToString::to_string),
        registration_id: big(d.registration_id),
        noise_key,
        identity_key,
        signed_pre_key,
        signed_pre_key_id: big(d.signed_pre_key_id),
        signed_pre_key_signature: d.signed_pre_key_signature.to_vec(),
        adv_secret_key,
        account: d.account.as_deref().map(account_serde::to_bytes),
        push_name: d.push_name.clone(),
        app_version_primary: big(d.app_version_primary),
        app_version_secondary: big(d.app_version_secondary),
        app_version_tertiary: big(d.app_version_tertiary),
        app_version_last_fetched_ms: d.app_version_last_fetched_ms,
        edge_routing_info: d.edge_routing_info.clone(),
        props_hash: d.props_hash.clone(),
        next_pre_key_id: big(d.next_pre_key_id),
        first_unupload_pre_key_id: big(d.first_unupload_pre_key_id),
        server_has_prekeys: d.server_has_prekeys,
        nct_salt: d.nct_salt.clone(),
        cert_intermediate_key: cert.map(|c| c.intermediate.key.to_vec()),
        cert_intermediate_not_before: cert.map(|c| c.intermediate.not_before),
        cert_intermediate_not_after: cert.map(|c| c.intermediate.not_after),
        cert_leaf_key: cert.map(|c| c.leaf.key.to_vec()),
        cert_leaf_not_before: cert.map(|c| c.leaf.not_before),
        cert_leaf_not_after: cert.map(|c| c.leaf.not_after),
        login_counter: i64::from(d.login_counter),
        lid_migrated: d.lid_migrated,
        last_signed_pre_key_rotation_ms: d.last_signed_pre_key_rotation_ms,
        read_receipts_disabled: d.read_receipts_disabled,
    }
}

/// The device a row holds. Runtime-only fields (device props, client profile)
/// get the library's defaults, as when it deserializes a stored device.
pub(super) fn from_row(keys: &StoreKeys, m: Model) -> Result<Device, StoreError> {
    let server_cert_chain = cert_chain(&m)?;
    let open = |column: &str, stored: &[u8]| {
        keys.open(&place(column, &m.client_id), stored)
            .map_err(|e| invalid(column, e))
    };
    let noise_key = open("noise_key", &m.noise_key)?;
    let identity_key = open("identity_key", &m.identity_key)?;
    let signed_pre_key = open("signed_pre_key", &m.signed_pre_key)?;
    let adv_secret_key = open("adv_secret_key", &m.adv_secret_key)?;
    let account = m
        .account
        .as_deref()
        .map(account_serde::from_bytes)
        .transpose()
        .map_err(|e| invalid("device account", e))?
        .map(Arc::new);
    Ok(Device {
        pn: m.pn.as_deref().map(jid).transpose()?,
        lid: m.lid.as_deref().map(jid).transpose()?,
        registration_id: u32_of("registration id", m.registration_id)?,
        noise_key: key_pair("noise key", &noise_key)?,
        identity_key: key_pair("identity key", &identity_key)?,
        signed_pre_key: key_pair("signed pre-key", &signed_pre_key)?,
        signed_pre_key_id: u32_of("signed pre-key id", m.signed_pre_key_id)?,
        signed_pre_key_signature: array("signed pre-key signature", &m.signed_pre_key_signature)?,
        adv_secret_key: array("adv secret key", &adv_secret_key)?,
        account,
        push_name: m.push_name,
        app_version_primary: u32_of("app version", m.app_version_primary)?,
        app_version_secondary: u32_of("app version", m.app_version_secondary)?,
        app_version_tertiary: u32_of("app version", m.app_version_tertiary)?,
        app_version_last_fetched_ms: m.app_version_last_fetched_ms,
        device_props: Arc::new(DEVICE_PROPS.clone()),
        client_profile: ClientProfile::web(),
        edge_routing_info: m.edge_routing_info,
        props_hash: m.props_hash,
        next_pre_key_id: u32_of("next pre-key id", m.next_pre_key_id)?,
        first_unupload_pre_key_id: u32_of("pre-key upload mark", m.first_unupload_pre_key_id)?,
        server_has_prekeys: m.server_has_prekeys,
        nct_salt: m.nct_salt,
        nct_salt_sync_seen: false,
        server_cert_chain,
        login_counter: i32_of("login counter", m.login_counter)?,
        lid_migrated: m.lid_migrated,
        last_signed_pre_key_rotation_ms: m.last_signed_pre_key_rotation_ms,
        read_receipts_disabled: m.read_receipts_disabled,
    })
}

fn jid(s: &str) -> Result<Jid, StoreError> {
    s.parse().map_err(|e| invalid("device JID", e))
}

/// Private key (32 bytes) then public key (32 bytes).
fn key_pair_bytes(k: &KeyPair) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(k.private_key.serialize());
    out.extend_from_slice(k.public_key.public_key_bytes());
    out
}

fn key_pair(what: &str, bytes: &[u8]) -> Result<KeyPair, StoreError> {
    let bytes: [u8; 64] = array(what, bytes)?;
    let (private, public) = bytes.split_at(32);
    let private_key = PrivateKey::deserialize(private).map_err(|e| invalid(what, e))?;
    let public_key = PublicKey::from_djb_public_key_bytes(public).map_err(|e| invalid(what, e))?;
    Ok(KeyPair::new(public_key, private_key))
}

/// The cached server certificate chain: all six columns or none.
fn cert_chain(m: &Model) -> Result<Option<CachedServerCertChain>, StoreError> {
    let cert = |key: &Option<Vec<u8>>, not_before: Option<i64>, not_after: Option<i64>| match (
        key, not_before, not_after,
    ) {
        (Some(key), Some(not_before), Some(not_after)) => Ok(Some(CachedNoiseCert {
            key: array("server certificate key", key)?,
            not_before,
            not_after,
        })),
        _ => Ok::<_, StoreError>(None),
    };
    let intermediate = cert(
        &m.cert_intermediate_key,
        m.cert_intermediate_not_before,
        m.cert_intermediate_not_after,
    )?;
    let leaf = cert(
        &m.cert_leaf_key,
        m.cert_leaf_not_before,
        m.cert_leaf_not_after,
    )?;
    Ok(match (intermediate, leaf) {
        (Some(intermediate), Some(leaf)) => Some(CachedServerCertChain { intermediate, leaf }),
        _ => None,
    })
}
