//! Parley's wire-level test network: a server on loopback that speaks the
//! messaging network's wire protocol (websocket, Noise XX/IK, binary nodes)
//! well enough for real whatsapp-rust clients to pair, log in and message
//! through it, and test devices (a phone, contacts) that are such clients.
//! Test-only: never part of the release build.
//!
//! The server never decrypts: it keeps accounts, devices and their uploaded
//! Signal keys, routes each `<enc>` to its device, and answers what a
//! client asks after login. Faults (stream errors, bans, dropped sockets, a
//! refused IK) are set from the test, like the sandbox's.
pub mod app_state;
pub mod baileys;
mod broadcasts;
mod calls;
mod cdn;
mod code;
mod conn;
mod device_lists;
pub mod devices;
pub mod dictionary;
pub mod faults;
mod group_settings;
mod groups;
mod handshake;
mod history;
mod identities;
mod iq;
pub mod kinds;
pub mod labels;
mod nodes;
pub mod pairing;
mod placeholders;
mod presence;
mod profile;
mod registry;
mod relay;
pub mod rogue;
pub mod sandbox_routes;
mod socket;
pub mod tokens;
pub mod world;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use anyhow::{Context, anyhow, bail};
use tokio::net::TcpListener;
use whatsapp_rust::wacore::libsignal::protocol::KeyPair;

use handshake::ServerKeys;
use pairing::{Linked, Pending, Qr, pair_success};
use registry::{Control, Device, Registry};

pub use baileys::{Baileys, BaileysMessage};
pub use devices::{Received, Seen, Signal, TestDevice};
pub use kinds::{File, FileKind};
pub use profile::Avatar;
pub use registry::{Relayed, device_jid};

/// The server's shared state.
pub struct Inner {
    keys: ServerKeys,
    registry: Mutex<Registry>,
    next_conn: AtomicU64,
    /// The last profile picture id handed out.
    last_picture: AtomicU64,
    refuse_ik: AtomicBool,
    patterns: Mutex<HashMap<&'static str, usize>>,
    bans: Mutex<HashMap<String, u64>>,
    /// Stanzas the server refuses, by device.
    faults: faults::Faults,
    /// Woken at every change of accounts, keys or live sockets.
    changed: tokio::sync::Notify,
    /// The CDN's `host:port`, as `media_conn` names it.
    cdn_host: String,
    /// What the server itself puts on the CDN.
    shelf: cdn::Shelf,
    /// Token dictionaries of other versions than ours, by version.
    dictionaries: Mutex<HashMap<u8, Arc<dictionary::Transcoder>>>,
}

impl Inner {
    fn registry(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn transcoder(&self, version: u8) -> Option<Arc<dictionary::Transcoder>> {
        self.dictionaries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&version)
            .cloned()
    }

    fn next_conn(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::SeqCst)
    }

    /// Waits until `key` has no live socket logged in with `noise`, for at
    /// most `grace`.
    async fn older_socket_ended(
        &self,
        key: &(String, u16),
        noise: &[u8; 32],
        grace: std::time::Duration,
    ) {
        let deadline = tokio::time::Instant::now() + grace;
        while self
            .registry()
            .live
            .get(key)
            .is_some_and(|l| l.noise == *noise)
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    fn note_pattern(&self, pattern: &'static str) {
        *self
            .patterns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(pattern)
            .or_default() += 1;
    }

    fn ban_for(&self, phone: &str) -> Option<u64> {
        self.bans
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(phone)
            .copied()
    }

    /// The companion signed: it is now device `device` of `phone`. The
    /// account's other devices and the accounts that wrote with it hear of
    /// it (`<notification type="devices">`).
    fn link(&self, phone: &str, device: u16, noise: [u8; 32], identity: Option<Vec<u8>>) {
        let mut reg = self.registry();
        let account = reg.account(phone);
        account.devices.insert(
            device,
            Device {
                noise,
                bundle: None,
                identity,
                key_index: u32::from(device),
            },
        );
        device_lists::announce(&mut reg, phone, device, device_lists::Change::Add);
        drop(reg);
        self.changed.notify_waiters();
    }

    /// Waits up to `deadline` until `test` holds of the registry.
    async fn wait_until(
        &self,
        deadline: std::time::Duration,
        test: impl Fn(&Registry) -> bool,
    ) -> bool {
        let until = tokio::time::Instant::now() + deadline;
        loop {
            let changed = self.changed.notified();
            if test(&self.registry()) {
                return true;
            }
            if tokio::time::timeout_at(until, changed).await.is_err() {
                return test(&self.registry());
            }
        }
    }
}

/// Waits on the network's state from a task of its own.
#[derive(Clone)]
pub struct Watcher(Arc<Inner>);

impl Watcher {
    /// Waits up to `deadline` until the device has uploaded its Signal keys.
    pub async fn keys_uploaded(
        &self,
        phone: &str,
        device: u16,
        deadline: std::time::Duration,
    ) -> bool {
        self.0
            .wait_until(deadline, |reg| {
                reg.accounts
                    .get(phone)
                    .and_then(|a| a.devices.get(&device))
                    .is_some_and(|d| d.bundle.is_some())
            })
            .await
    }

    /// Waits up to `deadline` until the device has acknowledged message `id`
    /// (by a receipt or an ack).
    pub async fn acknowledged(
        &self,
        phone: &str,
        device: u16,
        id: &str,
        deadline: std::time::Duration,
    ) -> bool {
        let key = (phone.to_string(), device);
        self.0
            .wait_until(deadline, |reg| reg.has_acked(&key, id))
            .await
    }

    /// Waits up to `deadline` until the device has acknowledged the news
    /// that device `gone` of `phone` was removed.
    pub async fn heard_removed(
        &self,
        holder: (&str, u16),
        phone: &str,
        gone: u16,
        deadline: std::time::Duration,
    ) -> bool {
        let key = (holder.0.to_string(), holder.1);
        self.0
            .wait_until(deadline, |reg| {
                let Some(account) = reg.accounts.get(phone) else {
                    return false;
                };
                let news = [
                    device_lists::removal_id_prefix(phone, gone),
                    device_lists::removal_id_prefix(&account.lid, gone),
                ];
                reg.acks.get(&key).is_some_and(|ids| {
                    ids.iter()
                        .any(|id| news.iter().any(|n| id.starts_with(n.as_str())))
                })
            })
            .await
    }

    /// Waits up to `deadline` until the device got its own account's device
    /// list in full (whatsapp-rust asks for it after each login, in the
    /// background, and keeps its hash for the next).
    pub async fn own_device_list_sent(
        &self,
        phone: &str,
        device: u16,
        deadline: std::time::Duration,
    ) -> bool {
        self.0
            .wait_until(deadline, |reg| {
                device_lists::own_lists_sent(reg, phone, device) > 0
            })
            .await
    }

    /// Waits up to `deadline` until the device's device-list queries left
    /// out more than `past` users (see [`WireNetwork::device_lists_unchanged`]).
    pub async fn device_lists_unchanged_past(
        &self,
        phone: &str,
        device: u16,
        past: usize,
        deadline: std::time::Duration,
    ) -> bool {
        self.0
            .wait_until(deadline, |reg| {
                device_lists::unchanged(reg, phone, device) > past
            })
            .await
    }

    /// Waits up to `deadline` until the server relayed message `id` from
    /// device `from` to device `to` (each a phone and a device number).
    pub async fn relayed(
        &self,
        from: (&str, u16),
        to: (&str, u16),
        id: &str,
        deadline: std::time::Duration,
    ) -> bool {
        self.0
            .wait_until(deadline, |reg| {
                reg.relayed.iter().rev().any(|r| {
                    r.id == id
                        && (r.from.0.as_str(), r.from.1) == from
                        && (r.to.0.as_str(), r.to.1) == to
                })
            })
            .await
    }

    /// Waits up to `deadline` until the account no longer lists the device.
    pub async fn device_gone(
        &self,
        phone: &str,
        device: u16,
        deadline: std::time::Duration,
    ) -> bool {
        self.0
            .wait_until(deadline, |reg| {
                reg.accounts
                    .get(phone)
                    .is_none_or(|a| !a.devices.contains_key(&device))
            })
            .await
    }
}

/// A companion the phone linked: its device JID and number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedDevice {
    pub jid: String,
    pub device: u16,
}

/// A running test network on a loopback port.
pub struct WireNetwork {
    inner: Arc<Inner>,
    addr: SocketAddr,
    accept: tokio::task::JoinHandle<()>,
    _cdn: cdn::Cdn,
}

impl Drop for WireNetwork {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl WireNetwork {
    /// Listens on a free loopback port.
    pub async fn start() -> anyhow::Result<Self> {
        Self::start_on("127.0.0.1:0".parse()?).await
    }

    /// Listens on `addr` (port 0: a free one).
    pub async fn start_on(addr: SocketAddr) -> anyhow::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let cdn = cdn::Cdn::start().await?;
        let inner = Arc::new(Inner {
            keys: ServerKeys::generate(),
            registry: Mutex::new(Registry::default()),
            next_conn: AtomicU64::new(1),
            last_picture: AtomicU64::new(0),
            refuse_ik: AtomicBool::new(false),
            patterns: Mutex::new(HashMap::new()),
            bans: Mutex::new(HashMap::new()),
            faults: faults::Faults::default(),
            changed: tokio::sync::Notify::new(),
            cdn_host: cdn.addr.to_string(),
            shelf: cdn.shelf(),
            dictionaries: Mutex::new(HashMap::new()),
        });
        let served = Arc::clone(&inner);
        let accept = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                tokio::spawn(conn::serve(Arc::clone(&served), tcp));
            }
        });
        Ok(Self {
            inner,
            addr,
            accept,
            _cdn: cdn,
        })
    }

    pub fn watcher(&self) -> Watcher {
        Watcher(Arc::clone(&self.inner))
    }

    /// Speaks token dictionary `version` (as a client announces it in its
    /// connection header) with `dictionary`'s tokens, besides our own.
    pub fn speak_dictionary(
        &self,
        version: u8,
        dictionary: dictionary::Dictionary,
    ) -> anyhow::Result<()> {
        let transcoder = Arc::new(dictionary::Transcoder::new(dictionary)?);
        self.inner
            .dictionaries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(version, transcoder);
        Ok(())
    }

    /// The websocket URL clients dial.
    pub fn url(&self) -> String {
        format!("ws://{}/ws/chat", self.addr)
    }

    /// Registers `phone`'s primary device (device 0) under its noise key;
    /// its owner's name is `push_name`. Returns the account's LID user part.
    /// A number registered again (its device 0 had keys) is a reinstall:
    /// once the new install uploaded its keys, those who wrote with the
    /// number hear of its new identity (`identities`).
    pub fn provision(&self, phone: &str, noise: [u8; 32], push_name: &str) -> String {
        let mut reg = self.inner.registry();
        let account = reg.account(phone);
        let reinstall = account.devices.get(&0).is_some_and(|d| d.bundle.is_some());
        account.push_name = push_name.to_string();
        account.devices.insert(
            0,
            Device {
                noise,
                ..Device::default()
            },
        );
        let lid = account.lid.clone();
        if reinstall {
            reg.reinstalled.insert(phone.to_string());
        }
        lid
    }

    /// Signal keys for the phone of `phone` (device 0) as its own client
    /// would have uploaded them: a signed prekey `identity` signed, no
    /// one-time prekeys. For a phone without a client here (a benchmark's):
    /// its companions then build a session with it once and encrypt every
    /// message for it too, as they do for a real phone, instead of asking the
    /// server for its keys again at every send. What they send it waits in
    /// its offline queue.
    pub fn give_phone_keys(&self, phone: &str, identity: &KeyPair) -> anyhow::Result<()> {
        let signed = KeyPair::generate(&mut rand10::rng());
        let value = signed.public_key.public_key_bytes().to_vec();
        let signature = identity
            .private_key
            .calculate_signature(&signed.public_key.serialize(), &mut rand10::rng())
            .map_err(|e| anyhow!("sign the prekey: {e}"))?
            .to_vec();
        let mut reg = self.inner.registry();
        let device = reg
            .device(phone, 0)
            .ok_or_else(|| anyhow!("no phone {phone} on the network"))?;
        device.bundle = Some(registry::Bundle {
            registration: u32::from((rand10::random::<u16>() & 0x3fff).max(1))
                .to_be_bytes()
                .to_vec(),
            identity: identity.public_key.public_key_bytes().to_vec(),
            prekeys: Default::default(),
            signed: (vec![0, 0, 1], value, signature),
        });
        Ok(())
    }

    /// The phone `phone` (its identity key `identity`) scans `qr`: the
    /// companion showing it gets its pair-success. Returns the device JID it
    /// is linked as.
    pub fn scan(&self, qr: &str, phone: &str, identity: &KeyPair) -> anyhow::Result<LinkedDevice> {
        let qr = Qr::parse(qr)?;
        let mut reg = self.inner.registry();
        let tx = reg
            .pairing
            .get(&qr.noise)
            .cloned()
            .ok_or_else(|| anyhow!("no client shows this QR code"))?;
        let account = reg.account(phone);
        let device = account.next_index as u16;
        account.next_index += 1;
        let linked = Linked {
            phone,
            lid: &account.lid,
            device,
            key_index: u32::from(device),
            raw_id: account.raw_id,
        };
        let node = pair_success(&qr.identity, &qr.adv_secret, &linked, identity)
            .context("pair-success")?;
        let pending = Pending::new(&linked, qr.identity, identity);
        tx.send(Control::Pair { node, pending })
            .map_err(|_| anyhow!("the companion's socket closed"))?;
        Ok(LinkedDevice {
            jid: device_jid(phone, device, "s.whatsapp.net"),
            device,
        })
    }

    /// The phone `phone` (with identity key `identity`) has `code` typed in:
    /// the companion that asked for a code for this number is linked. Fails
    /// when none asked, the code is wrong (its key bundle does not open), or
    /// the companion does not finish within `PAIR_WAIT`.
    pub async fn enter_code(
        &self,
        code: &str,
        phone: &str,
        identity: &KeyPair,
    ) -> anyhow::Result<LinkedDevice> {
        const PAIR_WAIT: std::time::Duration = std::time::Duration::from_secs(20);
        let code: String = code.chars().filter(char::is_ascii_alphanumeric).collect();
        let asked = |reg: &Registry| reg.codes.contains_key(phone);
        if !self.inner.wait_until(PAIR_WAIT, asked).await {
            bail!("no companion asked for a code for {phone}");
        }
        let request = self.inner.registry().codes.get(phone).cloned();
        let request = request.context("the code request went away")?;
        let hello = {
            let (request, identity) = (request.clone(), identity.clone());
            tokio::task::spawn_blocking(move || code::primary_hello(&request, &code, &identity))
                .await
                .context("the phone's key derivation")??
        };
        let tx = self.inner.registry().pairing.get(&request.noise).cloned();
        tx.context("the companion's socket closed")?
            .send(Control::Send(hello.notification.clone()))
            .map_err(|_| anyhow!("the companion's socket closed"))?;
        let finished = |reg: &Registry| reg.codes.get(phone).is_some_and(|r| r.finish.is_some());
        if !self.inner.wait_until(PAIR_WAIT, finished).await {
            bail!("the companion did not finish the code pairing");
        }
        let mut reg = self.inner.registry();
        let (bundle, companion) = reg
            .codes
            .get_mut(phone)
            .and_then(|r| r.finish.take())
            .context("the code request went away")?;
        // A wrong code does not open the companion's key bundle; the request
        // stays, so the right code can still be typed in.
        let adv_secret = code::open_bundle(&hello, &bundle, &companion, identity)?;
        reg.codes.remove(phone);
        let tx = reg
            .pairing
            .get(&request.noise)
            .cloned()
            .context("the companion's socket closed")?;
        let account = reg.account(phone);
        let device = account.next_index as u16;
        account.next_index += 1;
        let linked = Linked {
            phone,
            lid: &account.lid,
            device,
            key_index: u32::from(device),
            raw_id: account.raw_id,
        };
        let node =
            pair_success(&companion, &adv_secret, &linked, identity).context("pair-success")?;
        let pending = Pending::new(&linked, companion, identity);
        drop(reg);
        tx.send(Control::Pair { node, pending })
            .map_err(|_| anyhow!("the companion's socket closed"))?;
        Ok(LinkedDevice {
            jid: device_jid(phone, device, "s.whatsapp.net"),
            device,
        })
    }

    /// `phone` (registered on the network if it was not) shows `about` and
    /// `avatar` to others.
    pub fn set_profile(&self, phone: &str, about: &str, avatar: Avatar) {
        self.inner.set_profile(phone, about, avatar);
    }

    /// `phone`'s picture is shown to its contacts only (`true`: accounts
    /// holding a privacy token it issued them) or to everyone.
    pub fn set_picture_for_contacts(&self, phone: &str, on: bool) {
        self.inner.registry().account(phone).picture_for_contacts = on;
        self.inner.changed.notify_waiters();
    }

    /// `phone`'s account takes calls from its contacts only (`true`:
    /// accounts holding a privacy token it issued them) or from everyone.
    pub fn set_calls_from_contacts(&self, phone: &str, on: bool) {
        self.inner.registry().account(phone).calls_from_contacts = on;
        self.inner.changed.notify_waiters();
    }

    /// Whether `phone` has an account on the network.
    pub fn is_registered(&self, phone: &str) -> bool {
        self.inner.registry().accounts.contains_key(phone)
    }

    /// `phone`'s owner now calls themself `push_name`.
    pub fn set_push_name(&self, phone: &str, push_name: &str) {
        self.inner.registry().account(phone).push_name = push_name.to_string();
    }

    /// The name `phone`'s account gave itself, when it gave one.
    pub fn push_name_of(&self, phone: &str) -> Option<String> {
        let reg = self.inner.registry();
        let name = &reg.accounts.get(phone)?.push_name;
        (!name.is_empty()).then(|| name.clone())
    }

    /// `phone`'s account is found by `username` from now on (empty: none).
    pub fn set_username(&self, phone: &str, username: &str) {
        self.inner.registry().account(phone).username = username.to_string();
        self.inner.changed.notify_waiters();
    }

    /// `phone`'s owner deletes the account: the number is no longer on the
    /// network (its LID stays its own, should it register again) and its
    /// devices' sockets end with `401 device_removed`. Refused while the
    /// account has linked devices.
    pub fn delete_account(&self, phone: &str) -> anyhow::Result<()> {
        let mut reg = self.inner.registry();
        let Some(account) = reg.accounts.get(phone) else {
            return Ok(());
        };
        if account.devices.keys().any(|d| *d != 0) {
            bail!("{phone} has linked devices");
        }
        let devices: Vec<u16> = account.devices.keys().copied().collect();
        reg.accounts.remove(phone);
        for device in devices {
            removed(&mut reg, phone, device);
        }
        drop(reg);
        self.inner.changed.notify_waiters();
        Ok(())
    }

    /// The numbers a companion asked a pairing code for, and is waiting with.
    pub fn code_requests(&self) -> Vec<String> {
        self.inner.registry().codes.keys().cloned().collect()
    }

    /// The LID user part of `phone`'s account, if it has one.
    pub fn lid_of(&self, phone: &str) -> Option<String> {
        let reg = self.inner.registry();
        reg.accounts.get(phone).map(|a| a.lid.clone())
    }

    /// What device `device` of `phone` sent other accounts' devices so far.
    /// What `phone`'s device `device` said of its account's presence, in order.
    pub fn presence_from(&self, phone: &str, device: u16) -> Vec<registry::SaidPresence> {
        self.inner
            .registry()
            .presences
            .iter()
            .filter(|p| p.from.0 == phone && p.from.1 == device)
            .cloned()
            .collect()
    }

    /// The call actions the device `phone`:`device` signalled, in order.
    pub fn calls_from(&self, phone: &str, device: u16) -> Vec<calls::CallSignal> {
        self.inner
            .registry()
            .calls
            .iter()
            .filter(|c| c.from.0 == phone && c.from.1 == device)
            .cloned()
            .collect()
    }

    pub fn relayed_from(&self, phone: &str, device: u16) -> Vec<registry::Relayed> {
        self.inner
            .registry()
            .relayed
            .iter()
            .filter(|r| r.from.0 == phone && r.from.1 == device)
            .cloned()
            .collect()
    }

    /// The phone number whose account has the LID user part `lid`.
    pub fn phone_of_lid(&self, lid: &str) -> Option<String> {
        self.inner.registry().phone_of(lid, "lid")
    }

    /// The app-state patches `phone`'s account holds (its devices made them),
    /// each collection's in version order.
    /// `phone`'s phone (holding the account's app-state key `key_id`,
    /// `key`) changes `collection`: `changes` become the collection's next
    /// patch, continuing what it holds, and the account's companions hear
    /// of it and sync.
    pub fn phone_changes_app_state(
        &self,
        phone: &str,
        collection: &str,
        changes: &[(
            Vec<String>,
            whatsapp_rust::waproto::whatsapp::SyncActionValue,
        )],
        key_id: &[u8],
        key: &[u8],
    ) -> anyhow::Result<()> {
        let mut reg = self.inner.registry();
        let held = reg
            .collections
            .entry((phone.to_string(), collection.to_string()))
            .or_default();
        let patch = app_state::next_patch(held, collection, changes, key_id, key)?;
        held.push(patch);
        app_state::tell_companions(&mut reg, phone, None, collection);
        drop(reg);
        self.inner.changed.notify_waiters();
        tokio::spawn(app_state::announce_until_fetched(
            Arc::clone(&self.inner),
            phone.to_string(),
            collection.to_string(),
        ));
        Ok(())
    }

    pub fn app_state_patches(&self, phone: &str) -> Vec<app_state::Patch> {
        let reg = self.inner.registry();
        reg.collections
            .iter()
            .filter(|((owner, _), _)| owner == phone)
            .flat_map(|((_, collection), patches)| {
                patches.iter().map(|bytes| app_state::Patch {
                    collection: collection.clone(),
                    bytes: bytes.clone(),
                })
            })
            .collect()
    }

    /// The phone removes its companion `device`: the device is forgotten, its
    /// socket, if live, gets `401 device_removed`, and the account's other
    /// devices and the accounts that wrote with it hear of it.
    pub fn unlink(&self, phone: &str, device: u16) {
        let mut reg = self.inner.registry();
        device_lists::remove(&mut reg, phone, device);
        removed(&mut reg, phone, device);
    }

    /// As [`WireNetwork::unlink`], but the news is lost: nobody holding the
    /// account's device list hears of it (a client then learns it from the
    /// server's `phash` on its next message).
    pub fn unlink_untold(&self, phone: &str, device: u16) {
        let mut reg = self.inner.registry();
        if let Some(account) = reg.accounts.get_mut(phone) {
            account.devices.remove(&device);
        }
        removed(&mut reg, phone, device);
    }

    /// Ends the device's live socket with a stream error (`code`, `conflict`).
    pub fn stream_error(
        &self,
        phone: &str,
        device: u16,
        code: Option<u16>,
        conflict: Option<&str>,
    ) -> bool {
        let reg = self.inner.registry();
        reg.live.get(&(phone.to_string(), device)).is_some_and(|l| {
            l.tx.send(Control::End(nodes::stream_error(code, conflict)))
                .is_ok()
        })
    }

    /// Sends messages a device did not acknowledge again at its next login
    /// (as the real network does); off by default.
    pub fn redeliver_unacked(&self, on: bool) {
        self.inner.registry().redeliver = on;
    }

    /// Drops the device's live socket without a word.
    pub fn drop_socket(&self, phone: &str, device: u16) -> bool {
        let reg = self.inner.registry();
        reg.live
            .get(&(phone.to_string(), device))
            .is_some_and(|l| l.tx.send(Control::Drop).is_ok())
    }

    /// Refuses logins of `phone` as temporarily banned for `seconds` more (ban code 101); `None` lifts it.
    pub fn ban(&self, phone: &str, seconds: Option<u64>) {
        let mut bans = self.inner.bans.lock().unwrap_or_else(|p| p.into_inner());
        match seconds {
            Some(t) => bans.insert(phone.to_string(), t),
            None => bans.remove(phone),
        };
    }

    /// The device's next `count` stanzas of `fault`'s kind are refused (0 disarms).
    pub fn arm_fault(&self, phone: &str, device: u16, fault: faults::Fault, count: u32) {
        self.inner.faults.arm(phone, device, fault, count);
    }

    /// How many of the device's stanzas `fault` still refuses.
    pub fn faults_left(&self, phone: &str, device: u16, fault: faults::Fault) -> u32 {
        self.inner.faults.left(phone, device, fault)
    }

    /// The next `count` pairing-code requests of the socket with this noise
    /// key are answered with an IQ error 500, and no code is kept.
    pub fn arm_code_fault(&self, noise: [u8; 32], count: u32) {
        self.inner.faults.arm_code(noise, count);
    }

    /// Answers IK hellos with the XX fallback from now on.
    pub fn refuse_ik(&self, refuse: bool) {
        self.inner.refuse_ik.store(refuse, Ordering::SeqCst);
    }

    /// How many handshakes each pattern ("XX", "IK", "XXfallback") served.
    pub fn handshakes(&self, pattern: &str) -> usize {
        self.inner
            .patterns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(pattern)
            .copied()
            .unwrap_or(0)
    }

    /// Whether the device has a live socket now.
    pub fn is_live(&self, phone: &str, device: u16) -> bool {
        self.inner
            .registry()
            .live
            .contains_key(&(phone.to_string(), device))
    }

    /// The most sockets the device ever had open at the same time.
    pub fn most_live_sockets(&self, phone: &str, device: u16) -> usize {
        self.inner
            .registry()
            .most_live
            .get(&(phone.to_string(), device))
            .copied()
            .unwrap_or(0)
    }

    /// The CDN's address (`host:port`), as `media_conn` names it.
    pub fn cdn_host(&self) -> &str {
        &self.inner.cdn_host
    }

    /// Every media auth handed out so far stops working: the next upload
    /// or download with one gets 401, and a client must ask `media_conn`
    /// for a new one.
    pub fn expire_media_auths(&self) {
        self.inner.shelf.expire_auths();
    }

    /// Groups founded from now on are addressed by phone number (`true`),
    /// as groups made before LIDs are, or by LID (`false`: the network's
    /// groups now, the default).
    pub fn address_groups_by_phone(&self, on: bool) {
        self.inner.registry().group_addressing = if on {
            groups::Addressing::Pn
        } else {
            groups::Addressing::Lid
        };
    }

    /// How many group messages came with a stale participant hash (and
    /// were acknowledged with the server's).
    pub fn stale_phashes(&self) -> usize {
        self.inner.registry().stale_phashes
    }

    /// The devices `phone`'s account has now.
    pub fn devices_of(&self, phone: &str) -> Vec<u16> {
        self.inner
            .registry()
            .accounts
            .get(phone)
            .map(|a| a.devices.keys().copied().collect())
            .unwrap_or_default()
    }
}

/// A device the network removed: what waited for it is dropped, and its live
/// socket, if any, gets `401 device_removed`.
fn removed(reg: &mut Registry, phone: &str, device: u16) {
    let key = (phone.to_string(), device);
    reg.offline.remove(&key);
    if let Some(live) = reg.live.get(&key) {
        let _ = live.tx.send(Control::End(nodes::stream_error(
            Some(401),
            Some("device_removed"),
        )));
    }
}
