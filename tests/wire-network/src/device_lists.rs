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
use std::collections::BTreeSet;

use crate::registry::Registry;

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

impl crate::WireNetwork {
    /// The direct messages' copies sealed for a device that was gone: the
    /// message id and the device.
    pub fn sealed_for_gone(&self) -> Vec<(String, (String, u16))> {
        self.inner.registry().sealed_for_gone.clone()
    }
}
