//! Device lists on direct messages. A client seals a direct message for the
//! devices it believes the recipient's account and its own have (the
//! `<to jid>` of its `<participants>`), and keeps a hash of that set; the
//! server compares the set with the devices it knows and, when they differ,
//! answers with its own hash in the ack's `phash`. whatsapp-rust then drops
//! its cached device lists of both accounts (`client/node_io.rs`,
//! `check_phash_against_ack`; `send/mod.rs`, `handle_phash_mismatch`), so
//! its next message reaches a device it missed and leaves out one that is
//! gone. A copy sealed for a device that is gone is dropped, and noted.
//!
//! Our choices: the server's set is the devices that uploaded keys (a
//! device without them cannot be written to yet), and it sends its hash
//! only on a difference (a client compares strings, and the sources do not
//! say whether the real server's ack always carries it).
//!
//! An account's device list, as a usync query gets it (`<devices>`): each
//! device with its key index, the list's hash (`<device-list hash>`, made
//! as the participant hash is, over the devices' LID addresses) and the
//! key-index list. A client that sends the hash it holds (`<devices
//! device_hash>`, whatsapp-rust `sync_own_device_list` at every login) and
//! is current is left out of the answer, which it reads as "unchanged"
//! (whatsapp-rust `usync.rs`, wacore `iq/usync.rs`). A device linked or
//! removed is news for the account's other devices (by its phone number)
//! and for the accounts that wrote with it (by its LID): `<notification
//! type="devices">` with `<add>` or `<remove>`, the device and the new
//! key-index list (wacore `stanza/devices.rs`; a removal's list must carry
//! its time). The key-index list is not signed: no client checks its
//! signature (wacore `adv.rs`, `decode_key_index_list`: "verification is
//! deferred"), so nothing here could tell a signed list from an unsigned
//! one.
use std::collections::BTreeSet;

use whatsapp_rust::buffa::Message as _;
use whatsapp_rust::wacore_binary::node::Node;
use whatsapp_rust::waproto::whatsapp as wa;

use crate::nodes::{attr, child, element, leaf_bytes, now};
use crate::registry::{Account, Registry, device_jid};

/// The server's hash of a direct message's devices, when the sender's set
/// (`addressed`) is not the server's: every device with keys of the
/// recipient's account and of the sender's, but the sending one.
pub fn stale(
    reg: &Registry,
    from: (&str, u16),
    to: &str,
    addressed: &BTreeSet<(String, u16)>,
) -> Option<String> {
    let ours: BTreeSet<(String, u16)> = [to, from.0]
        .into_iter()
        .filter_map(|phone| reg.accounts.get(phone).map(|a| (phone, a)))
        .flat_map(|(phone, a)| {
            a.devices
                .iter()
                .filter(|(_, d)| d.bundle.is_some())
                .map(move |(d, _)| (phone.to_string(), *d))
        })
        .filter(|(phone, d)| !(phone == from.0 && *d == from.1))
        .collect();
    (ours != *addressed).then(|| hash(reg, &ours))
}

/// Whether `device` of `phone` is gone (never linked, or removed).
pub fn is_gone(reg: &Registry, phone: &str, device: u16) -> bool {
    reg.accounts
        .get(phone)
        .is_none_or(|a| !a.devices.contains_key(&device))
}

/// The devices' hash as the group participant hash is made.
fn hash(reg: &Registry, devices: &BTreeSet<(String, u16)>) -> String {
    crate::groups::devices_hash(
        devices
            .iter()
            .filter_map(|(phone, d)| {
                let lid = &reg.accounts.get(phone)?.lid;
                Some(format!("{lid}.0:{d}@lid"))
            })
            .collect(),
    )
}

/// `<devices>`: the device list, its hash and, with companions, the
/// key-index list.
pub fn devices(account: &Account) -> Node {
    let list = account
        .devices
        .iter()
        .map(|(number, device)| {
            if *number == 0 {
                element("device", &[("id", "0".into())], vec![])
            } else {
                element(
                    "device",
                    &[
                        ("id", number.to_string()),
                        ("key-index", device.key_index.to_string()),
                    ],
                    vec![],
                )
            }
        })
        .collect();
    let mut kids = vec![element(
        "device-list",
        &[("hash", list_hash(account))],
        list,
    )];
    if account.devices.keys().any(|d| *d != 0) {
        kids.push(key_index_list(account));
    }
    element("devices", &[("version", "2".into())], kids)
}

/// Whether a usync `<user>` holds the account's current device list (its
/// `<devices device_hash>` is the list's hash now).
pub fn held(user: &Node, account: &Account) -> bool {
    child(user, "devices")
        .and_then(|d| attr(d, "device_hash"))
        .is_some_and(|hash| hash == list_hash(account))
}

/// The device list's hash: its devices' LID addresses as the participant
/// hash takes them.
fn list_hash(account: &Account) -> String {
    crate::groups::devices_hash(
        account
            .devices
            .keys()
            .map(|d| format!("{}.0:{d}@lid", account.lid))
            .collect(),
    )
}

/// The account's key-index list: its companions' key indexes, now.
fn key_index_list(account: &Account) -> Node {
    let indexes: Vec<u32> = account
        .devices
        .iter()
        .filter(|(number, _)| **number != 0)
        .map(|(_, d)| d.key_index)
        .collect();
    let details = wa::ADVKeyIndexList {
        raw_id: Some(account.raw_id),
        timestamp: Some(now()),
        current_index: indexes.iter().copied().max(),
        valid_indexes: indexes,
        ..Default::default()
    };
    let signed = wa::ADVSignedKeyIndexList {
        details: Some(details.encode_to_vec()),
        ..Default::default()
    };
    let mut node = leaf_bytes("key-index-list", signed.encode_to_vec());
    node.attrs.insert("ts", now().to_string());
    node
}

/// A change to an account's devices (`add` or `remove`).
#[derive(Debug, Clone, Copy)]
pub enum Change {
    Add,
    Remove,
}

/// Tells the account `phone`'s devices but `device` itself, and the
/// accounts that wrote with it, that `device` came or went (`account`'s
/// list as it is now). An offline device hears it at its next login.
pub fn announce(reg: &mut Registry, phone: &str, device: u16, change: Change) {
    let Some(account) = reg.accounts.get(phone) else {
        return;
    };
    let own = notification(
        format!("{phone}@s.whatsapp.net"),
        device_jid(phone, device, "s.whatsapp.net"),
        device,
        change,
        account,
    );
    // The accounts that wrote with this one hold its list by its LID, as
    // chats with it are addressed.
    let told = notification(
        format!("{}@lid", account.lid),
        device_jid(&account.lid, device, "lid"),
        device,
        change,
        account,
    );
    let others: Vec<u16> = account
        .devices
        .keys()
        .copied()
        .filter(|d| *d != device)
        .collect();
    for other in others {
        reg.deliver(phone, other, own.clone());
    }
    for (contact, devices) in reg.contacts_of(phone) {
        for d in devices {
            reg.deliver(&contact, d, told.clone());
        }
    }
}

/// The account `phone` no longer has companion `device`: it is forgotten,
/// and whoever holds the account's list is told.
pub fn remove(reg: &mut Registry, phone: &str, device: u16) {
    let removed = reg
        .accounts
        .get_mut(phone)
        .is_some_and(|a| a.devices.remove(&device).is_some());
    if removed {
        announce(reg, phone, device, Change::Remove);
    }
}

fn notification(from: String, jid: String, device: u16, change: Change, account: &Account) -> Node {
    let (tag, key_index) = match change {
        Change::Add => ("add", account.devices.get(&device).map(|d| d.key_index)),
        Change::Remove => ("remove", None),
    };
    let mut device_attrs = vec![("jid", jid)];
    device_attrs.extend(key_index.map(|k| ("key-index", k.to_string())));
    let op = element(
        tag,
        &[],
        vec![
            element("device", &device_attrs, vec![]),
            key_index_list(account),
        ],
    );
    let user = from.split('@').next().unwrap_or_default().to_string();
    element(
        "notification",
        &[
            ("type", "devices".into()),
            // No `@` in an id: the binary encoding would read it as a JID.
            ("id", format!("{}{}", id_prefix(tag, &user, device), now())),
            ("from", from),
            ("t", now().to_string()),
        ],
        vec![op],
    )
}

/// How many users the device's device-list queries left out so far.
pub fn unchanged(reg: &Registry, phone: &str, device: u16) -> usize {
    reg.device_lists_unchanged
        .get(&(phone.to_string(), device))
        .copied()
        .unwrap_or_default()
}

/// How many times the device got its own account's device list in full.
pub fn own_lists_sent(reg: &Registry, phone: &str, device: u16) -> usize {
    reg.own_device_lists_sent
        .get(&(phone.to_string(), device))
        .copied()
        .unwrap_or_default()
}

fn id_prefix(tag: &str, user: &str, device: u16) -> String {
    format!("devices-{tag}-{user}-{device}-")
}

/// How the ids of the news that `user`'s (a phone number or a LID)
/// `device` was removed begin.
pub fn removal_id_prefix(user: &str, device: u16) -> String {
    id_prefix("remove", user, device)
}

impl crate::WireNetwork {
    /// How many users the device's device-list queries left out so far (its
    /// hash was current).
    pub fn device_lists_unchanged(&self, phone: &str, device: u16) -> usize {
        unchanged(&self.inner.registry(), phone, device)
    }

    /// The direct messages' copies sealed for a device that was gone: the
    /// message id and the device.
    pub fn sealed_for_gone(&self) -> Vec<(String, (String, u16))> {
        self.inner.registry().sealed_for_gone.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nodes::{children, element};
    use crate::registry::Device;

    fn hint(hash: &str) -> Node {
        let devices = element("devices", &[("device_hash", hash.to_string())], vec![]);
        element("user", &[("jid", "x@lid".into())], vec![devices])
    }

    fn listed_hash(account: &Account) -> String {
        let list = devices(account);
        let list = child(&list, "device-list").expect("a device-list");
        attr(list, "hash").expect("a hash")
    }

    #[test]
    fn a_device_list_is_held_only_while_its_hash_is_current() {
        let mut reg = Registry::default();
        let account = reg.account("4915100000711");
        account.devices.insert(0, Device::default());
        let before = listed_hash(account);
        assert!(before.starts_with("2:"), "{before}");
        assert!(held(&hint(&before), account));
        assert!(!held(&hint("2:AAAAAAAA"), account));
        assert!(!held(&element("user", &[], vec![]), account), "no hint");

        account.devices.insert(4, Device::default());
        let after = listed_hash(account);
        assert_ne!(before, after);
        assert!(!held(&hint(&before), account), "a device came");
        account.devices.remove(&4);
        assert_eq!(
            listed_hash(account),
            before,
            "the same devices, the same hash"
        );
    }

    #[test]
    fn a_removal_is_news_for_the_accounts_devices_and_its_contacts() {
        let (phone, contact) = ("4915100000712", "4915100000713");
        let mut reg = Registry::default();
        for d in [0, 2, 3] {
            reg.account(phone).devices.insert(d, Device::default());
        }
        reg.account(contact).devices.insert(0, Device::default());
        reg.relayed.push(crate::registry::Relayed {
            from: (contact.into(), 0),
            to: (phone.into(), 0),
            kind: "message".into(),
            id: "3EB0A".into(),
        });
        remove(&mut reg, phone, 3);
        let lid = reg.accounts[phone].lid.clone();
        let news = |holder: (&str, u16)| -> Vec<Node> {
            reg.offline
                .get(&(holder.0.to_string(), holder.1))
                .cloned()
                .unwrap_or_default()
        };
        for (holder, from, jid) in [
            (
                (phone, 0),
                format!("{phone}@s.whatsapp.net"),
                format!("{phone}:3@s.whatsapp.net"),
            ),
            (
                (phone, 2),
                format!("{phone}@s.whatsapp.net"),
                format!("{phone}:3@s.whatsapp.net"),
            ),
            ((contact, 0), format!("{lid}@lid"), format!("{lid}:3@lid")),
        ] {
            let news = news(holder);
            assert_eq!(news.len(), 1, "{holder:?}");
            let n = &news[0];
            assert_eq!(attr(n, "from"), Some(from), "{holder:?}");
            let remove = child(n, "remove").expect("a remove");
            let kids = children(remove);
            assert_eq!(attr(&kids[0], "jid"), Some(jid), "{holder:?}");
            let list = child(remove, "key-index-list").expect("the key-index list");
            assert!(
                attr(list, "ts").is_some_and(|t| t != "0"),
                "a removal's list has its time"
            );
        }
        assert!(
            news((phone, 3)).is_empty(),
            "the removed device hears nothing"
        );
        assert!(!reg.accounts[phone].devices.contains_key(&3));
        // Removing it again is no news.
        remove(&mut reg, phone, 3);
        let told = reg.offline.get(&(contact.to_string(), 0)).map(Vec::len);
        assert_eq!(told, Some(1));
    }
}
