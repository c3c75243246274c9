//! What the network knows: accounts (a phone number, its hidden LID and its
//! devices), each device's noise key, uploaded Signal keys and signed
//! identity, which devices have a live socket, and what waits for the
//! offline ones.
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use parley_network_sandbox::store::derive_lid;
use tokio::sync::mpsc;
use whatsapp_rust::wacore_binary::node::Node;

/// What a connection task is told by the rest of the network.
#[derive(Debug)]
pub enum Control {
    /// Write this node.
    Send(Node),
    /// Write this node (a stream error), then close the socket.
    End(Node),
    /// Close the socket without a word.
    Drop,
    /// The phone scanned this socket's QR: write the pair-success and
    /// remember the device it names until the client signs.
    Pair {
        node: Node,
        pending: crate::pairing::Pending,
    },
}

/// One device's Signal keys, as its client uploaded them.
#[derive(Debug, Clone, Default)]
pub struct Bundle {
    pub registration: Vec<u8>,
    pub identity: Vec<u8>,
    pub prekeys: VecDeque<(Vec<u8>, Vec<u8>)>,
    pub signed: (Vec<u8>, Vec<u8>, Vec<u8>),
}

#[derive(Debug, Clone, Default)]
pub struct Device {
    pub noise: [u8; 32],
    pub bundle: Option<Bundle>,
    /// The ADV identity the companion signed at pairing (served with its keys).
    pub identity: Option<Vec<u8>>,
    pub key_index: u32,
}

#[derive(Debug, Clone)]
pub struct Account {
    pub lid: String,
    pub devices: BTreeMap<u16, Device>,
    pub next_index: u32,
    pub raw_id: u32,
    /// The name the account's owner set on the phone.
    pub push_name: String,
    /// The about text others see.
    pub about: String,
    pub picture: Picture,
    /// The picture is shown only to accounts that hold a privacy token this
    /// one issued them (its privacy: "my contacts").
    pub picture_for_contacts: bool,
    /// Calls ring only from accounts that hold a privacy token this one
    /// issued them (its privacy: calls from "my contacts").
    pub calls_from_contacts: bool,
    /// The handle others can find the account by (empty: none).
    pub username: String,
}

/// An account's profile picture.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Picture {
    #[default]
    None,
    /// Set, but shown to no one (privacy).
    Hidden,
    /// Published on the CDN: its numeric id and its signed URL and path.
    Shown {
        id: u64,
        url: String,
        direct_path: String,
    },
}

/// A live socket of a device.
pub struct Live {
    pub conn: u64,
    pub tx: mpsc::UnboundedSender<Control>,
    /// The noise key its client logged in with.
    pub noise: [u8; 32],
}

#[derive(Default)]
pub struct Registry {
    pub accounts: HashMap<String, Account>,
    /// What each device sent others through the server, in order.
    pub relayed: Vec<Relayed>,
    lids: HashMap<String, String>,
    pub live: HashMap<(String, u16), Live>,
    /// Sockets of unregistered clients waiting for a scan, by noise key.
    pub pairing: HashMap<[u8; 32], mpsc::UnboundedSender<Control>>,
    pub offline: HashMap<(String, u16), Vec<Node>>,
    /// Whether messages a device has not acknowledged (by a receipt or an
    /// `<ack class="message">`) are sent to it again at its next login, as
    /// the real network does. Off unless a test turns it on.
    pub redeliver: bool,
    /// Messages handed to a device and not acknowledged yet, by stanza id.
    pub unacked: HashMap<(String, u16), Vec<(String, Node)>>,
    /// Groups by id (the user part of `id@g.us`).
    pub groups: HashMap<String, crate::groups::Group>,
    pub next_group: u64,
    /// How the groups founded from now on name their members.
    pub group_addressing: crate::groups::Addressing,
    /// The devices each phone's statuses reach: those it ever gave its
    /// status sender key (`broadcasts::status`).
    pub status_audience: HashMap<String, BTreeSet<(String, u16)>>,
    /// Messages to deliver as a broadcast list's: list JID by message id.
    pub lists: HashMap<String, String>,
    /// The last channel post's server id.
    pub next_post: u64,
    /// The ids each device acknowledged last (by a receipt or an ack), newest last.
    pub acks: HashMap<(String, u16), VecDeque<String>>,
    /// Companions waiting for a code to be typed, by phone number.
    pub codes: HashMap<String, crate::code::CodeRequest>,
    /// Server-side app-state collections: the patches each account's
    /// collections hold, in version order, by phone and collection name.
    pub collections: HashMap<(String, String), Vec<Vec<u8>>>,
    /// The version of each collection each device last has from the server
    /// (by phone, device, collection): what its last sync was answered, or
    /// the patch it sent.
    pub fetched: HashMap<(String, u16, String), usize>,
    /// Privacy tokens: the gate on 1:1 messages (`crate::tokens`).
    pub tokens: crate::tokens::Tokens,
    /// Whether reinstalls go unannounced (`crate::identities`).
    pub quiet_identity_changes: bool,
    /// Numbers registered again whose new install has not uploaded its
    /// keys yet (then their identity change is announced).
    pub reinstalled: std::collections::HashSet<String>,
    /// The identity-change notifications sent: id, the number that changed,
    /// the device told.
    pub identity_notices: Vec<(String, String, (String, u16))>,
    /// Direct messages' copies sealed for a device that was gone: the
    /// message id and the device (`crate::device_lists`).
    pub sealed_for_gone: Vec<(String, (String, u16))>,
    /// Group messages whose sender's participant hash was stale.
    pub stale_phashes: usize,
    /// Users each device's device-list queries left out: its hash was
    /// current.
    pub device_lists_unchanged: HashMap<(String, u16), usize>,
    /// Each device's own account's device lists sent to it in full.
    pub own_device_lists_sent: HashMap<(String, u16), usize>,
    /// The most sockets one device ever had at once.
    pub most_live: HashMap<(String, u16), usize>,
    /// Presence subscriptions: the sockets (device and connection) that
    /// subscribed to each account's presence, by phone (`crate::presence`).
    pub watchers: HashMap<String, BTreeSet<(String, u16, u64)>>,
    /// Each account's presence as its devices said it, in order
    /// (`crate::presence`).
    pub presences: Vec<SaidPresence>,
    /// The call actions devices signalled, in order (`crate::calls`).
    pub calls: Vec<crate::calls::CallSignal>,
    /// The calls whose offer the server refused (463), by call id.
    pub calls_refused: Vec<String>,
    counts: HashMap<(String, u16), usize>,
    next_raw_id: u32,
}

/// A device said its account is online (`available`) or offline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaidPresence {
    pub from: (String, u16),
    pub available: bool,
    pub at: chrono::DateTime<chrono::Utc>,
}

/// A stanza one device sent another through the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relayed {
    pub from: (String, u16),
    pub to: (String, u16),
    /// `message`, `receipt:<type>` (`receipt:read`, ...) or `chatstate`.
    pub kind: String,
    /// The message's (or receipt's) id; empty for typing.
    pub id: String,
}

/// `user[:device]@server`, the device part left out for device 0.
pub fn device_jid(user: &str, device: u16, server: &str) -> String {
    if device == 0 {
        format!("{user}@{server}")
    } else {
        format!("{user}:{device}@{server}")
    }
}

/// Splits `user[:device][@server]` (an agent part `user.agent` is dropped).
pub fn split_jid(jid: &str) -> (String, u16, String) {
    let (left, server) = jid.split_once('@').unwrap_or((jid, "s.whatsapp.net"));
    let (user, device) = match left.split_once(':') {
        Some((u, d)) => (u, d.parse().unwrap_or(0)),
        None => (left, 0),
    };
    let user = user.split('.').next().unwrap_or(user);
    (user.to_string(), device, server.to_string())
}

impl Registry {
    /// The account of `phone`, made when new with the LID the sandbox gives
    /// the same number (derived from it, the spec's Identities).
    pub fn account(&mut self, phone: &str) -> &mut Account {
        if !self.accounts.contains_key(phone) {
            self.next_raw_id += 1;
            let lid = (0..)
                .map(|attempt| derive_lid(phone, attempt))
                // A number registered again (its account deleted) gets its LID back.
                .find(|lid| self.lids.get(lid).is_none_or(|owner| owner == phone))
                .expect("a free LID");
            self.lids.insert(lid.clone(), phone.to_string());
            self.accounts.insert(
                phone.to_string(),
                Account {
                    lid,
                    devices: BTreeMap::new(),
                    next_index: 1,
                    raw_id: self.next_raw_id,
                    push_name: String::new(),
                    about: String::new(),
                    username: String::new(),
                    picture: Picture::None,
                    picture_for_contacts: false,
                    calls_from_contacts: false,
                },
            );
        }
        self.accounts.get_mut(phone).expect("just made")
    }

    /// The phone number behind a user part, which may be a LID.
    pub fn phone_of(&self, user: &str, server: &str) -> Option<String> {
        if server == "lid" {
            self.lids.get(user).cloned()
        } else {
            self.accounts.contains_key(user).then(|| user.to_string())
        }
    }

    pub fn device(&mut self, phone: &str, device: u16) -> Option<&mut Device> {
        self.accounts.get_mut(phone)?.devices.get_mut(&device)
    }

    /// A live socket for `(phone, device)`; any older one is returned to be ended.
    pub fn go_live(&mut self, key: (String, u16), live: Live) -> Option<Live> {
        let count = self.counts.entry(key.clone()).or_default();
        *count += 1;
        let most = self.most_live.entry(key.clone()).or_default();
        *most = (*most).max(*count);
        self.live.insert(key, live)
    }

    /// The socket `conn` of `key` is gone.
    pub fn gone(&mut self, key: &(String, u16), conn: u64) {
        if let Some(count) = self.counts.get_mut(key) {
            *count = count.saturating_sub(1);
        }
        if self.live.get(key).is_some_and(|l| l.conn == conn) {
            self.live.remove(key);
        }
    }

    /// Hands `node` to the device now, or keeps it for its next login.
    /// The other accounts `phone` exchanged messages with, and their devices.
    pub fn contacts_of(&self, phone: &str) -> Vec<(String, Vec<u16>)> {
        let others: BTreeSet<&String> = self
            .relayed
            .iter()
            .filter_map(|r| match (r.from.0 == phone, r.to.0 == phone) {
                (true, false) => Some(&r.to.0),
                (false, true) => Some(&r.from.0),
                _ => None,
            })
            .collect();
        others
            .into_iter()
            .filter_map(|other| {
                let devices = self.accounts.get(other)?.devices.keys().copied().collect();
                Some((other.clone(), devices))
            })
            .collect()
    }

    pub fn deliver(&mut self, phone: &str, device: u16, node: Node) {
        let key = (phone.to_string(), device);
        if let Some(live) = self.live.get(&key)
            && live.tx.send(Control::Send(node.clone())).is_ok()
        {
            self.handed(&key, &node);
            return;
        }
        self.offline.entry(key).or_default().push(node);
    }

    /// `node` went to the device: a message waits for its acknowledgement.
    pub fn handed(&mut self, key: &(String, u16), node: &Node) {
        if !self.redeliver || node.tag != "message" {
            return;
        }
        if let Some(id) = crate::nodes::attr(node, "id") {
            self.unacked
                .entry(key.clone())
                .or_default()
                .push((id, node.clone()));
        }
    }

    /// Whether device `key` acknowledged stanza `id` (among the last it did).
    pub fn has_acked(&self, key: &(String, u16), id: &str) -> bool {
        self.acks
            .get(key)
            .is_some_and(|ids| ids.iter().any(|i| i == id))
    }

    /// The device acknowledged the messages `ids`.
    pub fn acked(&mut self, key: &(String, u16), ids: &[String]) {
        if let Some(waiting) = self.unacked.get_mut(key) {
            waiting.retain(|(id, _)| !ids.contains(id));
        }
        const KEPT: usize = 1024;
        let acks = self.acks.entry(key.clone()).or_default();
        acks.extend(ids.iter().cloned());
        while acks.len() > KEPT {
            acks.pop_front();
        }
    }

    /// What the device gets at login: the messages it did not acknowledge
    /// (again), then what waited while it was offline.
    pub fn take_queued(&mut self, key: &(String, u16)) -> Vec<Node> {
        let mut queued: Vec<Node> = self
            .unacked
            .remove(key)
            .unwrap_or_default()
            .into_iter()
            .map(|(_, node)| node)
            .collect();
        queued.extend(self.offline.remove(key).unwrap_or_default());
        queued
    }
}
