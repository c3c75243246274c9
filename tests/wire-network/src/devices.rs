//! Test devices: whatsapp-rust clients that are an account's primary device
//! (device 0) on the test network, with their own identity, prekeys and
//! Signal sessions. One plays the phone that links a session (its identity
//! key signs the companion at a scan, and its own sends reach the session as
//! `fromMe` echoes); others play contacts who write to the session and read
//! what it sends.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, anyhow};
use tokio::sync::{Notify, mpsc};
use whatsapp_rust::bot::Bot;
use whatsapp_rust::http::UreqHttpClient;
use whatsapp_rust::store::commands::DeviceCommand;
use whatsapp_rust::store::traits::{AppStateSyncKey, AppSyncStore, DeviceStore};
use whatsapp_rust::transport::TokioWebSocketTransportFactory;
use whatsapp_rust::types::events::{Event, EventHandler};
use whatsapp_rust::wacore::libsignal::protocol::KeyPair;
use whatsapp_rust::wacore::proto_helpers::MessageExt;
use whatsapp_rust::wacore::store::{Device, InMemoryBackend};
use whatsapp_rust::{Client, Jid, TokioRuntime};

use parley_contract::wire::sandbox::{SandboxPastLabel, SandboxPastMessage};
use parley_network::test_network::PhoneLabel;
use parley_network_whatsapp::live::LoopbackHttp;
use whatsapp_rust::waproto::whatsapp as wa;

use crate::{LinkedDevice, WireNetwork, placeholders};

/// The client version test clients announce (nothing is fetched).
pub const VERSION: (u32, u32, u32) = (2, 3000, 1_000_000_000);

/// How long a test device waits to be connected.
const CONNECT_WAIT: Duration = Duration::from_secs(20);

/// A message a test device received.
#[derive(Debug, Clone)]
pub struct Received {
    pub id: String,
    /// The chat (a user or group JID, without device).
    pub chat: String,
    /// The sending device's user (without device).
    pub sender: String,
    /// The sending device's number (0: the account's phone).
    pub sender_device: u16,
    /// When it arrived.
    pub at: chrono::DateTime<chrono::Utc>,
    pub from_me: bool,
    pub text: Option<String>,
    /// The message as received, unwrapped (media fields and keys, updates).
    pub message: Box<wa::Message>,
    /// The message's secret (polls carry one; votes need it).
    pub secret: Option<Vec<u8>>,
}

/// A typing indicator or receipt a test device saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signal {
    /// `<chatstate>` from `sender`: `composing`, `recording` or `paused`.
    Typing { sender: String, state: String },
    /// A receipt of `kind` (`delivery`, `read`, ...) for `ids`.
    Receipt { kind: String, ids: Vec<String> },
    /// The server refused stanza `id` with error `code` (a nack).
    Refused { id: String, code: String },
}

/// A signal, the chat it came in (as this device sees it) and when.
#[derive(Debug, Clone)]
pub struct Seen {
    pub signal: Signal,
    pub chat: String,
    pub at: chrono::DateTime<chrono::Utc>,
}

#[derive(Default)]
struct Inbox {
    messages: Mutex<Vec<Received>>,
    /// The polls this device created, with their secrets (its owner may
    /// vote on them too).
    own_polls: Mutex<Vec<Received>>,
    signals: Mutex<Vec<Seen>>,
    arrived: Notify,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What a device's events go to: its inbox, and (a companion's requests
/// for a message it could not open) the task that answers them.
struct Collect {
    inbox: Arc<Inbox>,
    asked: mpsc::UnboundedSender<placeholders::Asked>,
    /// Whether such requests are answered.
    answers: Arc<AtomicBool>,
}

impl EventHandler for Collect {
    fn handle_event(&self, event: Arc<Event>) {
        match &*event {
            Event::Messages(batch) => {
                let mut messages = lock(&self.inbox.messages);
                for msg in batch.iter() {
                    let info = &msg.info;
                    let base = msg.message.get_base_message();
                    if let Some(asked) = placeholders::asked(&info.id, info.source.is_from_me, base)
                        && self.answers.load(Ordering::Relaxed)
                    {
                        // Nobody listens once the device is gone.
                        let _ = self.asked.send(asked);
                    }
                    // A copy of this account's own message names the chat
                    // as its sender addressed it.
                    let chat = match &info.source.recipient {
                        Some(recipient) if info.source.is_from_me => recipient,
                        _ => &info.source.chat,
                    };
                    messages.push(Received {
                        id: info.id.to_string(),
                        chat: chat.to_non_ad().to_string(),
                        sender: info.source.sender.to_non_ad().to_string(),
                        sender_device: info.source.sender.device,
                        at: chrono::Utc::now(),
                        from_me: info.source.is_from_me,
                        text: msg.message.text_content().map(str::to_string),
                        message: Box::new(base.clone()),
                        secret: secret_of(&msg.message),
                    });
                }
            }
            Event::ChatPresence(p) => lock(&self.inbox.signals).push(Seen {
                signal: Signal::Typing {
                    sender: p.source.sender.to_non_ad().to_string(),
                    state: format!("{:?}", p.state).to_lowercase(),
                },
                chat: p.source.chat.to_non_ad().to_string(),
                at: chrono::Utc::now(),
            }),
            Event::Receipt(r) => lock(&self.inbox.signals).push(Seen {
                signal: Signal::Receipt {
                    kind: format!("{:?}", r.r#type).to_lowercase(),
                    ids: r.message_ids.iter().map(|id| id.to_string()).collect(),
                },
                chat: r.source.chat.to_non_ad().to_string(),
                at: chrono::Utc::now(),
            }),
            Event::ServerAck(ack) => {
                let Some(code) = &ack.error else { return };
                lock(&self.inbox.signals).push(Seen {
                    signal: Signal::Refused {
                        id: ack.id.clone(),
                        code: code.clone(),
                    },
                    chat: ack.from.as_ref().map(|j| j.to_string()).unwrap_or_default(),
                    at: chrono::Utc::now(),
                });
            }
            _ => return,
        }
        self.inbox.arrived.notify_waiters();
    }
}

/// A primary device on the test network.
pub struct TestDevice {
    pub phone: String,
    pub client: Arc<Client>,
    identity: KeyPair,
    /// The account's app-state sync key, shared with every companion it links.
    app_state_key: [u8; 32],
    inbox: Arc<Inbox>,
    /// The chats it sends each companion it links (`None`: it sends none).
    past: Mutex<Option<Vec<SandboxPastMessage>>>,
    /// The labels `/sandbox/history` last gave it.
    labels: Mutex<Vec<SandboxPastLabel>>,
    /// The messages it sent a companion that asked for them
    /// ([`crate::placeholders`]).
    placeholders_answered: Arc<Mutex<Vec<String>>>,
    answers_placeholders: Arc<AtomicBool>,
    run: tokio::task::JoinHandle<()>,
    answering: tokio::task::JoinHandle<()>,
}

/// The push name a phone without one logs in with (see `TestDevice::start`).
const NAME_AT_LOGIN: &str = "Phone";

/// The id of the app-state key the phone shares.
const APP_STATE_KEY_ID: [u8; 4] = [0, 0, 0, 1];

impl Drop for TestDevice {
    fn drop(&mut self) {
        self.run.abort();
        self.answering.abort();
    }
}

impl TestDevice {
    /// Registers `phone`'s primary device on `net`, connects it and waits
    /// until it is logged in.
    pub async fn start(net: &WireNetwork, phone: &str, push_name: &str) -> anyhow::Result<Self> {
        let backend = InMemoryBackend::new();
        let mut device = Device::new();
        let noise: [u8; 32] = device
            .noise_key
            .public_key
            .public_key_bytes()
            .try_into()
            .map_err(|_| anyhow!("noise key length"))?;
        let lid = net.provision(phone, noise, push_name);
        // The account's privacy-token salt: the phone keeps it, and starts
        // its app state with it for the companions it links.
        let app_state_key: [u8; 32] = rand10::random();
        let salt = rand10::random::<[u8; 32]>().to_vec();
        net.set_salt(phone, salt.clone(), salt_patch(&salt, &app_state_key));
        device.nct_salt = Some(salt);
        // The phone keeps its app-state key as a phone does: the library
        // answers a companion that asks for it (an `AppStateSyncKeyRequest`).
        backend
            .set_sync_key(
                &APP_STATE_KEY_ID,
                AppStateSyncKey {
                    key_data: app_state_key.to_vec(),
                    fingerprint:
                        whatsapp_rust::waproto::codec::app_state_sync_key_fingerprint_to_vec(
                            &key_fingerprint(),
                        ),
                    timestamp: crate::nodes::now() as i64,
                },
            )
            .await
            .context("keep the app-state key")?;
        device.pn = Some(Jid::pn(phone));
        device.lid = Some(Jid::lid(lid));
        // A phone is where its account's app-state key comes from, but the
        // client library, written for companions, waits up to 10 s at login
        // for a key share when its device has no push name yet (it expects
        // the name by app state). An account without a name logs in with a
        // stand-in and drops it once connected.
        device.push_name = if push_name.is_empty() {
            NAME_AT_LOGIN.to_string()
        } else {
            push_name.to_string()
        };
        device.app_version_primary = VERSION.0;
        device.app_version_secondary = VERSION.1;
        device.app_version_tertiary = VERSION.2;
        backend.save(&device).await.context("save the device")?;
        let identity = device.identity_key;
        let inbox = Arc::new(Inbox::default());
        let (asked, requests) = mpsc::unbounded_channel();
        let answers_placeholders = Arc::new(AtomicBool::new(true));
        let collect = Collect {
            inbox: Arc::clone(&inbox),
            asked,
            answers: Arc::clone(&answers_placeholders),
        };
        let bot = Bot::builder()
            .with_backend(backend)
            .with_transport_factory(TokioWebSocketTransportFactory::new().with_url(net.url()))
            .with_http_client(LoopbackHttp(UreqHttpClient::new()))
            .with_runtime(TokioRuntime)
            .with_version(VERSION)
            .with_wanted_pre_key_count(20)
            .with_event_handler(collect)
            .skip_history_sync()
            .build()
            .await
            .map_err(|e| anyhow!("test device {phone}: {e}"))?;
        let client = bot.client();
        let run = tokio::spawn(bot.run());
        let held_in = Arc::clone(&inbox);
        let held: placeholders::Held =
            Arc::new(move |id: &str| lock(&held_in.messages).iter().find(|m| m.id == id).cloned());
        let placeholders_answered = Arc::new(Mutex::new(Vec::new()));
        let answering = placeholders::answer_all(
            Arc::clone(&client),
            phone.to_string(),
            held,
            Arc::clone(&placeholders_answered),
            requests,
        );
        client
            .wait_for_connected(CONNECT_WAIT)
            .await
            .map_err(|e| anyhow!("test device {phone} did not connect: {e}"))?;
        if push_name.is_empty() {
            client
                .persistence_manager()
                .process_command(DeviceCommand::SetPushName(String::new()))
                .await;
        }
        // Others reach it once its keys are on the server.
        if !net.watcher().keys_uploaded(phone, 0, CONNECT_WAIT).await {
            return Err(anyhow!("test device {phone} did not upload its keys"));
        }
        Ok(Self {
            phone: phone.to_string(),
            client,
            identity,
            app_state_key,
            inbox,
            past: Mutex::new(None),
            labels: Mutex::new(Vec::new()),
            placeholders_answered,
            answers_placeholders,
            run,
            answering,
        })
    }

    /// The identity key the phone signs its companions with.
    pub fn identity(&self) -> &KeyPair {
        &self.identity
    }

    /// Scans `qr` as this phone: the companion showing it is linked, and
    /// once it has logged in and uploaded its keys the phone shares its
    /// app-state key with it, as a real phone does. Returns the linked device.
    pub fn scan(&self, net: &WireNetwork, qr: &str) -> anyhow::Result<LinkedDevice> {
        let linked = net.scan(qr, &self.phone, &self.identity)?;
        self.share_keys_once_uploaded(net, linked.device);
        Ok(linked)
    }

    /// Types the pairing `code` a companion shows into this phone: that
    /// companion is linked, and gets the app-state key as after a scan.
    pub async fn enter_code(&self, net: &WireNetwork, code: &str) -> anyhow::Result<LinkedDevice> {
        let linked = net.enter_code(code, &self.phone, &self.identity).await?;
        self.share_keys_once_uploaded(net, linked.device);
        Ok(linked)
    }

    /// The chats this phone sends each companion it links from now on
    /// (history sync); an empty list sends a history without messages.
    pub fn set_history(&self, past: Vec<SandboxPastMessage>) {
        *lock(&self.past) = Some(past);
    }

    /// The labels this phone has from now on: its app state (`regular`)
    /// changed in one patch to carry them, on their chats, and no more of
    /// the ones it was given before. Its devices are told, as for any
    /// patch; a companion it links later learns them at its first sync.
    /// `lid_of` names a contact's LID by its phone.
    pub fn set_labels(
        &self,
        net: &WireNetwork,
        labels: Vec<SandboxPastLabel>,
        lid_of: &dyn Fn(&str) -> String,
    ) -> anyhow::Result<()> {
        let mut had = lock(&self.labels);
        let at = chrono::Utc::now().timestamp_millis();
        let mutations: Vec<crate::labels::Mutation> = PhoneLabel::changes(&had, &labels)
            .into_iter()
            .map(|l| crate::labels::mutation(&l.label_id, l.change, at, lid_of))
            .collect();
        if !mutations.is_empty() {
            self.change_app_state(net, "regular", &mutations)?;
        }
        *had = labels;
        Ok(())
    }

    fn share_keys_once_uploaded(&self, net: &WireNetwork, device: u16) {
        let watcher = net.watcher();
        let client = Arc::clone(&self.client);
        let phone = self.phone.clone();
        let key = self.app_state_key;
        let past = lock(&self.past).clone();
        // The contacts its chats name (the members who wrote in its groups
        // too), as the network knows them.
        let mut contacts = crate::history::Contacts {
            own_name: net.push_name_of(&phone),
            ..Default::default()
        };
        for contact in past
            .iter()
            .flatten()
            .filter_map(|m| m.chat.strip_suffix("@s.whatsapp.net").or(m.from.as_deref()))
        {
            if let Some(lid) = net.lid_of(contact) {
                contacts.lids.insert(contact.to_string(), lid);
            }
            if let Some(name) = net.push_name_of(contact) {
                contacts.names.insert(contact.to_string(), name);
            }
        }
        tokio::spawn(async move {
            if !watcher.keys_uploaded(&phone, device, CONNECT_WAIT).await {
                tracing::warn!(%phone, device, "the companion never uploaded its keys");
                return;
            }
            share_until_acknowledged(&watcher, &client, &phone, device, key).await;
            if let Some(past) = past
                && let Err(e) = crate::history::send(&client, &phone, &past, &contacts).await
            {
                tracing::warn!(%phone, device, error = %e, "history sync failed");
            }
        });
    }

    /// The app-state changes the account's companions sent (a chat marked
    /// unread, ...), decrypted with the key this phone shared with them.
    pub fn app_state_changes(
        &self,
        net: &WireNetwork,
    ) -> anyhow::Result<Vec<crate::app_state::Change>> {
        let mut changes = Vec::new();
        let sent = net
            .app_state_patches(&self.phone)
            .into_iter()
            .filter(|p| !crate::app_state::from_phone(p));
        for patch in sent {
            changes.extend(crate::app_state::decrypt(
                &patch,
                &APP_STATE_KEY_ID,
                &self.app_state_key,
            )?);
        }
        Ok(changes)
    }

    /// This phone changes the account's app state: `changes` to
    /// `collection`, as a patch its companions sync.
    pub fn change_app_state(
        &self,
        net: &WireNetwork,
        collection: &str,
        changes: &[(Vec<String>, wa::SyncActionValue)],
    ) -> anyhow::Result<()> {
        net.phone_changes_app_state(
            &self.phone,
            collection,
            changes,
            &APP_STATE_KEY_ID,
            &self.app_state_key,
        )
    }

    /// The device's JID as others address it.
    pub fn jid(&self) -> String {
        format!("{}@s.whatsapp.net", self.phone)
    }

    /// Sends `text` to `to` (a user JID); returns the message id.
    pub async fn send_text(&self, to: &str, text: &str) -> anyhow::Result<String> {
        let to: Jid = to.parse().map_err(|e| anyhow!("{to}: {e}"))?;
        let sent = self
            .client
            .send_text(to, text)
            .await
            .map_err(|e| anyhow!("send from {}: {e}", self.phone))?;
        Ok(sent.message_id.to_string())
    }

    /// Puts a group message stanza on the wire as a client that skips the
    /// library's checks would: to `group` (a `@g.us` JID) whether or not
    /// this account is a member, its sender-key ciphertext random bytes.
    /// Returns the stanza id; the server's answer comes as a `Signal`.
    pub async fn send_raw_group_message(&self, group: &str) -> anyhow::Result<String> {
        self.send_raw_message(group, vec![]).await
    }

    /// Puts a message stanza on the wire past the library: to `to` (a user
    /// or group JID), its ciphertext random bytes (a Signal message, or a
    /// sender-key one to a group), `extra` beside it (a `<tctoken>`, say).
    /// Returns the stanza id; the server's answer comes as a `Signal`.
    pub async fn send_raw_message(
        &self,
        to: &str,
        extra: Vec<whatsapp_rust::wacore_binary::node::Node>,
    ) -> anyhow::Result<String> {
        let id = format!("3EB0{}", hex::encode_upper(rand10::random::<[u8; 8]>()));
        let mut enc = crate::nodes::leaf_bytes("enc", rand10::random::<[u8; 48]>().to_vec());
        enc.attrs.insert("v", "2".to_string());
        let kind = if to.ends_with("@g.us") {
            "skmsg"
        } else {
            "msg"
        };
        enc.attrs.insert("type", kind.to_string());
        let mut kids = vec![enc];
        kids.extend(extra);
        let stanza = crate::nodes::element(
            "message",
            &[
                ("to", to.to_string()),
                ("type", "text".into()),
                ("id", id.clone()),
            ],
            kids,
        );
        self.client
            .send_node(stanza)
            .await
            .map_err(|e| anyhow!("raw send from {}: {e}", self.phone))?;
        Ok(id)
    }

    /// The phone gives its account's salt to the network and its companions
    /// again (after `WireNetwork::forget_salt`): a companion linked since
    /// hears of it and syncs it.
    pub fn share_salt(&self, net: &WireNetwork) {
        if let Some(salt) = self.salt() {
            net.set_salt(
                &self.phone,
                salt.clone(),
                salt_patch(&salt, &self.app_state_key),
            );
        }
    }

    /// The account's privacy-token salt, as this device holds it.
    pub fn salt(&self) -> Option<Vec<u8>> {
        self.client
            .persistence_manager()
            .get_device_snapshot()
            .nct_salt
            .clone()
    }

    /// The privacy token the account whose LID user part is `lid` issued to
    /// this one, and its timestamp, once this device has stored it.
    pub async fn token_from(&self, lid: &str) -> Option<(Vec<u8>, i64)> {
        let backend = self.client.persistence_manager().backend();
        let entry = backend.get_tc_token(lid).await.ok().flatten()?;
        (!entry.token.is_empty()).then_some((entry.token, entry.token_timestamp))
    }

    /// Asks the server an IQ of its own making: `<iq xmlns type to=server>`
    /// around `query`, past the library's own requests. The server's answer.
    pub async fn ask(
        &self,
        xmlns: &str,
        kind: &str,
        query: whatsapp_rust::wacore_binary::node::Node,
    ) -> Result<Arc<whatsapp_rust::wacore_binary::OwnedNodeRef>, whatsapp_rust::request::IqError>
    {
        let iq = crate::nodes::element(
            "iq",
            &[
                ("xmlns", xmlns.to_string()),
                ("type", kind.to_string()),
                ("to", crate::nodes::SERVER.into()),
                (
                    "id",
                    format!("ask-{}", hex::encode(rand10::random::<[u8; 6]>())),
                ),
            ],
            vec![query],
        );
        self.client.send_iq_node(iq, Some(CONNECT_WAIT)).await
    }

    /// The messages this phone sent a companion of its account that asked
    /// for them, not having opened them (a placeholder resend request).
    pub fn placeholders_answered(&self) -> Vec<String> {
        lock(&self.placeholders_answered).clone()
    }

    /// Whether this phone answers its companions' placeholder resend
    /// requests (on by default); off, it is as a phone that is offline, and
    /// a companion that could not open a message must get it by a retry.
    pub fn answer_placeholders(&self, on: bool) {
        self.answers_placeholders.store(on, Ordering::Relaxed);
    }

    /// What the device received so far.
    pub fn received(&self) -> Vec<Received> {
        lock(&self.inbox.messages).clone()
    }

    /// Remembers a poll this device created (`id`, sent to `chat`).
    pub(crate) fn created_poll(&self, id: &str, chat: &str, secret: Vec<u8>) {
        lock(&self.inbox.own_polls).push(Received {
            id: id.to_string(),
            chat: chat.to_string(),
            sender: self.jid(),
            sender_device: 0,
            at: chrono::Utc::now(),
            from_me: true,
            text: None,
            message: Box::default(),
            secret: Some(secret),
        });
    }

    /// The poll `id` when this device created it.
    pub fn own_poll(&self, id: &str) -> Option<Received> {
        lock(&self.inbox.own_polls)
            .iter()
            .find(|p| p.id == id)
            .cloned()
    }

    /// The typing indicators and receipts the device saw so far.
    pub fn seen(&self) -> Vec<Seen> {
        lock(&self.inbox.signals).clone()
    }

    /// Waits up to `deadline` for a typing indicator or receipt matching `test`.
    pub async fn wait_for_signal(
        &self,
        deadline: Duration,
        test: impl Fn(&Signal) -> bool,
    ) -> Option<Signal> {
        let until = tokio::time::Instant::now() + deadline;
        loop {
            let arrived = self.inbox.arrived.notified();
            if let Some(found) = lock(&self.inbox.signals).iter().find(|s| test(&s.signal)) {
                return Some(found.signal.clone());
            }
            if tokio::time::timeout_at(until, arrived).await.is_err() {
                return None;
            }
        }
    }

    /// Waits up to `deadline` for a received message matching `test`.
    pub async fn wait_for(
        &self,
        deadline: Duration,
        test: impl Fn(&Received) -> bool,
    ) -> Option<Received> {
        let until = tokio::time::Instant::now() + deadline;
        loop {
            let arrived = self.inbox.arrived.notified();
            if let Some(found) = self.received().into_iter().find(|r| test(r)) {
                return Some(found);
            }
            if tokio::time::timeout_at(until, arrived).await.is_err() {
                return None;
            }
        }
    }
}

/// The `messageSecret` of a message, on its outer or inner context.
fn secret_of(message: &wa::Message) -> Option<Vec<u8>> {
    [message, message.get_base_message()]
        .into_iter()
        .find_map(|m| m.message_context_info.as_option()?.message_secret.clone())
}

/// The `regular_high` patch that gives the account's companions its
/// privacy-token salt (whatsapp-rust `client/app_state.rs`, `nct_salt_sync`).
fn salt_patch(salt: &[u8], key: &[u8; 32]) -> Vec<u8> {
    let value = wa::SyncActionValue {
        nct_salt_sync_action: whatsapp_rust::buffa::MessageField::some(
            wa::sync_action_value::NctSaltSyncAction {
                salt: Some(salt.to_vec()),
            },
        ),
        timestamp: Some(crate::nodes::now() as i64 * 1000),
        ..Default::default()
    };
    crate::app_state::genesis_patch(
        "regular_high",
        &[(vec!["nct_salt_sync".to_string()], value)],
        &APP_STATE_KEY_ID,
        key,
    )
}

/// The fingerprint of the account's app-state key.
fn key_fingerprint() -> wa::message::AppStateSyncKeyFingerprint {
    wa::message::AppStateSyncKeyFingerprint {
        raw_id: Some(1),
        current_index: Some(0),
        device_indexes: vec![0],
    }
}

/// How long the phone waits for a companion to acknowledge the app-state
/// key before it shares the key again.
const KEY_SHARE_WAIT: Duration = Duration::from_secs(5);

/// How many times the phone shares the app-state key with a new companion
/// that does not acknowledge it.
const KEY_SHARES: u32 = 3;

/// Shares the app-state key with the account's devices until companion
/// `device` acknowledged it (at most [`KEY_SHARES`] times): a share the
/// phone's client encrypted before it heard of the new device does not
/// reach it, and the companion's initial sync waits for the key.
async fn share_until_acknowledged(
    watcher: &crate::Watcher,
    client: &Client,
    phone: &str,
    device: u16,
    key: [u8; 32],
) {
    for attempt in 1..=KEY_SHARES {
        match share_app_state_key(client, phone, key).await {
            Ok(id) => {
                tracing::debug!(%phone, device, %id, attempt, "app-state key shared");
                if watcher
                    .acknowledged(phone, device, &id, KEY_SHARE_WAIT)
                    .await
                {
                    return;
                }
                tracing::warn!(%phone, device, %id, attempt, "the companion did not acknowledge the app-state key");
            }
            Err(e) => {
                tracing::warn!(%phone, device, attempt, error = %e, "app-state key share failed");
            }
        }
    }
}

/// Sends the account's app-state sync key to its own other devices;
/// returns the message id.
async fn share_app_state_key(
    client: &Client,
    phone: &str,
    data: [u8; 32],
) -> anyhow::Result<String> {
    use whatsapp_rust::buffa::MessageField;
    use whatsapp_rust::waproto::whatsapp::message as m;
    let key = m::AppStateSyncKey {
        key_id: MessageField::some(m::AppStateSyncKeyId {
            key_id: Some(APP_STATE_KEY_ID.to_vec()),
        }),
        key_data: MessageField::some(m::AppStateSyncKeyData {
            key_data: Some(data.to_vec()),
            fingerprint: MessageField::some(key_fingerprint()),
            timestamp: Some(crate::nodes::now() as i64),
        }),
    };
    let share = m::ProtocolMessage {
        r#type: Some(m::protocol_message::Type::APP_STATE_SYNC_KEY_SHARE),
        app_state_sync_key_share: MessageField::some(m::AppStateSyncKeyShare { keys: vec![key] }),
        ..Default::default()
    };
    to_own_devices(client, phone, share).await
}

/// Sends the account's other devices (its companions) `protocol`, as a
/// phone does to share what they need; returns the message id.
pub(crate) async fn to_own_devices(
    client: &Client,
    phone: &str,
    protocol: whatsapp_rust::waproto::whatsapp::message::ProtocolMessage,
) -> anyhow::Result<String> {
    let message = wa::Message {
        protocol_message: whatsapp_rust::buffa::MessageField::some(protocol),
        ..Default::default()
    };
    let own: Jid = format!("{phone}@s.whatsapp.net")
        .parse()
        .map_err(|e| anyhow!("{e}"))?;
    let sent = client
        .send_message(own, message)
        .await
        .map_err(|e| anyhow!("{e}"))?;
    Ok(sent.message_id.to_string())
}
