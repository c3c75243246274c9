//! The test network with people on it: the server, and a primary device
//! (device 0, a real whatsapp-rust client) for every phone number that acts
//! on it, driven by the sandbox's control operations (`/sandbox/*` of the
//! sandbox contract). A session's phone scans its QR or types its code,
//! contacts register and write to it, and what its companion sent is read
//! back from the devices that received and decrypted it (`outbox`).
//!
//! A session is named by its phone number and device number (its JID
//! `<phone>:<device>@s.whatsapp.net`): the network knows no `clientId`; the
//! gateway's routes (`crate::sandbox_routes`) resolve one to the other.
//! `control` serves this over HTTP, so that one world outlives the gateway
//! processes of a test (and serves every process of a cluster).
pub mod control;
mod groups;
mod messages;
mod outbox;
mod outside;

use parley_network::test_network::PhoneLabel;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use parley_contract::wire::sandbox::{
    SandboxContact, SandboxHistory, SandboxHistorySet, SandboxPhoneInfo,
};
use serde::{Deserialize, Serialize};

use crate::{Avatar, TestDevice, WireNetwork, device_jid};

/// How long a contact's call waits for the network's word on its offer.
const OFFER_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

pub use groups::Group;

/// Why a control was refused: the sandbox contract's statuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// 400: the request cannot be carried out as asked.
    Invalid(String),
    /// 404: it names what does not exist.
    NotFound(String),
    /// 409: the session is not in a state for it.
    Conflict(String),
    /// 502: the network failed to carry it out.
    Failed(String),
}

impl Refusal {
    pub fn status(&self) -> u16 {
        match self {
            Refusal::Invalid(_) => 400,
            Refusal::NotFound(_) => 404,
            Refusal::Conflict(_) => 409,
            Refusal::Failed(_) => 502,
        }
    }

    pub fn message(&self) -> &str {
        match self {
            Refusal::Invalid(m)
            | Refusal::NotFound(m)
            | Refusal::Conflict(m)
            | Refusal::Failed(m) => m,
        }
    }
}

fn failed(e: impl std::fmt::Display) -> Refusal {
    Refusal::Failed(e.to_string())
}

/// A linked session, as the network knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRef {
    pub phone: String,
    pub device: u16,
}

impl SessionRef {
    /// From a linked session's JID, `<phone>:<device>@s.whatsapp.net`.
    pub fn from_jid(jid: &str) -> Option<SessionRef> {
        let (user, server) = jid.split_once('@')?;
        let (phone, device) = user.split_once(':')?;
        let device = device.parse().ok().filter(|d| *d > 0)?;
        (server == "s.whatsapp.net" && !phone.is_empty()).then(|| SessionRef {
            phone: phone.to_string(),
            device,
        })
    }

    pub fn jid(&self) -> String {
        device_jid(&self.phone, self.device, "s.whatsapp.net")
    }
}

/// A device the phone linked, as `/sandbox/link` answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Linked {
    pub jid: String,
    pub lid: String,
}

#[derive(Debug, Clone)]
struct Profile {
    name: String,
    about: String,
    avatar: Avatar,
    /// The picture is shown to the accounts this one wrote to only.
    for_contacts: bool,
    /// Calls ring only from the accounts this one wrote to.
    calls_from_contacts: bool,
    username: String,
    on_network: bool,
}

impl Default for Profile {
    fn default() -> Self {
        Profile {
            name: String::new(),
            about: String::new(),
            avatar: Avatar::None,
            for_contacts: false,
            calls_from_contacts: false,
            username: String::new(),
            on_network: true,
        }
    }
}

/// The test network and its people.
pub struct World {
    net: WireNetwork,
    /// Every phone's primary device, started when the phone first acts.
    phones: tokio::sync::Mutex<HashMap<String, Arc<TestDevice>>>,
    profiles: Mutex<HashMap<String, Profile>>,
}

impl World {
    pub fn new(net: WireNetwork) -> World {
        World {
            net,
            phones: tokio::sync::Mutex::default(),
            profiles: Mutex::default(),
        }
    }

    pub fn network(&self) -> &WireNetwork {
        &self.net
    }

    /// Waits until the session has uploaded its keys, so that a message to
    /// it reaches it: a companion uploads its prekeys just after it first
    /// connects, and a sender finds no keys before that (the server answers
    /// 404 for the device, and the sender leaves it out).
    pub async fn reachable(&self, session: &SessionRef) -> Result<(), Refusal> {
        const WAIT: std::time::Duration = std::time::Duration::from_secs(10);
        if !self.net.is_live(&session.phone, session.device) {
            return Err(Refusal::Conflict("the session is not connected".into()));
        }
        let watcher = self.net.watcher();
        if !watcher
            .keys_uploaded(&session.phone, session.device, WAIT)
            .await
        {
            return Err(Refusal::Conflict(
                "the session has not uploaded its keys".into(),
            ));
        }
        Ok(())
    }

    /// Waits until the session's device acknowledged message `id`: it has
    /// handed it to the gateway (and the gateway decided what to log).
    pub async fn acknowledged(&self, session: &SessionRef, id: &str) -> Result<(), Refusal> {
        const WAIT: std::time::Duration = std::time::Duration::from_secs(20);
        let watcher = self.net.watcher();
        if watcher
            .acknowledged(&session.phone, session.device, id, WAIT)
            .await
        {
            Ok(())
        } else {
            Err(Refusal::Failed(format!(
                "the session's device did not acknowledge message {id}"
            )))
        }
    }

    fn profiles(&self) -> std::sync::MutexGuard<'_, HashMap<String, Profile>> {
        self.profiles.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `phone`'s primary device, registered and connected if it was not.
    pub async fn phone(&self, phone: &str) -> Result<Arc<TestDevice>, Refusal> {
        let mut phones = self.phones.lock().await;
        if let Some(device) = phones.get(phone) {
            return Ok(Arc::clone(device));
        }
        let profile = self.profiles().get(phone).cloned().unwrap_or_default();
        let device = TestDevice::start(&self.net, phone, &profile.name)
            .await
            .map_err(failed)?;
        self.net
            .set_profile(phone, &profile.about, profile.avatar.clone());
        self.net
            .set_picture_for_contacts(phone, profile.for_contacts);
        self.net
            .set_calls_from_contacts(phone, profile.calls_from_contacts);
        self.net.set_username(phone, &profile.username);
        let device = Arc::new(device);
        phones.insert(phone.to_string(), Arc::clone(&device));
        self.profiles()
            .entry(phone.to_string())
            .or_default()
            .on_network = true;
        Ok(device)
    }

    /// The primary devices started so far.
    async fn devices(&self) -> Vec<Arc<TestDevice>> {
        self.phones.lock().await.values().cloned().collect()
    }

    fn lid(&self, phone: &str) -> String {
        self.net
            .lid_of(phone)
            .unwrap_or_else(|| parley_network_sandbox::store::derive_lid(phone, 0))
    }

    /// `phone` (called `name`, when given) scans `qr`, the QR code a session shows.
    pub async fn link(&self, phone: &str, name: &str, qr: &str) -> Result<Linked, Refusal> {
        if !name.is_empty() {
            self.profiles().entry(phone.to_string()).or_default().name = name.to_string();
            if self.net.is_registered(phone) {
                self.net.set_push_name(phone, name);
            }
        }
        let device = self.phone(phone).await?;
        let linked = device
            .scan(&self.net, qr)
            .map_err(|e| Refusal::Invalid(format!("qr is not a current QR code: {e}")))?;
        Ok(Linked {
            jid: linked.jid,
            lid: self.lid(phone),
        })
    }

    /// The phone that asked for a pairing code has `code` typed in.
    pub async fn enter_code(&self, code: &str) -> Result<Linked, Refusal> {
        let waiting = self.net.code_requests();
        let phone = match waiting.as_slice() {
            [phone] => phone.clone(),
            [] => return Err(Refusal::Invalid("no pairing code is waiting".into())),
            _ => {
                return Err(Refusal::Conflict(format!(
                    "pairing codes wait for {} phones at once; the test network tells them apart by phone only",
                    waiting.len()
                )));
            }
        };
        let device = self.phone(&phone).await?;
        let linked = device
            .enter_code(&self.net, code)
            .await
            .map_err(|e| Refusal::Invalid(format!("wrong or expired code: {e}")))?;
        Ok(Linked {
            jid: linked.jid,
            lid: self.lid(&phone),
        })
    }

    /// Registers or updates a phone (`/sandbox/contacts`, its phone already
    /// checked): only the fields given change.
    pub async fn contact(&self, patch: SandboxContact) -> Result<SandboxPhoneInfo, Refusal> {
        let phone = patch.phone.clone();
        let avatar = patch.avatar.as_deref().map(avatar).transpose()?;
        let profile = {
            let mut profiles = self.profiles();
            let profile = profiles.entry(phone.clone()).or_default();
            if let Some(name) = patch.name {
                profile.name = name;
            }
            if let Some(about) = patch.about {
                profile.about = about;
            }
            if let Some(avatar) = avatar {
                profile.avatar = avatar;
            }
            if let Some(privacy) = patch.avatar_privacy.as_deref() {
                profile.for_contacts = privacy == "contacts";
            }
            if let Some(privacy) = patch.call_privacy.as_deref() {
                profile.calls_from_contacts = privacy == "contacts";
            }
            if let Some(username) = patch.username {
                profile.username = username;
            }
            if let Some(on) = patch.on_network {
                profile.on_network = on;
            }
            profile.clone()
        };
        if profile.on_network {
            self.phone(&phone).await?;
            self.net.set_push_name(&phone, &profile.name);
            self.net.set_profile(&phone, &profile.about, profile.avatar);
            self.net
                .set_picture_for_contacts(&phone, profile.for_contacts);
            self.net
                .set_calls_from_contacts(&phone, profile.calls_from_contacts);
            self.net.set_username(&phone, &profile.username);
        } else if self.net.is_registered(&phone) {
            self.delete_account(&phone).await?;
        }
        Ok(SandboxPhoneInfo {
            lid: self.lid(&phone),
            jid: format!("{phone}@s.whatsapp.net"),
            phone,
        })
    }

    /// `phone`'s owner deletes the account (its primary device goes offline
    /// for good); refused while a session is linked by it.
    async fn delete_account(&self, phone: &str) -> Result<(), Refusal> {
        let mut phones = self.phones.lock().await;
        self.net
            .delete_account(phone)
            .map_err(|e| Refusal::Invalid(format!("{phone} cannot leave the network: {e}")))?;
        if let Some(device) = phones.remove(phone) {
            device.client.disconnect().await;
        }
        Ok(())
    }

    /// The chats `history.phone` sends each companion it links from now on
    /// (`/sandbox/history`, checked), and the labels its app state carries
    /// now: the phone and the contacts it writes with or labels are
    /// registered first, as they are on the network.
    pub async fn history(&self, history: SandboxHistory) -> Result<SandboxHistorySet, Refusal> {
        for contact in history.contacts() {
            self.phone(contact).await?;
        }
        let device = self.phone(&history.phone).await?;
        let (messages, labels) = (history.messages.len(), history.labels.len());
        device.set_history(history.messages);
        device
            .set_labels(&self.net, history.labels, &|p| self.lid(p))
            .map_err(failed)?;
        Ok(SandboxHistorySet {
            phone: history.phone,
            messages,
            labels,
        })
    }

    /// The contact `from` says it received (`delivered`), read or played
    /// the session's messages `ids` (sent to `group`, when given): its phone
    /// puts a `<receipt>` on the wire to the session's account (or the
    /// group, naming the session's account as `participant`), as a phone's
    /// client does (the library sends
    /// delivery receipts by itself; this one is sent past it, to say what a
    /// test asks when it asks).
    pub async fn receipt(
        &self,
        session: &SessionRef,
        from: &str,
        status: &str,
        ids: &[String],
        group: Option<&str>,
    ) -> Result<(), Refusal> {
        self.reachable(session).await?;
        let (first, rest) = ids
            .split_first()
            .ok_or_else(|| Refusal::Invalid("messageIds is empty".into()))?;
        let mut attrs = vec![("id", first.clone())];
        match group {
            None => attrs.push(("to", format!("{}@s.whatsapp.net", session.phone))),
            Some(group) => {
                self.member_of(session, group, from)?;
                // In a group the receipt names whose messages it is about,
                // as the group names members: by LID.
                attrs.push(("to", group.to_string()));
                attrs.push(("participant", format!("{}@lid", self.lid(&session.phone))));
            }
        }
        let device = self.phone(from).await?;
        if status != "delivered" {
            attrs.push(("type", status.to_string()));
        }
        let items: Vec<_> = rest
            .iter()
            .map(|id| crate::nodes::element("item", &[("id", id.clone())], vec![]))
            .collect();
        let kids = if items.is_empty() {
            vec![]
        } else {
            vec![crate::nodes::element("list", &[], items)]
        };
        device
            .client
            .send_node(crate::nodes::element("receipt", &attrs, kids))
            .await
            .map_err(failed)
    }

    /// The contact `from` types (`composing`), records a voice note
    /// (`recording`) or stops (`paused`) in its chat with the session, or
    /// in `group`: its phone's client sends a `<chatstate>` to the
    /// session's account (or the group), which the network relays to the
    /// connected devices concerned.
    pub async fn typing(
        &self,
        session: &SessionRef,
        from: &str,
        state: &str,
        group: Option<&str>,
    ) -> Result<(), Refusal> {
        use whatsapp_rust::features::ChatStateType;
        self.reachable(session).await?;
        let state = match state {
            "composing" => ChatStateType::Composing,
            "recording" => ChatStateType::Recording,
            "paused" => ChatStateType::Paused,
            other => return Err(Refusal::Invalid(format!("an unknown typing state {other}"))),
        };
        if let Some(group) = group {
            self.member_of(session, group, from)?;
        }
        let device = self.phone(from).await?;
        let to = match group {
            Some(group) => group.to_string(),
            None => format!("{}@s.whatsapp.net", session.phone),
        };
        let to: whatsapp_rust::Jid = to.parse().map_err(|e| Refusal::Invalid(format!("{e}")))?;
        device
            .client
            .chatstate()
            .send(&to, state)
            .await
            .map_err(failed)
    }

    /// The contact `from` calls the session's account (video when
    /// `video`; `group`'s call when given): its phone's client puts a
    /// `<call>` holding an `<offer>` on the wire, with the privacy token
    /// the account issued it when it holds one (as whatsapp-rust does),
    /// which the network passes to the account's connected devices; the
    /// call's id. An offer the network refused (463: the account takes
    /// calls from its contacts only) is a conflict.
    pub async fn call(
        &self,
        session: &SessionRef,
        from: &str,
        video: bool,
        group: Option<&str>,
    ) -> Result<String, Refusal> {
        self.reachable(session).await?;
        if let Some(group) = group {
            self.member_of(session, group, from)?;
        }
        let device = self.phone(from).await?;
        let call_id = parley_network::outgoing::new_call_id();
        let mut attrs = vec![
            ("call-id", call_id.clone()),
            ("call-creator", format!("{}@lid", self.lid(from))),
        ];
        if let Some(group) = group {
            attrs.push(("group-jid", group.to_string()));
        }
        let codec = |rate: &str| {
            crate::nodes::element(
                "audio",
                &[("enc", "opus".into()), ("rate", rate.into())],
                vec![],
            )
        };
        let mut media = Vec::new();
        if let Some(token) = self.token_for(&device, &session.phone).await {
            media.push(crate::nodes::leaf_bytes("privacy", token));
        }
        media.extend([codec("16000"), codec("8000")]);
        if video {
            media.push(crate::nodes::element(
                "video",
                &[("enc", "vp8".into())],
                vec![],
            ));
        }
        let offer = crate::nodes::element("offer", &attrs, media);
        self.signal(session, &device, offer).await?;
        match self.net.offer_rang(&call_id, OFFER_WAIT).await {
            Some(true) => Ok(call_id),
            Some(false) => Err(Refusal::Conflict(format!(
                "error 463: the session's account takes calls from its contacts only, and {from} holds no privacy token from it (the account never wrote to it)"
            ))),
            None => Err(Refusal::Failed(
                "the network did not answer the call".into(),
            )),
        }
    }

    /// The privacy token `phone`'s account issued `device`'s, as its client
    /// stored it (by the issuer's LID).
    async fn token_for(&self, device: &TestDevice, phone: &str) -> Option<Vec<u8>> {
        device
            .token_from(&self.lid(phone))
            .await
            .map(|(token, _)| token)
    }

    /// The contact `from` ends its call `call_id` before the session
    /// answered (`reason` as the network says it; `None`: hung up): a
    /// `<terminate>` to the account's devices.
    pub async fn end_call(
        &self,
        session: &SessionRef,
        from: &str,
        call_id: &str,
        reason: Option<&str>,
    ) -> Result<(), Refusal> {
        self.reachable(session).await?;
        let device = self.phone(from).await?;
        let mut attrs = vec![
            ("call-id", call_id.to_string()),
            ("call-creator", format!("{}@lid", self.lid(from))),
        ];
        if let Some(reason) = reason {
            attrs.push(("reason", reason.to_string()));
        }
        let terminate = crate::nodes::element("terminate", &attrs, vec![]);
        self.signal(session, &device, terminate).await
    }

    /// The session's phone changes its label `label_id` in the account's
    /// app state (`regular`): puts it on `chat` (a JID; a contact's by
    /// phone number is named by its LID, as the phone names it) or takes
    /// it off, deletes it, or saves it as `name` and `color`.
    pub async fn phone_label(
        &self,
        session: &SessionRef,
        label: PhoneLabel,
    ) -> Result<(), Refusal> {
        self.reachable(session).await?;
        let phone = self.phone(&session.phone).await?;
        let at = chrono::Utc::now().timestamp_millis();
        let change = crate::labels::mutation(&label.label_id, label.change, at, &|p| self.lid(p));
        phone
            .change_app_state(&self.net, "regular", &[change])
            .map_err(failed)
    }

    /// `device` puts a `<call>` holding `action` on the wire, to the
    /// session's account.
    async fn signal(
        &self,
        session: &SessionRef,
        device: &TestDevice,
        action: whatsapp_rust::wacore_binary::node::Node,
    ) -> Result<(), Refusal> {
        let attrs = [
            ("to", format!("{}@s.whatsapp.net", session.phone)),
            ("id", device.client.generate_message_id()),
        ];
        let stanza = crate::nodes::element("call", &attrs, vec![action]);
        device.client.send_node(stanza).await.map_err(failed)
    }

    /// The contact `from` comes online (`available`) or goes offline: its
    /// phone puts a `<presence>` on the wire, which the network passes to
    /// the sockets subscribed to it.
    pub async fn presence(
        &self,
        session: &SessionRef,
        from: &str,
        available: bool,
    ) -> Result<(), Refusal> {
        self.reachable(session).await?;
        let device = self.phone(from).await?;
        let kind = if available {
            "available"
        } else {
            "unavailable"
        };
        let stanza = crate::nodes::element("presence", &[("type", kind.into())], vec![]);
        device.client.send_node(stanza).await.map_err(failed)
    }

    /// Refuses `from` unless `group` holds both it and the session's phone,
    /// as the sandbox answers.
    fn member_of(&self, session: &SessionRef, group: &str, from: &str) -> Result<(), Refusal> {
        let members = self.session_group_members(session, group)?;
        if members.iter().any(|(p, _)| p == from) {
            Ok(())
        } else {
            Err(Refusal::Conflict(format!("{from} is not a member")))
        }
    }

    /// The phone removes the session's device from its linked devices.
    pub fn unlink(&self, session: &SessionRef) -> Result<(), Refusal> {
        if !self
            .net
            .devices_of(&session.phone)
            .contains(&session.device)
        {
            return Err(Refusal::Conflict(format!(
                "{} is not a linked device",
                session.jid()
            )));
        }
        self.net.unlink(&session.phone, session.device);
        Ok(())
    }

    /// Makes the network misbehave for the session (`op` of the sandbox
    /// contract, `count` times).
    /// `pair-code` for the session showing `qr`: the next `count` pairing-code
    /// requests of its socket (the one the QR names) get no code.
    pub fn code_fault(&self, qr: &str, count: u32) -> Result<(), Refusal> {
        let qr = crate::pairing::Qr::parse(qr)
            .map_err(|e| Refusal::Invalid(format!("qr is not a pairing QR code: {e}")))?;
        self.net.arm_code_fault(qr.noise, count);
        Ok(())
    }

    pub fn fault(&self, session: &SessionRef, op: &str, count: u32) -> Result<(), Refusal> {
        if let Some(fault) = crate::faults::Fault::of_op(op) {
            self.net
                .arm_fault(&session.phone, session.device, fault, count);
            return Ok(());
        }
        match op {
            "drop" => {
                if self.net.drop_socket(&session.phone, session.device) {
                    Ok(())
                } else {
                    Err(Refusal::Conflict(
                        "drop: the session has no live connection".into(),
                    ))
                }
            }
            other => Err(Refusal::Invalid(format!(
                "the test network does not model the {other} fault yet (docs/sandbox.md)"
            ))),
        }
    }
}

/// An avatar as `/sandbox/contacts` names it.
fn avatar(raw: &str) -> Result<Avatar, Refusal> {
    use base64::Engine;
    Ok(match raw {
        "none" => Avatar::None,
        "hidden" => Avatar::Hidden,
        data => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data)
                .map_err(|_| {
                    Refusal::Invalid("avatar must be none, hidden or a base64 PNG/JPEG".into())
                })?;
            let is_image = bytes.starts_with(b"\x89PNG") || bytes.starts_with(&[0xFF, 0xD8, 0xFF]);
            if !is_image {
                return Err(Refusal::Invalid(
                    "avatar must be a PNG or JPEG image".into(),
                ));
            }
            Avatar::Image(bytes)
        }
    })
}
