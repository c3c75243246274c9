//! App-state sync (`w:sync:app:state`): the server holds each account's
//! collections as lists of patches, encrypted by the devices with the
//! account's app-state key, which it cannot read. A device that syncs a
//! collection from version `v` gets the patches after `v`, one that asks for
//! a snapshot (its first sync) a snapshot of them on the CDN; a patch a device
//! sends on the latest version becomes the next one (on an older one: 409,
//! and the client syncs first). The phone starts `regular_high` with the
//! account's privacy-token salt (`nct_salt_sync`, see `crate::tokens`); the
//! test phone, which holds the key, decrypts what companions sent.
use anyhow::{Context, anyhow};
use whatsapp_rust::buffa::MessageField;
use whatsapp_rust::wacore::appstate::hash::{HashState, generate_patch_mac};
use whatsapp_rust::wacore::appstate::{decode_record, encode_record, expand_app_state_keys};
use whatsapp_rust::wacore_binary::node::Node;
use whatsapp_rust::waproto::codec;
use whatsapp_rust::waproto::whatsapp as wa;

use crate::Inner;
use crate::iq::Asker;
use crate::nodes::{SERVER, attr, bytes, child, children, element, iq_result, leaf_bytes, now};
use crate::registry::Registry;

/// A patch a device sent: the collection it is for and its bytes (a `SyncdPatch`).
#[derive(Debug, Clone)]
pub struct Patch {
    pub collection: String,
    pub bytes: Vec<u8>,
}

/// One decrypted change of a patch: its index (`["markChatAsRead", chat]`, ...)
/// and its value.
#[derive(Debug, Clone)]
pub struct Change {
    pub index: Vec<String>,
    pub value: Option<wa::SyncActionValue>,
}

pub fn answer(inner: &Inner, who: &Asker<'_>, id: &str, iq: &Node) -> Node {
    let mut reg = inner.registry();
    let mut collections = Vec::new();
    let mut fetched = Vec::new();
    for c in child(iq, "sync").map(children).unwrap_or_default() {
        if c.tag != "collection" {
            continue;
        }
        let Some(name) = attr(c, "name") else {
            continue;
        };
        let base: usize = attr(c, "version").and_then(|v| v.parse().ok()).unwrap_or(0);
        let sent = child(c, "patch").and_then(bytes).map(<[u8]>::to_vec);
        let key = (who.phone.to_string(), name.clone());
        let held = reg.collections.entry(key).or_default();
        let node = match sent {
            // A patch on an older version than the server's: 409, and the
            // client syncs and tries again (`CollectionSyncError::Conflict`).
            Some(_) if base != held.len() => element(
                "collection",
                &[("name", name), ("type", "error".into())],
                vec![element("error", &[("code", "409".into())], vec![])],
            ),
            Some(patch) => {
                held.push(versioned(&patch, base as u64 + 1));
                let version = held.len().to_string();
                tell_companions(&mut reg, who.phone, Some(who.device), &name);
                element(
                    "collection",
                    &[("name", name), ("version", version)],
                    vec![],
                )
            }
            // A device that asks for a snapshot (it has nothing yet) gets
            // one of what the server holds, as the real server answers.
            None if attr(c, "return_snapshot").as_deref() == Some("true") && !held.is_empty() => {
                match snapshot(inner, held) {
                    Ok(reference) => element(
                        "collection",
                        &[("name", name), ("version", held.len().to_string())],
                        vec![leaf_bytes("snapshot", reference)],
                    ),
                    Err(e) => {
                        tracing::warn!(error = %e, collection = %name, "wire network: no snapshot");
                        element(
                            "collection",
                            &[("name", name), ("type", "error".into())],
                            vec![element("error", &[("code", "500".into())], vec![])],
                        )
                    }
                }
            }
            None => {
                let newer: Vec<Node> = held
                    .iter()
                    .skip(base)
                    .map(|p| leaf_bytes("patch", p.clone()))
                    .collect();
                tracing::debug!(phone = who.phone, device = who.device, collection = %name,
                    base, served = newer.len(), "app-state sync");
                let version = held.len().max(base).to_string();
                let kids = if newer.is_empty() {
                    vec![]
                } else {
                    vec![element("patches", &[], newer)]
                };
                element("collection", &[("name", name), ("version", version)], kids)
            }
        };
        if attr(&node, "type").is_none()
            && let Some(version) = attr(&node, "version").and_then(|v| v.parse::<usize>().ok())
            && let Some(name) = attr(&node, "name")
        {
            fetched.push((name, version));
        }
        collections.push(node);
    }
    for (name, version) in fetched {
        let key = (who.phone.to_string(), who.device, name);
        reg.fetched.insert(key, version);
    }
    drop(reg);
    inner.changed.notify_waiters();
    iq_result(id, vec![element("sync", &[], collections)])
}

/// A snapshot of the collection whose patches are `held`, as the server
/// makes one without the account's key: the latest record of every index
/// the patches set and did not remove since, the last patch's snapshot MAC
/// and key id (its author's MAC of exactly that state), encrypted as an
/// app-state blob and put on the CDN; the `ExternalBlobReference` that
/// names it (whatsapp-rust `pre_download_external_blobs`, wacore-appstate
/// `process_snapshot`).
fn snapshot(inner: &Inner, held: &[Vec<u8>]) -> anyhow::Result<Vec<u8>> {
    use whatsapp_rust::buffa::Message;
    use whatsapp_rust::wacore::download::MediaType;
    let plain = snapshot_of(held)?.encode_to_vec();
    let sealed = whatsapp_rust::wacore::upload::encrypt_media(&plain, MediaType::AppState)?;
    let path = format!(
        "/v/t62.app-state/{}",
        hex::encode(rand10::random::<[u8; 12]>())
    );
    inner.shelf.publish(&path, sealed.data_to_upload);
    let reference = wa::ExternalBlobReference {
        media_key: Some(sealed.media_key.to_vec()),
        direct_path: Some(path),
        file_size_bytes: Some(plain.len() as u64),
        file_sha256: Some(sealed.file_sha256.to_vec()),
        file_enc_sha256: Some(sealed.file_enc_sha256.to_vec()),
        ..Default::default()
    };
    Ok(reference.encode_to_vec())
}

/// The snapshot of the patches `held` (see [`snapshot`]).
fn snapshot_of(held: &[Vec<u8>]) -> anyhow::Result<wa::SyncdSnapshot> {
    let mut order: Vec<Vec<u8>> = Vec::new();
    let mut records: std::collections::HashMap<Vec<u8>, wa::SyncdRecord> = Default::default();
    let mut last = None;
    for bytes in held {
        let patch = codec::syncd_patch_decode(bytes).map_err(|e| anyhow!("a held patch: {e}"))?;
        if patch.external_mutations.is_set() {
            return Err(anyhow!("a patch with external mutations"));
        }
        for m in &patch.mutations {
            let (record, index, removes) = indexed(m)?;
            if removes {
                records.remove(&index);
            } else {
                if !records.contains_key(&index) {
                    order.push(index.clone());
                }
                records.insert(index, record.clone());
            }
        }
        last = Some(patch);
    }
    let last = last.context("no patch")?;
    Ok(wa::SyncdSnapshot {
        version: MessageField::some(wa::SyncdVersion {
            version: Some(held.len() as u64),
        }),
        records: order.iter().filter_map(|i| records.remove(i)).collect(),
        mac: last.snapshot_mac.clone(),
        key_id: last.key_id.clone(),
    })
}

/// How often, and how far apart, the server repeats its announcement of a
/// collection's new version to a companion that has not fetched it.
const ANNOUNCEMENTS: u32 = 3;
const ANNOUNCED_AGAIN_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// Tells the companions of `phone` that have not fetched version `version`
/// of collection `name` again, a second apart, until each has or
/// [`ANNOUNCEMENTS`] were made. whatsapp-rust drops a `server_sync` that
/// comes while it still applies an earlier sync of the same collection
/// ("an equivalent sync holds it", `client/app_state.rs`), though that sync
/// was answered before the new version existed; the change would wait for
/// the next announcement. Repeating it is our choice (docs/test-network.md).
pub async fn announce_until_fetched(inner: std::sync::Arc<Inner>, phone: String, name: String) {
    let version = inner
        .registry()
        .collections
        .get(&(phone.clone(), name.clone()))
        .map_or(0, Vec::len);
    for _ in 1..ANNOUNCEMENTS {
        tokio::time::sleep(ANNOUNCED_AGAIN_AFTER).await;
        let mut reg = inner.registry();
        let lagging: Vec<u16> = companions(&reg, &phone)
            .into_iter()
            .filter(|d| {
                let key = (phone.clone(), *d, name.clone());
                reg.live.contains_key(&(phone.clone(), *d))
                    && reg.fetched.get(&key).is_some_and(|v| *v < version)
            })
            .collect();
        if lagging.is_empty() {
            return;
        }
        let notification = server_sync(&name, version);
        for device in lagging {
            reg.deliver(&phone, device, notification.clone());
        }
    }
}

/// The companions (devices other than the phone) of `phone`'s account.
fn companions(reg: &Registry, phone: &str) -> Vec<u16> {
    reg.accounts
        .get(phone)
        .map(|a| a.devices.keys().copied().filter(|d| *d != 0).collect())
        .unwrap_or_default()
}

/// The account's companions other than `except` hear that collection
/// `name` changed (`<notification type="server_sync">`), and sync it. The
/// test phone is not told: it holds the app-state key outside its client.
pub fn tell_companions(reg: &mut Registry, phone: &str, except: Option<u16>, name: &str) {
    let version = reg
        .collections
        .get(&(phone.to_string(), name.to_string()))
        .map_or(0, Vec::len);
    let notification = server_sync(name, version);
    for device in companions(reg, phone) {
        if Some(device) != except {
            reg.deliver(phone, device, notification.clone());
        }
    }
}

/// `<notification type="server_sync">` of collection `name` at `version`.
fn server_sync(name: &str, version: usize) -> Node {
    element(
        "notification",
        &[
            ("type", "server_sync".into()),
            ("from", SERVER.into()),
            (
                "id",
                format!("sync-{}", hex::encode(rand10::random::<[u8; 6]>())),
            ),
            ("t", now().to_string()),
        ],
        vec![element(
            "collection",
            &[("name", name.to_string()), ("version", version.to_string())],
            vec![],
        )],
    )
}

/// `patch` (a `SyncdPatch`) as the server serves it: with its version.
fn versioned(patch: &[u8], version: u64) -> Vec<u8> {
    match codec::syncd_patch_decode(patch) {
        Ok(mut p) => {
            p.version = MessageField::some(wa::SyncdVersion {
                version: Some(version),
            });
            codec::syncd_patch_to_vec(&p)
        }
        // Kept as sent: a client that syncs it refuses it, as it would the real one.
        Err(_) => patch.to_vec(),
    }
}

/// The first patch of a collection as the server serves it (version 1).
pub fn served_first(patch: &[u8]) -> Vec<u8> {
    versioned(patch, 1)
}

/// The first patch of a collection, made by the phone that holds the
/// account's app-state key (`key_id`, `key`): `changes` (an index and its
/// value each) set on an empty collection, MACs and all, as
/// `AppStateProcessor::build_patch` makes one (wacore `appstate_sync.rs`).
pub fn genesis_patch(
    collection: &str,
    changes: &[(Vec<String>, wa::SyncActionValue)],
    key_id: &[u8],
    key: &[u8],
) -> Vec<u8> {
    next_patch(&[], collection, changes, key_id, key)
        .expect("an empty collection has no earlier values")
}

/// The patch the phone adds to a collection that holds `existing` (the
/// patches as the server serves them, oldest first): `changes` set, the
/// collection's LTHash carried on from what every earlier patch set and
/// removed (the previous value of an index it sets again is subtracted),
/// its snapshot and patch MACs made for the next version, as a device's
/// `build_patch` does. From the phone (device 0), as `deviceIndex` says.
pub fn next_patch(
    existing: &[Vec<u8>],
    collection: &str,
    changes: &[(Vec<String>, wa::SyncActionValue)],
    key_id: &[u8],
    key: &[u8],
) -> anyhow::Result<Vec<u8>> {
    let keys = expand_app_state_keys(key);
    let mut state = HashState::default();
    let mut values = std::collections::HashMap::new();
    for bytes in existing {
        let patch = codec::syncd_patch_decode(bytes).map_err(|e| anyhow!("a held patch: {e}"))?;
        carry(&mut state, &mut values, &patch.mutations)?;
    }
    let mutations: Vec<wa::SyncdMutation> = changes
        .iter()
        .map(|(index, value)| {
            let index = serde_json::to_vec(index).expect("strings serialise");
            let iv: [u8; 16] = rand10::random();
            encode_record(
                wa::syncd_mutation::SyncdOperation::SET,
                &index,
                value,
                &keys,
                key_id,
                &iv,
                1,
            )
            .0
        })
        .collect();
    carry(&mut state, &mut values, &mutations)?;
    state.version = existing.len() as u64 + 1;
    let mut patch = wa::SyncdPatch {
        version: MessageField::some(wa::SyncdVersion {
            version: Some(state.version),
        }),
        snapshot_mac: Some(state.generate_snapshot_mac(collection, &keys.snapshot_mac)),
        key_id: MessageField::some(wa::KeyId {
            id: Some(key_id.to_vec()),
        }),
        device_index: Some(0),
        mutations,
        ..Default::default()
    };
    patch.patch_mac = Some(generate_patch_mac(
        &patch,
        collection,
        &keys.patch_mac,
        state.version,
    ));
    Ok(codec::syncd_patch_to_vec(&patch))
}

/// `mutations` applied to the collection's LTHash `state`, `values` holding
/// each index's value MAC (by index MAC) as a client keeps them.
/// A mutation's record, its index (MAC) and whether it removes the index
/// (an operation other than REMOVE, or none, sets it).
fn indexed(m: &wa::SyncdMutation) -> anyhow::Result<(&wa::SyncdRecord, Vec<u8>, bool)> {
    let record = m
        .record
        .as_option()
        .context("a mutation without a record")?;
    let index = record
        .index
        .as_option()
        .and_then(|i| i.blob.clone())
        .context("a record without an index")?;
    let removes =
        m.operation.and_then(|o| o.as_known()) == Some(wa::syncd_mutation::SyncdOperation::REMOVE);
    Ok((record, index, removes))
}

fn carry(
    state: &mut HashState,
    values: &mut std::collections::HashMap<Vec<u8>, Vec<u8>>,
    mutations: &[wa::SyncdMutation],
) -> anyhow::Result<()> {
    let (_, hashed) =
        state.update_hash(mutations, |index_mac, _| Ok(values.get(index_mac).cloned()));
    hashed?;
    for m in mutations {
        let (record, index_mac, removes) = indexed(m)?;
        match record.value.blob.as_deref() {
            Some(blob) if !removes && blob.len() >= 32 => {
                values.insert(index_mac, blob[blob.len() - 32..].to_vec());
            }
            _ => {
                values.remove(&index_mac);
            }
        }
    }
    Ok(())
}

/// Whether `patch` (as held) was made by the account's phone, not one of its
/// companions.
pub fn from_phone(patch: &Patch) -> bool {
    codec::syncd_patch_decode(&patch.bytes).is_ok_and(|p| p.device_index == Some(0))
}

/// Whether a sync IQ sends a patch (rather than asking for collections).
pub fn carries_patch(iq: &Node) -> bool {
    child(iq, "sync")
        .map(children)
        .unwrap_or_default()
        .iter()
        .any(|c| c.tag == "collection" && child(c, "patch").is_some())
}

/// The changes in `patch`, decrypted with the app-state key `key` (its id and data).
pub fn decrypt(patch: &Patch, key_id: &[u8], key: &[u8]) -> anyhow::Result<Vec<Change>> {
    let patch = whatsapp_rust::waproto::codec::syncd_patch_decode(&patch.bytes)
        .map_err(|e| anyhow!("not a patch: {e}"))?;
    let keys = expand_app_state_keys(key);
    let mut changes = Vec::new();
    for m in &patch.mutations {
        let operation = m
            .operation
            .and_then(|o| o.as_known())
            .unwrap_or(wa::syncd_mutation::SyncdOperation::SET);
        let used = m
            .record
            .key_id
            .id
            .as_deref()
            .context("a record without a key id")?;
        if used != key_id {
            anyhow::bail!("a record under another key ({used:?})");
        }
        let (mutation, _) = decode_record(operation, &m.record, &keys, key_id, true)
            .map_err(|e| anyhow!("the record does not open: {e:?}"))?;
        changes.push(Change {
            index: mutation.index,
            value: mutation.action_value,
        });
    }
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mutation(operation: wa::syncd_mutation::SyncdOperation, index: u8) -> wa::SyncdMutation {
        wa::SyncdMutation {
            operation: Some(operation.into()),
            record: MessageField::some(wa::SyncdRecord {
                index: MessageField::some(wa::SyncdIndex {
                    blob: Some(vec![index; 32]),
                }),
                value: MessageField::some(wa::SyncdValue {
                    blob: Some(vec![index, 1, 2]),
                }),
                ..Default::default()
            }),
        }
    }

    fn patch(mutations: Vec<wa::SyncdMutation>, mac: u8) -> Vec<u8> {
        codec::syncd_patch_to_vec(&wa::SyncdPatch {
            mutations,
            snapshot_mac: Some(vec![mac; 32]),
            key_id: MessageField::some(wa::KeyId {
                id: Some(vec![0, 0, 0, 1]),
            }),
            ..Default::default()
        })
    }

    #[test]
    fn a_snapshot_holds_each_index_latest_record_and_the_last_patch_mac() {
        use wa::syncd_mutation::SyncdOperation::{REMOVE, SET};
        let held = vec![
            patch(vec![mutation(SET, 1), mutation(SET, 2)], 7),
            patch(vec![mutation(REMOVE, 1), mutation(SET, 3)], 8),
        ];
        let snapshot = snapshot_of(&held).unwrap();
        assert_eq!(
            snapshot.version.as_option().and_then(|v| v.version),
            Some(2)
        );
        let indexes: Vec<u8> = snapshot
            .records
            .iter()
            .filter_map(|r| r.index.as_option().and_then(|i| i.blob.as_ref()))
            .map(|b| b[0])
            .collect();
        assert_eq!(indexes, [2, 3]);
        assert_eq!(snapshot.mac, Some(vec![8; 32]));
        assert!(snapshot_of(&[]).is_err());
    }
}
