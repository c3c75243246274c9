//! Groups (`xmlns="w:g2"`): create, the groups one is in, metadata, members
//! added, removed, promoted and demoted, the subject, the settings
//! (`group_settings`), the invite code, and leaving. Groups are addressed
//! by LID (`addressing_mode="lid"`), as the network's groups are now:
//! members by their LIDs, each with its phone number beside it
//! (`phone_number`, `participant_pn`). A group founded while the network
//! is told to ([`Registry::group_addressing`]) is addressed by phone number
//! instead (`addressing_mode="pn"`), as groups made before LIDs are: members
//! by their phone numbers, each with its LID beside it (`lid`,
//! `participant_lid`).
//! Changes reach every device of the members as `w:gp2` notifications (an
//! offline one from its offline queue at its next login); group
//! messages are fanned out by `relay`.
use whatsapp_rust::wacore_binary::node::Node;

use crate::Inner;
use crate::group_settings::{Change, Settings};
use crate::iq::Asker;
use crate::nodes::{attr, child, children, element, iq_error, iq_result, now};
use crate::registry::{Registry, device_jid, split_jid};

/// A group the server keeps.
#[derive(Debug, Clone)]
pub struct Group {
    pub subject: String,
    pub subject_time: u64,
    /// Who set the subject last.
    pub subject_owner: String,
    pub creator: String,
    pub creation: u64,
    pub members: Vec<Member>,
    pub invite: String,
    pub settings: Settings,
    pub addressing: Addressing,
}

/// How a group names its members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Addressing {
    /// By LID, the phone number beside it: the network's groups now.
    #[default]
    Lid,
    /// By phone number, the LID beside it: groups made before LIDs.
    Pn,
}

impl Addressing {
    /// Its `addressing_mode`.
    pub fn mode(self) -> &'static str {
        match self {
            Addressing::Lid => "lid",
            Addressing::Pn => "pn",
        }
    }

    /// `phone` named under `key` as this addressing names it, the other form
    /// beside it (under `pn_key` or `lid_key`).
    fn names(
        self,
        reg: &Registry,
        phone: &str,
        [key, pn_key, lid_key]: [&'static str; 3],
    ) -> [(&'static str, String); 2] {
        match self {
            Addressing::Lid => [(key, lid_jid(reg, phone)), (pn_key, pn(phone))],
            Addressing::Pn => [(key, pn(phone)), (lid_key, lid_jid(reg, phone))],
        }
    }

    /// A member as the `participant` of a change or a setting.
    fn participant(self, reg: &Registry, phone: &str) -> [(&'static str, String); 2] {
        self.names(
            reg,
            phone,
            ["participant", "participant_pn", "participant_lid"],
        )
    }
}

#[derive(Debug, Clone)]
pub struct Member {
    pub phone: String,
    /// `superadmin`, `admin`, or a plain member.
    pub role: Option<&'static str>,
}

impl Group {
    pub fn has(&self, phone: &str) -> bool {
        self.members.iter().any(|m| m.phone == phone)
    }

    pub fn is_admin(&self, phone: &str) -> bool {
        self.members
            .iter()
            .any(|m| m.phone == phone && m.role.is_some())
    }
}

fn pn(phone: &str) -> String {
    format!("{phone}@s.whatsapp.net")
}

/// A member as a LID-addressed group names it (its phone JID when the
/// network has no account for the number).
fn lid_jid(reg: &Registry, phone: &str) -> String {
    reg.accounts
        .get(phone)
        .map_or_else(|| pn(phone), |a| format!("{}@lid", a.lid))
}

/// A `<participant>`: its LID and its phone number (the group's addressing
/// first), and its role when it has one.
fn member_node(reg: &Registry, by: Addressing, phone: &str, role: Option<&str>) -> Node {
    let mut attrs = by
        .names(reg, phone, ["jid", "phone_number", "lid"])
        .to_vec();
    if let Some(role) = role {
        attrs.push(("type", role.to_string()));
    }
    element("participant", &attrs, vec![])
}

/// A new invite code: 22 letters and digits, as the network's.
fn invite_code() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    (0..22)
        .map(|_| char::from(ALPHABET[rand10::random_range(0..ALPHABET.len())]))
        .collect()
}

fn group_jid(id: &str) -> String {
    format!("{id}@g.us")
}

/// The `<group>` node clients parse.
fn group_node(reg: &Registry, id: &str, g: &Group) -> Node {
    let by = g.addressing;
    let mut children: Vec<Node> = g
        .members
        .iter()
        .map(|m| member_node(reg, by, &m.phone, m.role))
        .collect();
    children.extend(g.settings.nodes(|phone| by.participant(reg, phone)));
    let mut attrs = vec![
        ("id", id.to_string()),
        ("subject", g.subject.clone()),
        ("s_t", g.subject_time.to_string()),
        ("creation", g.creation.to_string()),
        ("addressing_mode", by.mode().into()),
    ];
    attrs.extend(by.names(reg, &g.subject_owner, ["s_o", "s_o_pn", "s_o_lid"]));
    attrs.extend(by.names(reg, &g.creator, ["creator", "creator_pn", "creator_lid"]));
    element("group", &attrs, children)
}

/// The phone numbers `<participant jid>` children name (unknown users left out).
fn named(reg: &Registry, node: &Node) -> Vec<(String, Option<String>)> {
    children(node)
        .iter()
        .filter(|n| n.tag == "participant")
        .filter_map(|n| attr(n, "jid"))
        .map(|jid| {
            let (user, _, server) = split_jid(&jid);
            (jid, reg.phone_of(&user, &server))
        })
        .collect()
}

/// Sends `action` as a `w:gp2` notification from group `id`, by `by`, to
/// every live device of its members (and of `also`, who just left).
fn notify(reg: &mut Registry, id: &str, by: &str, action: Node, also: &[String]) {
    let Some(g) = reg.groups.get(id) else { return };
    let mut attrs = vec![
        ("from", group_jid(id)),
        ("type", "w:gp2".into()),
        ("id", format!("gp2-{}", rand10::random::<u32>())),
        ("addressing_mode", g.addressing.mode().into()),
        ("t", now().to_string()),
    ];
    attrs.extend(g.addressing.participant(reg, by));
    let node = element("notification", &attrs, vec![action]);
    // Every device of each member, live or not: an offline device gets it
    // from its offline queue at its next login.
    let targets: Vec<(String, u16)> = g
        .members
        .iter()
        .map(|m| m.phone.clone())
        .chain(also.iter().cloned())
        .flat_map(|phone| {
            let devices: Vec<u16> = reg
                .accounts
                .get(&phone)
                .map(|a| a.devices.keys().copied().collect())
                .unwrap_or_default();
            devices.into_iter().map(move |d| (phone.clone(), d))
        })
        .collect();
    for (phone, device) in targets {
        reg.deliver(&phone, device, node.clone());
    }
}

/// The answer to a `w:g2` IQ from `who`.
pub fn answer(inner: &Inner, who: &Asker<'_>, id: &str, iq: &Node) -> Node {
    let to = attr(iq, "to").unwrap_or_default();
    let mut reg = inner.registry();
    let answer = if to == "g.us" || to == "@g.us" {
        on_server(&mut reg, who, id, iq)
    } else {
        let (group, _, _) = split_jid(&to);
        on_group(&mut reg, who, id, iq, &group)
    };
    drop(reg);
    inner.changed.notify_waiters();
    answer
}

/// Founds group `group_id` (the user part of its JID): `creator` its
/// superadmin, `members` (phone numbers) plain members; every member's live
/// devices are told. Returns the group's `<group>` node.
pub fn found(
    reg: &mut Registry,
    group_id: &str,
    creator: &str,
    members: &[String],
    subject: &str,
) -> Node {
    let mut all = vec![Member {
        phone: creator.to_string(),
        role: Some("superadmin"),
    }];
    for phone in members {
        if !all.iter().any(|m| &m.phone == phone) {
            all.push(Member {
                phone: phone.clone(),
                role: None,
            });
        }
    }
    let g = Group {
        subject: subject.to_string(),
        subject_time: now(),
        creator: creator.to_string(),
        creation: now(),
        members: all,
        subject_owner: creator.to_string(),
        invite: invite_code(),
        settings: Settings::default(),
        addressing: reg.group_addressing,
    };
    let node = group_node(reg, group_id, &g);
    reg.groups.insert(group_id.to_string(), g);
    let created = element("create", &[], vec![node.clone()]);
    notify(reg, group_id, creator, created, &[]);
    node
}

/// IQs to `@g.us`: create, participating, leave.
fn on_server(reg: &mut Registry, who: &Asker<'_>, id: &str, iq: &Node) -> Node {
    if let Some(create) = child(iq, "create") {
        let mut members = Vec::new();
        for (_, phone) in named(reg, create) {
            if let Some(phone) = phone {
                members.push(phone);
            }
        }
        // The next free id: a group the world founded may hold one already.
        let group_id = loop {
            reg.next_group += 1;
            let id = format!("1203630000{:08}", reg.next_group);
            if !reg.groups.contains_key(&id) {
                break id;
            }
        };
        let subject = attr(create, "subject").unwrap_or_default();
        let node = found(reg, &group_id, who.phone, &members, &subject);
        return iq_result(id, vec![node]);
    }
    if child(iq, "participating").is_some() {
        let groups = reg
            .groups
            .iter()
            .filter(|(_, g)| g.has(who.phone))
            .map(|(gid, g)| group_node(reg, gid, g))
            .collect();
        return iq_result(id, vec![element("groups", &[], groups)]);
    }
    if let Some(leave) = child(iq, "leave") {
        let gids: Vec<String> = children(leave)
            .iter()
            .filter(|n| n.tag == "group")
            .map(|g| split_jid(&attr(g, "id").unwrap_or_default()).0)
            .collect();
        // A group one is not in cannot be left, as its other requests answer.
        for gid in &gids {
            match reg.groups.get(gid) {
                None => return iq_error(id, 404, "item-not-found"),
                Some(g) if !g.has(who.phone) => return iq_error(id, 403, "forbidden"),
                Some(_) => {}
            }
        }
        for gid in gids {
            if let Some(group) = reg.groups.get_mut(&gid) {
                group.members.retain(|m| m.phone != who.phone);
                let by = group.addressing;
                let gone = element(
                    "remove",
                    &[("reason", "leave".into())],
                    vec![member_node(reg, by, who.phone, None)],
                );
                notify(reg, &gid, who.phone, gone, &[who.phone.to_string()]);
            }
        }
        return iq_result(id, vec![]);
    }
    iq_error(id, 501, "feature-not-implemented")
}

/// IQs to a group: metadata, members, subject, settings, invite code.
fn on_group(reg: &mut Registry, who: &Asker<'_>, id: &str, iq: &Node, gid: &str) -> Node {
    let Some(g) = reg.groups.get(gid) else {
        return iq_error(id, 404, "item-not-found");
    };
    if !g.has(who.phone) {
        return iq_error(id, 403, "forbidden");
    }
    let admin = g.is_admin(who.phone);
    if child(iq, "query").is_some() {
        return iq_result(id, vec![group_node(reg, gid, g)]);
    }
    if let Some(change) = Change::requested(iq) {
        if change.needs_admin(g) && !admin {
            return iq_error(id, 401, "not-authorized");
        }
        let g = reg.groups.get_mut(gid).expect("looked up above");
        return match change.apply(g, who.phone) {
            Ok(action) => {
                notify(reg, gid, who.phone, action, &[]);
                iq_result(id, vec![])
            }
            Err((code, text)) => iq_error(id, code, text),
        };
    }
    if let Some(subject) = child(iq, "subject") {
        // In a locked group only admins change its info.
        if g.settings.locked && !admin {
            return iq_error(id, 401, "not-authorized");
        }
        let text = crate::nodes::text(subject).unwrap_or_default();
        let g = reg.groups.get_mut(gid).expect("looked up above");
        g.subject = text.clone();
        g.subject_time = now();
        g.subject_owner = who.phone.to_string();
        let mut attrs = vec![("subject", text), ("s_t", now().to_string())];
        attrs.extend(
            g.addressing
                .names(reg, who.phone, ["s_o", "s_o_pn", "s_o_lid"]),
        );
        let change = element("subject", &attrs, vec![]);
        notify(reg, gid, who.phone, change, &[]);
        return iq_result(id, vec![]);
    }
    if child(iq, "invite").is_some() {
        if !admin {
            return iq_error(id, 401, "not-authorized");
        }
        let g = reg.groups.get_mut(gid).expect("looked up above");
        if attr(iq, "type").as_deref() == Some("set") {
            g.invite = invite_code();
        }
        let code = g.invite.clone();
        return iq_result(id, vec![element("invite", &[("code", code)], vec![])]);
    }
    for action in ["add", "remove", "promote", "demote"] {
        if let Some(node) = child(iq, action) {
            if !admin {
                return iq_error(id, 401, "not-authorized");
            }
            return members(reg, who, id, gid, action, node);
        }
    }
    iq_error(id, 501, "feature-not-implemented")
}

/// `<add|remove|promote|demote>`: per participant, done or its error code.
fn members(
    reg: &mut Registry,
    who: &Asker<'_>,
    id: &str,
    gid: &str,
    action: &str,
    node: &Node,
) -> Node {
    let named = named(reg, node);
    let g = reg.groups.get_mut(gid).expect("checked by the caller");
    let mut answers = Vec::new();
    let mut changed = Vec::new();
    let mut removed = Vec::new();
    for (jid, phone) in named {
        let error = match (action, phone) {
            (_, None) => Some("404"),
            ("add", Some(p)) if g.has(&p) => Some("409"),
            ("add", Some(p)) => {
                g.members.push(Member {
                    phone: p.clone(),
                    role: None,
                });
                changed.push(p);
                None
            }
            (_, Some(p)) if !g.has(&p) => Some("404"),
            ("remove", Some(p)) => {
                g.members.retain(|m| m.phone != p);
                removed.push(p.clone());
                changed.push(p);
                None
            }
            (_, Some(p)) => {
                let role = (action == "promote").then_some("admin");
                for m in g.members.iter_mut().filter(|m| m.phone == p) {
                    m.role = role;
                }
                changed.push(p);
                None
            }
        };
        let mut attrs = vec![("jid", jid)];
        if let Some(code) = error {
            attrs.push(("error", code.to_string()));
        }
        answers.push(element("participant", &attrs, vec![]));
    }
    if !changed.is_empty() {
        let by = g.addressing;
        let listed = changed
            .iter()
            .map(|p| member_node(reg, by, p, None))
            .collect();
        notify(reg, gid, who.phone, element(action, &[], listed), &removed);
    }
    iq_result(id, vec![element(action, &[], answers)])
}

/// Whether `phone` may send to group `gid`: the server refuses a message to
/// a group that does not exist (404), from someone who is not a member
/// (403), or from one who is not an admin of a group in announcement mode
/// (401), and relays it to no one.
pub fn may_send(reg: &Registry, gid: &str, phone: &str) -> Result<(), &'static str> {
    match reg.groups.get(gid) {
        None => Err("404"),
        Some(g) if !g.has(phone) => Err("403"),
        Some(g) if g.settings.announce && !g.is_admin(phone) => Err("401"),
        Some(_) => Ok(()),
    }
}

/// A group's participant hash (`phash`), as a sender computes it over the
/// devices it encrypted for and the server checks it: every device of every
/// member in the group's addressing (`{lid}.0:{device}@lid`, or
/// `{phone}.0:{device}@s.whatsapp.net`), sorted and concatenated, the first
/// six bytes of their SHA-256 in unpadded base64 behind `2:` (wacore's
/// `participant_list_hash`, `build_group_phash_set`).
pub fn participant_hash(reg: &Registry, gid: &str) -> String {
    let Some(g) = reg.groups.get(gid) else {
        return String::new();
    };
    devices_hash(
        g.members
            .iter()
            .filter_map(|m| Some((&m.phone, reg.accounts.get(&m.phone)?)))
            .flat_map(|(phone, a)| {
                a.devices.keys().map(move |d| match g.addressing {
                    Addressing::Lid => format!("{}.0:{d}@lid", a.lid),
                    Addressing::Pn => format!("{phone}.0:{d}@s.whatsapp.net"),
                })
            })
            .collect(),
    )
}

/// Device JIDs (`{lid}.0:{device}@lid`) sorted and concatenated, the first
/// six bytes of their SHA-256 in unpadded base64 behind `2:`.
pub fn devices_hash(mut devices: Vec<String>) -> String {
    use base64::Engine as _;
    use sha2::{Digest, Sha256};
    devices.sort();
    let digest = Sha256::digest(devices.concat().as_bytes());
    format!(
        "2:{}",
        base64::prelude::BASE64_STANDARD_NO_PAD.encode(&digest[..6])
    )
}

/// Every device of a group's members but the sender's own sending device.
pub fn member_devices(reg: &Registry, gid: &str, from: (&str, u16)) -> Vec<(String, u16)> {
    let Some(g) = reg.groups.get(gid) else {
        return Vec::new();
    };
    g.members
        .iter()
        .flat_map(|m| {
            reg.accounts
                .get(&m.phone)
                .map(|a| {
                    a.devices
                        .keys()
                        .map(|d| (m.phone.clone(), *d))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
        .filter(|(p, d)| !(p == from.0 && *d == from.1))
        .collect()
}

/// The sender as a broadcast names it: its LID device, and its phone
/// number beside it (`participant_pn`).
pub fn participant(reg: &Registry, phone: &str, device: u16) -> [(&'static str, String); 2] {
    let lid = reg.accounts.get(phone).map_or(phone, |a| a.lid.as_str());
    [
        ("participant", device_jid(lid, device, "lid")),
        ("participant_pn", pn(phone)),
    ]
}

/// The sender as group `gid` names it: [`participant`] in a LID-addressed
/// group; in one addressed by phone number its phone's device, its LID
/// device beside it (`participant_lid`).
pub fn sender(reg: &Registry, gid: &str, phone: &str, device: u16) -> [(&'static str, String); 2] {
    if addressing(reg, gid) == Addressing::Lid {
        return participant(reg, phone, device);
    }
    let lid = reg.accounts.get(phone).map_or(phone, |a| a.lid.as_str());
    [
        ("participant", device_jid(phone, device, "s.whatsapp.net")),
        ("participant_lid", device_jid(lid, device, "lid")),
    ]
}

/// How group `gid` names its members (LID for a group the network does not
/// know).
pub fn addressing(reg: &Registry, gid: &str) -> Addressing {
    reg.groups
        .get(gid)
        .map(|g| g.addressing)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Device;
    use whatsapp_rust::Jid;
    use whatsapp_rust::wacore::messages::MessageUtils;

    #[test]
    fn the_participant_hash_is_the_clients_over_every_members_devices() {
        let mut reg = Registry::default();
        for (phone, devices) in [("4915100000701", &[0u16, 3][..]), ("4915100000702", &[0])] {
            let account = reg.account(phone);
            for d in devices {
                account.devices.insert(*d, Device::default());
            }
        }
        // Over every member's devices in the group's addressing.
        type Form = fn(&str, &str, u16) -> String;
        let by_lid: Form = |lid, _, d| format!("{lid}:{d}@lid");
        let by_phone: Form = |_, phone, d| format!("{phone}:{d}@s.whatsapp.net");
        let mut hashes = Vec::new();
        for (addressing, gid, form) in [
            (Addressing::Lid, "120363000000000009", by_lid),
            (Addressing::Pn, "120363000000000010", by_phone),
        ] {
            reg.group_addressing = addressing;
            let (creator, member) = ("4915100000701", "4915100000702");
            found(&mut reg, gid, creator, &[member.to_string()], "Orders");
            let jids: Vec<Jid> = [(creator, 0), (creator, 3), (member, 0)]
                .iter()
                .map(|(phone, d)| {
                    let lid = &reg.accounts[*phone].lid;
                    form(lid, phone, *d).parse().expect("a JID")
                })
                .collect();
            let clients = MessageUtils::participant_list_hash(&jids).expect("hash");
            assert_eq!(participant_hash(&reg, gid), clients, "{addressing:?}");
            assert!(clients.starts_with("2:"));
            hashes.push(clients);
        }
        assert_ne!(hashes[0], hashes[1]);
    }
}
