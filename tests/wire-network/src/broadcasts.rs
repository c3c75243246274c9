//! What reaches a phone outside its chats and groups: statuses
//! (`status@broadcast`), messages to a broadcast list (`<id>@broadcast`)
//! and channel posts (`<id>@newsletter`). None of them is a conversation the
//! gateway delivers, which is why the test network carries them: a gateway
//! must recognise and drop each as it comes from the real network.
//!
//! - A status is sent like a group message (a sender-key `skmsg`, the key
//!   itself in a `pkmsg` to each device that lacks it); the server delivers
//!   it from `status@broadcast`, `participant` the author, to the devices the
//!   author ever gave the key (its audience).
//! - A message to a broadcast list leaves the sender as a message to each
//!   recipient, and each recipient gets it from the list, `participant` the
//!   sender: the world marks the message's id (`WireNetwork::to_list`)
//!   before its contact sends it.
//! - A channel post is not end-to-end encrypted: the server hands the
//!   followers' devices the message in `<plaintext>`.
use whatsapp_rust::wacore_binary::node::Node;
use whatsapp_rust::waproto::codec::message_to_vec;
use whatsapp_rust::waproto::whatsapp as wa;

use crate::nodes::{element, leaf_bytes, now};
use crate::registry::Registry;
use crate::relay::{self, Sender};
use crate::{WireNetwork, groups};

/// A status: the author's audience grows by the devices it gives its
/// sender key; every device of the audience but the sending one gets the
/// shared ciphertext (and its own key copy when it is new to it).
pub fn status(
    reg: &mut Registry,
    from: &Sender<'_>,
    stanza: &Node,
    to: &str,
    common: Vec<(&'static str, String)>,
) {
    let own = relay::own_copies(reg, stanza);
    let audience = reg
        .status_audience
        .entry(from.phone.to_string())
        .or_default();
    audience.extend(own.keys().cloned());
    let audience: Vec<(String, u16)> = audience
        .iter()
        .filter(|(p, d)| !(p == from.phone && *d == from.device))
        .cloned()
        .collect();
    let mut common = common;
    common.extend(groups::participant(reg, from.phone, from.device));
    common.push(("addressing_mode", "lid".into()));
    relay::sender_key_fan_out(reg, from, stanza, to, audience, own, common);
}

impl WireNetwork {
    /// The message `id`, about to be sent, is one to the broadcast list
    /// `list` (`<id>@broadcast`): its recipients get it from the list.
    pub fn to_list(&self, id: &str, list: &str) {
        self.inner
            .registry()
            .lists
            .insert(id.to_string(), list.to_string());
    }

    /// Channel `channel` (`<id>@newsletter`) posts `message`, under `id`,
    /// to every device of `phone`, one of its followers.
    pub fn post_to_channel(&self, phone: &str, channel: &str, id: &str, message: &wa::Message) {
        let mut reg = self.inner.registry();
        let devices: Vec<u16> = reg
            .accounts
            .get(phone)
            .map(|a| a.devices.keys().copied().collect())
            .unwrap_or_default();
        reg.next_post += 1;
        let server_id = reg.next_post;
        let post = element(
            "message",
            &[
                ("from", channel.to_string()),
                ("id", id.to_string()),
                ("server_id", server_id.to_string()),
                ("type", "text".into()),
                ("t", now().to_string()),
            ],
            vec![leaf_bytes("plaintext", message_to_vec(message))],
        );
        for device in devices {
            reg.deliver(phone, device, post.clone());
        }
    }

    /// The members of group `gid` (its id, without `@g.us`) and whether
    /// each is an admin; `None` when there is no such group.
    pub fn group_members(&self, gid: &str) -> Option<Vec<(String, bool)>> {
        let reg = self.inner.registry();
        let group = reg.groups.get(gid)?;
        Some(
            group
                .members
                .iter()
                .map(|m| (m.phone.clone(), m.role.is_some()))
                .collect(),
        )
    }

    /// Group `gid` (the user part of its JID), founded by `creator` with
    /// `members` in it unless it exists: a message into a group presumes one.
    pub fn found_group_once(&self, gid: &str, creator: &str, members: &[String]) {
        let mut reg = self.inner.registry();
        if !reg.groups.contains_key(gid) {
            groups::found(&mut reg, gid, creator, members, "Group");
        }
        drop(reg);
        self.inner.changed.notify_waiters();
    }
}
