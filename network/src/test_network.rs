//! The test control of a network: what the sandbox's control API
//! (`/sandbox/*`, docs/sandbox.md) asks of the network behind a session. The
//! simulated network implements it (`parley-network-sandbox`), and so does
//! the wire-level test network in its test build; one set of routes serves
//! both. The routes check authorization, the session and every body before
//! they ask, so an implementation gets checked values and answers what only
//! the network knows (a session not linked, a QR no longer shown, an unknown
//! group).
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use parley_contract::error::ApiError;
use parley_contract::wire::sandbox::{
    Outbox, SandboxContact, SandboxGroupChanged, SandboxGroupCreated, SandboxHistory,
    SandboxHistorySet, SandboxLinked, SandboxMessage, SandboxMessageSent, SandboxPastLabel,
    SandboxPhoneInfo,
};
use parley_model::address::MessageId;
use parley_model::address::{Jid, PhoneNumber};
use parley_model::ids::ClientId;
use parley_model::inbound::{GroupAction, GroupSetting, ReceiptStatus, TypingState};
use parley_model::recipients::Recipient;

/// A group to create, checked: its subject, its members (phones) and the
/// admins among them (or the session's own phone).
#[derive(Debug, Clone, PartialEq)]
pub struct NewGroup {
    pub subject: String,
    pub participants: Vec<PhoneNumber>,
    pub admins: Vec<PhoneNumber>,
}

/// A change of a group's members, checked: the admin who makes it, what it
/// does, and the members it concerns.
#[derive(Debug, Clone, PartialEq)]
pub struct MembersChange {
    pub by: PhoneNumber,
    pub action: GroupAction,
    pub participants: Vec<PhoneNumber>,
}

/// A change of a group's own settings, checked (one setting), and the
/// member who makes it (`None`: the session's own phone).
#[derive(Debug, Clone, PartialEq)]
pub struct SettingChange {
    pub setting: GroupSetting,
    pub by: Option<PhoneNumber>,
}

/// A contact's receipt, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct NewReceipt {
    pub from: PhoneNumber,
    pub status: ReceiptStatus,
    pub message_ids: Vec<MessageId>,
    /// The group the messages went to, when they went to one.
    pub group: Option<Jid>,
}

/// A contact's chat state, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTyping {
    pub from: PhoneNumber,
    pub state: TypingState,
    /// The group it is in (`None`: the contact's chat with the session).
    pub group: Option<Jid>,
}

/// A contact's call to the session, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct NewCall {
    pub from: PhoneNumber,
    pub video: bool,
    /// The group the call is for (both are members), when it is a group call.
    pub group: Option<Jid>,
}

/// A chat label change the session's phone makes, checked: the chat as a
/// phone number or a group JID (the network names a contact's chat by its
/// LID).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhoneLabel {
    pub label_id: String,
    pub change: PhoneLabelChange,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum PhoneLabelChange {
    Saved { name: String, color: i32 },
    Deleted,
    Chat { chat: Recipient, labeled: bool },
}

impl PhoneLabel {
    /// The changes that take a phone's labels from `before` to `now` (both
    /// checked, as `/sandbox/history` passes them on): every label of `now`
    /// saved and put on its chats, the chats a kept label left taken off,
    /// the labels gone deleted.
    pub fn changes(before: &[SandboxPastLabel], now: &[SandboxPastLabel]) -> Vec<PhoneLabel> {
        use std::collections::BTreeSet;
        let chats =
            |l: &SandboxPastLabel| -> BTreeSet<String> { l.chats.iter().cloned().collect() };
        let change = |label_id: &str, change| PhoneLabel {
            label_id: label_id.to_string(),
            change,
        };
        let mut out = Vec::new();
        for label in now {
            out.push(change(
                &label.label_id,
                PhoneLabelChange::Saved {
                    name: label.name.clone(),
                    color: i32::try_from(label.color).unwrap_or_default(),
                },
            ));
            let had = before
                .iter()
                .find(|b| b.label_id == label.label_id)
                .map(chats)
                .unwrap_or_default();
            let has = chats(label);
            let on = has.iter().map(|c| (c, true));
            let off = had.difference(&has).map(|c| (c, false));
            for (chat, labeled) in on.chain(off) {
                if let Ok(chat) = Recipient::parse("chat", chat) {
                    out.push(change(
                        &label.label_id,
                        PhoneLabelChange::Chat { chat, labeled },
                    ));
                }
            }
        }
        for gone in before
            .iter()
            .filter(|b| !now.iter().any(|l| l.label_id == b.label_id))
        {
            out.push(change(&gone.label_id, PhoneLabelChange::Deleted));
        }
        out
    }
}

/// The end of a contact's call before the session answered it, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct CallEnd {
    pub from: PhoneNumber,
    pub call_id: String,
    /// What the network says of it (one of [`CALL_END_REASONS`]); `None`:
    /// the caller hung up.
    pub reason: Option<String>,
}

/// Why a call may end, as the network says it to the callee's devices.
pub const CALL_END_REASONS: &[&str] = &["timeout", "accepted_elsewhere", "rejected_elsewhere"];

/// What the control routes ask of a test network. Every method but
/// [`TestNetwork::contact`] and [`TestNetwork::history`] acts for a session
/// the gateway knows.
#[async_trait]
pub trait TestNetwork: Send + Sync {
    /// The session whose QR code is `qr` now; 400 when none shows it.
    async fn qr_owner(&self, qr: &str) -> Result<ClientId, ApiError>;

    /// The test phone `phone` scans the session's QR code (`qr`, when the
    /// caller names the code it saw, must be the current one) and the
    /// session is linked as that phone's device.
    async fn link(
        &self,
        id: &ClientId,
        phone: PhoneNumber,
        name: String,
        qr: Option<String>,
    ) -> Result<SandboxLinked, ApiError>;

    /// The session's phone enters the pairing `code` the session showed.
    async fn enter_code(&self, id: &ClientId, code: String) -> Result<SandboxLinked, ApiError>;

    /// The phone removes the session's device.
    async fn unlink(&self, id: &ClientId) -> Result<(), ApiError>;

    /// The next `count` operations of kind `op` fail (`drop` acts at once).
    async fn fault(&self, id: &ClientId, op: String, count: u32) -> Result<(), ApiError>;

    /// A phone on the network, created or changed (`contact.phone` in
    /// digits).
    async fn contact(&self, contact: SandboxContact) -> Result<SandboxPhoneInfo, ApiError>;

    /// The chats `history.phone` holds (checked: digits, chats as JIDs,
    /// `at` in RFC 3339, every `messageId` set), which it sends each device it
    /// links from now on.
    async fn history(&self, history: SandboxHistory) -> Result<SandboxHistorySet, ApiError>;

    /// What the session put on the network, oldest first: into the chat
    /// `to` names (a JID, a user-part or a `+phone`), at or after `since`.
    async fn outbox(
        &self,
        id: &ClientId,
        to: Option<String>,
        since: Option<DateTime<Utc>>,
    ) -> Result<Outbox, ApiError>;

    /// Someone on the network sends the session `message`, answered once
    /// the session has taken it in.
    async fn message(
        &self,
        id: &ClientId,
        message: SandboxMessage,
    ) -> Result<SandboxMessageSent, ApiError>;

    /// A group the session's phone is in.
    async fn create_group(
        &self,
        id: &ClientId,
        group: NewGroup,
    ) -> Result<SandboxGroupCreated, ApiError>;

    /// An admin of `jid`, a group the session's phone is in, changes its
    /// members; the session's device is told as a member's devices are.
    async fn change_members(
        &self,
        id: &ClientId,
        jid: Jid,
        change: MembersChange,
    ) -> Result<SandboxGroupChanged, ApiError>;

    /// The contact `receipt.from` says it received, read or played the
    /// session's messages `receipt.message_ids`.
    async fn receipt(&self, id: &ClientId, receipt: NewReceipt) -> Result<(), ApiError>;

    /// The contact `typing.from` types, records or stops in its chat with
    /// the session.
    async fn typing(&self, id: &ClientId, typing: NewTyping) -> Result<(), ApiError>;

    /// The contact `from` comes online (`available`) or goes offline; the
    /// session hears it when it subscribed to `from`'s presence (which the
    /// network lets through only once `from` wrote to the session's phone).
    async fn presence(
        &self,
        id: &ClientId,
        from: PhoneNumber,
        available: bool,
    ) -> Result<(), ApiError>;

    /// The contact `call.from` calls the session's account: the network
    /// rings its devices; the call's id.
    async fn call(&self, id: &ClientId, call: NewCall) -> Result<String, ApiError>;

    /// The contact `end.from` ends its call `end.call_id`: the network
    /// tells the account's devices to stop ringing.
    async fn end_call(&self, id: &ClientId, end: CallEnd) -> Result<(), ApiError>;

    /// The session's phone changes a chat label: the account's devices see
    /// it in their app state.
    async fn phone_label(&self, id: &ClientId, label: PhoneLabel) -> Result<(), ApiError>;

    /// A member of `jid`, a group the session's phone is in (the session's
    /// phone unless `change.by` names another), changes one of its settings
    /// (its subject, description, announcement or locked mode, disappearing
    /// messages), as the network lets it: 409 when it is not a member, or
    /// not an admin where only admins may; the session's device is told as
    /// a member's devices are.
    async fn update_group(
        &self,
        id: &ClientId,
        jid: Jid,
        change: SettingChange,
    ) -> Result<(), ApiError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(id: &str, chats: &[&str]) -> SandboxPastLabel {
        SandboxPastLabel {
            label_id: id.into(),
            name: format!("L{id}"),
            color: 1,
            chats: chats.iter().map(|c| c.to_string()).collect(),
        }
    }

    #[test]
    fn a_phones_labels_are_saved_put_on_chats_and_the_ones_gone_undone() {
        let (a, b) = ("4915100000002@s.whatsapp.net", "120363000000000001@g.us");
        let before = [label("1", &[a, b]), label("2", &[])];
        let now = [label("1", &[b])];
        let chat = |jid: &str, labeled| PhoneLabelChange::Chat {
            chat: Recipient::parse("chat", jid).unwrap(),
            labeled,
        };
        let saved = PhoneLabelChange::Saved {
            name: "L1".into(),
            color: 1,
        };
        let expected: Vec<PhoneLabel> = [
            ("1", saved),
            ("1", chat(b, true)),
            ("1", chat(a, false)),
            ("2", PhoneLabelChange::Deleted),
        ]
        .into_iter()
        .map(|(id, change)| PhoneLabel {
            label_id: id.into(),
            change,
        })
        .collect();
        assert_eq!(PhoneLabel::changes(&before, &now), expected);
    }
}
