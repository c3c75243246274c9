//! App-state sync (`w:sync:app:state`): what a device asks after login gets
//! every asked collection, empty at version 0; a patch a device sends (a
//! chat marked unread, say) is kept per account, as the client encrypted it
//! with the account's app-state key, and acknowledged at the next version.
//! The test phone, which holds that key, decrypts what was kept.
use anyhow::{Context, anyhow};
use whatsapp_rust::wacore::appstate::{decode_record, expand_app_state_keys};
use whatsapp_rust::wacore_binary::node::Node;
use whatsapp_rust::waproto::whatsapp as wa;

use crate::Inner;
use crate::iq::Asker;
use crate::nodes::{attr, bytes, child, children, element, iq_result};

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
    let kept = reg.app_state.entry(who.phone.to_string()).or_default();
    let mut collections = Vec::new();
    for c in child(iq, "sync").map(children).unwrap_or_default() {
        if c.tag != "collection" {
            continue;
        }
        let Some(name) = attr(c, "name") else {
            continue;
        };
        let base: u64 = attr(c, "version").and_then(|v| v.parse().ok()).unwrap_or(0);
        let sent: Vec<Vec<u8>> = child(c, "patch")
            .and_then(bytes)
            .map(|b| vec![b.to_vec()])
            .unwrap_or_default();
        let version = if sent.is_empty() {
            0
        } else {
            kept.extend(sent.into_iter().map(|bytes| Patch {
                collection: name.clone(),
                bytes,
            }));
            base + 1
        };
        collections.push(element(
            "collection",
            &[("name", name), ("version", version.to_string())],
            vec![],
        ));
    }
    drop(reg);
    inner.changed.notify_waiters();
    iq_result(id, vec![element("sync", &[], collections)])
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
