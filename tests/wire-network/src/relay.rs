//! Routing between clients. The server never decrypts: a `<message>`'s
//! per-device `<enc>` go each to its device (now, or at its next login), the
//! sender gets the server's ack; receipts and typing go to the devices they
//! name. Group messages go to every member device (see `group_message`),
//! statuses to their audience and broadcast lists' messages to each
//! recipient (see `broadcasts`).
use whatsapp_rust::wacore_binary::node::Node;

use std::collections::HashMap;

use crate::faults::Fault;
use crate::nodes::{attr, child, children, element, now};
use crate::registry::{Registry, Relayed, device_jid, split_jid};
use crate::{Inner, broadcasts, device_lists, groups, tokens};

/// The sender of a stanza.
pub struct Sender<'a> {
    pub phone: &'a str,
    pub device: u16,
    pub push_name: &'a str,
}

/// Copies the attributes a receiver reads from an outgoing stanza.
fn copied(node: &Node, keys: &[&'static str]) -> Vec<(&'static str, String)> {
    keys.iter()
        .filter_map(|k| attr(node, k).map(|v| (*k, v)))
        .collect()
}

/// Fans a `<message>` out to the devices of its `<participants>` (or the one
/// device it names) and returns the server's ack for the sender.
pub fn message(inner: &Inner, from: &Sender<'_>, stanza: &Node) -> Option<Node> {
    let id = attr(stanza, "id")?;
    let to = attr(stanza, "to")?;
    let (to_user, to_device, to_server) = split_jid(&to);
    let from_jid = device_jid(from.phone, from.device, "s.whatsapp.net");
    let mut reg = inner.registry();
    let chat_phone = reg.phone_of(&to_user, &to_server);
    let identity = child(stanza, "device-identity").cloned();
    let (from_lid, name) = reg
        .accounts
        .get(from.phone)
        .map(|a| (a.lid.clone(), a.push_name.clone()))
        .unwrap_or_default();
    let mut common = copied(stanza, &["id", "type", "edit", "category", "mediatype"]);
    common.push(("t", now().to_string()));
    let name = if name.is_empty() {
        from.push_name.to_string()
    } else {
        name
    };
    if !name.is_empty() {
        common.push(("notify", name));
    }
    if to_server == "g.us" {
        if let Err(code) = groups::may_send(&reg, &to_user, from.phone) {
            return refused(stanza, code);
        }
        let stale = stale_participants(&mut reg, stanza, &to_user);
        group_message(&mut reg, from, stanza, &to, &to_user, common);
        let mut answer = ack(id, to);
        if let Some(ours) = stale {
            answer.attrs.insert("phash", ours);
        }
        return Some(answer);
    }
    if to_server == "broadcast" {
        broadcasts::status(&mut reg, from, stanza, &to, common);
        return Some(ack(id, to));
    }
    // A 1:1 message to another account passes the privacy-token gate.
    if let Some(to_phone) = chat_phone.as_ref().filter(|p| *p != from.phone)
        && !reg.lists.contains_key(&id)
    {
        if inner.faults.take(from.phone, from.device, Fault::Token) {
            return refused(stanza, tokens::NO_TOKEN);
        }
        if let Err(code) = tokens::check(&mut reg, from.phone, to_phone, stanza) {
            return refused(stanza, code);
        }
    }
    // A message to a broadcast list reaches each recipient from the list.
    let list = reg.lists.remove(&id);
    let mut targets: Vec<(String, u16, Vec<Node>)> = Vec::new();
    if let Some(participants) = child(stanza, "participants") {
        for to_node in children(participants).iter().filter(|n| n.tag == "to") {
            let Some(jid) = attr(to_node, "jid") else {
                continue;
            };
            let (user, device, server) = split_jid(&jid);
            if let Some(phone) = reg.phone_of(&user, &server) {
                targets.push((phone, device, children(to_node).to_vec()));
            }
        }
    } else if let Some(phone) = &chat_phone {
        let encs: Vec<Node> = children(stanza)
            .iter()
            .filter(|n| n.tag == "enc")
            .cloned()
            .collect();
        targets.push((phone.clone(), to_device, encs));
    }
    // A direct message sealed for a stale device list (`device_lists`).
    let stale = match (&chat_phone, child(stanza, "participants")) {
        (Some(to_phone), Some(_)) if *to_phone != from.phone && list.is_none() => {
            let addressed = targets.iter().map(|(p, d, _)| (p.clone(), *d)).collect();
            device_lists::stale(&reg, (from.phone, from.device), to_phone, &addressed)
        }
        _ => None,
    };
    for (phone, device, mut kids) in targets {
        if device_lists::is_gone(&reg, &phone, device) {
            reg.sealed_for_gone.push((id.clone(), (phone, device)));
            continue;
        }
        // What reached other people, and a companion's copy to its phone
        // (the outbox reads the phone's copies, so it waits for them too).
        if phone != from.phone || (device == 0 && from.device != 0) {
            reg.relayed.push(Relayed {
                from: (from.phone.to_string(), from.device),
                to: (phone.clone(), device),
                kind: "message".into(),
                id: id.clone(),
            });
        }
        let mut attrs = common.clone();
        if phone == from.phone {
            // One of the sender's own devices: it learns which chat this was.
            attrs.push(("from", from_jid.clone()));
            attrs.push(("recipient", to.clone()));
        } else if let Some(list) = &list {
            attrs.push(("from", list.clone()));
            attrs.extend(groups::participant(&reg, from.phone, from.device));
            attrs.push(("addressing_mode", "lid".into()));
        } else {
            // Others know the sender by its hidden LID, its phone number beside it.
            attrs.push(("from", device_jid(&from_lid, from.device, "lid")));
            attrs.push(("sender_pn", format!("{}@s.whatsapp.net", from.phone)));
            attrs.push(("addressing_mode", "lid".into()));
        }
        if let Some(identity) = &identity {
            kids.push(identity.clone());
        }
        if phone != from.phone && list.is_none() && inner.faults.take(&phone, device, Fault::Garble)
        {
            garble(&mut kids);
        }
        reg.deliver(&phone, device, element("message", &attrs, kids));
    }
    let mut answer = ack(id, to);
    if let Some(ours) = stale {
        answer.attrs.insert("phash", ours);
    }
    Some(answer)
}

/// Flips the last byte of each ciphertext (`<enc>`) in `kids`: the part of
/// a Signal message its MAC covers, so the receiver cannot open it.
fn garble(kids: &mut [Node]) {
    use whatsapp_rust::wacore_binary::node::NodeContent;
    for enc in kids.iter_mut().filter(|n| n.tag == "enc") {
        if let Some(NodeContent::Bytes(bytes)) = &mut enc.content
            && let Some(last) = bytes.last_mut()
        {
            *last ^= 0xFF;
        }
    }
}

/// The server's participant hash of group `gid` when the sender's (the
/// stanza's `phash`) differs: the sender encrypted for a stale list of
/// devices, and the ack tells it so (the server relays the message all the
/// same; the sender refreshes its lists for the next one). `None` when they
/// agree or the sender gave none; a normal ack does not echo it.
fn stale_participants(reg: &mut Registry, stanza: &Node, gid: &str) -> Option<String> {
    let theirs = attr(stanza, "phash")?;
    let ours = groups::participant_hash(reg, gid);
    if theirs == ours {
        return None;
    }
    reg.stale_phashes += 1;
    Some(ours)
}

/// The server's refusal of a message stanza: an ack with an error code;
/// the message goes to no one.
pub fn refused(stanza: &Node, code: &str) -> Option<Node> {
    let id = attr(stanza, "id")?;
    let to = attr(stanza, "to")?;
    let mut attrs = ack_attrs(id, to);
    attrs.push(("error", code.to_string()));
    Some(element("ack", &attrs, vec![]))
}

/// The server's ack of a message stanza.
fn ack(id: String, to: String) -> Node {
    element("ack", &ack_attrs(id, to), vec![])
}

fn ack_attrs(id: String, to: String) -> Vec<(&'static str, String)> {
    vec![
        ("class", "message".into()),
        ("id", id),
        ("from", to),
        ("t", now().to_string()),
    ]
}

/// A group message: every member device but the sending one gets it
/// (`sender_key_fan_out`).
fn group_message(
    reg: &mut Registry,
    from: &Sender<'_>,
    stanza: &Node,
    group: &str,
    gid: &str,
    common: Vec<(&'static str, String)>,
) {
    let own = own_copies(reg, stanza);
    let audience = groups::member_devices(reg, gid, (from.phone, from.device));
    let mut common = common;
    common.extend(groups::sender(reg, gid, from.phone, from.device));
    common.push((
        "addressing_mode",
        groups::addressing(reg, gid).mode().into(),
    ));
    sender_key_fan_out(reg, from, stanza, group, audience, own, common);
}

/// Each device's own part of a sender-key message (its copy of the sender
/// key distribution), from the stanza's `<participants>`.
pub fn own_copies(reg: &Registry, stanza: &Node) -> HashMap<(String, u16), Vec<Node>> {
    let mut own = HashMap::new();
    if let Some(participants) = child(stanza, "participants") {
        for to_node in children(participants).iter().filter(|n| n.tag == "to") {
            let Some(jid) = attr(to_node, "jid") else {
                continue;
            };
            let (user, device, server) = split_jid(&jid);
            if let Some(phone) = reg.phone_of(&user, &server) {
                own.insert((phone, device), children(to_node).to_vec());
            }
        }
    }
    own
}

/// Delivers a sender-key message from `chat` to each device of `audience`:
/// the shared ciphertext (`skmsg`), preceded by the device's own copy of
/// the sender key distribution when the sender included one for it.
/// `common` names the sender (`participant`) as the chat does.
pub fn sender_key_fan_out(
    reg: &mut Registry,
    from: &Sender<'_>,
    stanza: &Node,
    chat: &str,
    audience: Vec<(String, u16)>,
    mut own: HashMap<(String, u16), Vec<Node>>,
    common: Vec<(&'static str, String)>,
) {
    let shared: Vec<Node> = children(stanza)
        .iter()
        .filter(|n| n.tag == "enc")
        .cloned()
        .collect();
    let identity = child(stanza, "device-identity");
    for (phone, device) in audience {
        let mut kids = own.remove(&(phone.clone(), device)).unwrap_or_default();
        let prekey = kids
            .iter()
            .any(|k| attr(k, "type").as_deref() == Some("pkmsg"));
        kids.extend(shared.iter().cloned());
        if prekey && let Some(identity) = identity {
            kids.push(identity.clone());
        }
        if kids.is_empty() {
            continue;
        }
        if phone != from.phone {
            reg.relayed.push(Relayed {
                from: (from.phone.to_string(), from.device),
                to: (phone.clone(), device),
                kind: "message".into(),
                id: attr(stanza, "id").unwrap_or_default(),
            });
        }
        let mut attrs = common.clone();
        attrs.push(("from", chat.to_string()));
        reg.deliver(&phone, device, element("message", &attrs, kids));
    }
}

/// Relays a `<receipt>` to the device (or every device of the user) it names.
pub fn receipt(inner: &Inner, from: &Sender<'_>, stanza: &Node) -> Option<Node> {
    let id = attr(stanza, "id")?;
    let to = attr(stanza, "to")?;
    let (user, device, server) = split_jid(&to);
    if server == "g.us" {
        group_receipt(inner, from, stanza, &to, &user);
        return Some(receipt_ack(stanza, id, to));
    }
    let mut attrs = copied(
        stanza,
        &["id", "type", "participant", "recipient", "category"],
    );
    attrs.push((
        "from",
        device_jid(from.phone, from.device, "s.whatsapp.net"),
    ));
    attrs.push(("t", now().to_string()));
    let relayed = element("receipt", &attrs, children(stanza).to_vec());
    let mut reg = inner.registry();
    if let Some(phone) = reg.phone_of(&user, &server) {
        let devices: Vec<u16> = if to.contains(':') {
            vec![device]
        } else {
            reg.accounts
                .get(&phone)
                .map(|a| a.devices.keys().copied().collect())
                .unwrap_or_default()
        };
        for device in devices {
            if phone != from.phone {
                reg.relayed.push(Relayed {
                    from: (from.phone.to_string(), from.device),
                    to: (phone.clone(), device),
                    kind: format!("receipt:{}", attr(stanza, "type").unwrap_or_default()),
                    id: attr(stanza, "id").unwrap_or_default(),
                });
            }
            reg.deliver(&phone, device, relayed.clone());
        }
    }
    Some(receipt_ack(stanza, id, to))
}

/// The server's ack of a receipt.
fn receipt_ack(stanza: &Node, id: String, to: String) -> Node {
    let mut ack = vec![("class", "receipt".into()), ("id", id), ("from", to)];
    if let Some(kind) = attr(stanza, "type") {
        ack.push(("type", kind));
    }
    element("ack", &ack, vec![])
}

/// A member's receipt of messages in group `gid` (`to`): relayed to the
/// devices of the account whose messages they are (its `participant`),
/// from the group and naming the reader as `participant`, as group
/// messages name their sender. A receipt from someone who is not a member,
/// or about someone who is not, goes to no one.
fn group_receipt(inner: &Inner, from: &Sender<'_>, stanza: &Node, to: &str, gid: &str) {
    let mut reg = inner.registry();
    let Some(author) = attr(stanza, "participant").and_then(|p| {
        let (user, _, server) = split_jid(&p);
        reg.phone_of(&user, &server)
    }) else {
        return;
    };
    let members = reg.groups.get(gid);
    if !members.is_some_and(|g| g.has(from.phone) && g.has(&author)) || author == from.phone {
        return;
    }
    let mut attrs = copied(stanza, &["id", "type"]);
    attrs.push(("from", to.to_string()));
    attrs.extend(groups::sender(&reg, gid, from.phone, from.device));
    attrs.push(("t", now().to_string()));
    let relayed = element("receipt", &attrs, children(stanza).to_vec());
    let devices: Vec<u16> = reg
        .accounts
        .get(&author)
        .map(|a| a.devices.keys().copied().collect())
        .unwrap_or_default();
    for device in devices {
        reg.relayed.push(Relayed {
            from: (from.phone.to_string(), from.device),
            to: (author.clone(), device),
            kind: format!("receipt:{}", attr(stanza, "type").unwrap_or_default()),
            id: attr(stanza, "id").unwrap_or_default(),
        });
        reg.deliver(&author, device, relayed.clone());
    }
}

/// Relays typing (`<chatstate to>`) to the other user's live devices.
pub fn chatstate(inner: &Inner, from: &Sender<'_>, stanza: &Node) {
    let Some(to) = attr(stanza, "to") else { return };
    let (user, _, server) = split_jid(&to);
    if server == "g.us" {
        group_chatstate(inner, from, stanza, &to, &user);
        return;
    }
    let node = element(
        "chatstate",
        &[("from", format!("{}@s.whatsapp.net", from.phone))],
        children(stanza).to_vec(),
    );
    let mut reg = inner.registry();
    let Some(phone) = reg.phone_of(&user, &server) else {
        return;
    };
    let mut reached = Vec::new();
    for ((p, d), live) in reg.live.iter() {
        if *p == phone
            && live
                .tx
                .send(crate::registry::Control::Send(node.clone()))
                .is_ok()
        {
            reached.push(*d);
        }
    }
    for device in reached {
        reg.relayed.push(Relayed {
            from: (from.phone.to_string(), from.device),
            to: (phone.clone(), device),
            kind: "chatstate".into(),
            id: String::new(),
        });
    }
}

/// A member's chat state in a group: to the other members' connected
/// devices, from the group with the member as `participant` (a
/// non-member's is dropped, as the server drops what it does not relay).
fn group_chatstate(inner: &Inner, from: &Sender<'_>, stanza: &Node, to: &str, gid: &str) {
    let mut reg = inner.registry();
    if groups::may_send(&reg, gid, from.phone).is_err() {
        return;
    }
    let mut attrs = vec![("from", to.to_string())];
    attrs.extend(groups::sender(&reg, gid, from.phone, from.device));
    let node = element("chatstate", &attrs, children(stanza).to_vec());
    let audience = groups::member_devices(&reg, gid, (from.phone, from.device));
    let mut reached = Vec::new();
    for (phone, device) in audience {
        let live = reg.live.get(&(phone.clone(), device));
        if live.is_some_and(|l| {
            l.tx.send(crate::registry::Control::Send(node.clone()))
                .is_ok()
        }) {
            reached.push((phone, device));
        }
    }
    for to in reached {
        reg.relayed.push(Relayed {
            from: (from.phone.to_string(), from.device),
            to,
            kind: "chatstate".into(),
            id: String::new(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stale_participant_hash_is_answered_with_the_servers() {
        let mut reg = Registry::default();
        reg.account("4915100000711")
            .devices
            .insert(0, crate::registry::Device::default());
        groups::found(&mut reg, "120363000000000011", "4915100000711", &[], "G");
        let ours = groups::participant_hash(&reg, "120363000000000011");
        let stanza = |phash: Option<&str>| {
            let mut attrs = vec![("id", "m1".to_string())];
            attrs.extend(phash.map(|p| ("phash", p.to_string())));
            element("message", &attrs, vec![])
        };
        let gid = "120363000000000011";
        assert_eq!(stale_participants(&mut reg, &stanza(None), gid), None);
        assert_eq!(
            stale_participants(&mut reg, &stanza(Some(&ours)), gid),
            None
        );
        assert_eq!(
            stale_participants(&mut reg, &stanza(Some("2:stale")), gid),
            Some(ours)
        );
        assert_eq!(reg.stale_phashes, 1);
    }
}
