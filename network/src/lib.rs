//! The network port: what a session needs from the messaging network. The
//! `sandbox` adapter simulates it; the `whatsapp` adapter maps it onto
//! whatsapp-rust (its `Bot` events become [`NetworkEvent`]s, its client calls
//! become [`Connection`] methods).
pub mod contacts;
#[cfg(feature = "contract")]
pub mod contract;
pub mod outgoing;
pub mod poll;
pub mod proxy;
pub mod test_network;
pub mod unavailable;

use async_trait::async_trait;
pub use parley_contract::spool::ByteStream;
pub use parley_model::address::{Jid, MessageId, PhoneNumber};
pub use parley_model::ids::ClientId;
pub use parley_model::inbound::CallRef;
use parley_model::inbound::InboundMessage;
use parley_model::media::MediaDownload;
pub use parley_model::outgoing::Label;
use tokio::sync::mpsc;

pub use contacts::{
    ContactName, CreatedGroup, GroupMetadata, GroupParticipant, NumberCheck, ParticipantAction,
    ParticipantChange, Picture, PictureFile, PictureLookup, QueryError, UserInfo,
};
pub use outgoing::{MediaFile, MediaInfo, MediaKind, MessageRef, Outgoing, SentMessage, StatusOut};
pub use poll::option_hash;
pub use proxy::{Proxy, ProxyError, ProxyFault, ProxyKind};

/// Why the network refused or failed an operation.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum NetworkError {
    /// The network answered no (a send rejected, no pairing code issued...).
    #[error("network rejected: {0}")]
    Rejected(String),
    /// The session is not linked (or was logged out).
    #[error("not paired")]
    NotPaired,
    /// The network could not be reached.
    #[error("network unreachable: {0}")]
    Unreachable(String),
    /// The session's own proxy (`/set-proxy`) failed; the deployment's
    /// proxy failing is [`NetworkError::Unreachable`].
    #[error("the session's proxy failed: {0}")]
    Proxy(ProxyError),
}

/// Why the network refuses a message to a group: the session's account is
/// not (or no longer) in it. Every adapter names it so in its `Rejected`.
pub const NOT_A_MEMBER: &str = "this account is not a member of the group";

/// Why the network refuses a message to a group in announcement mode: only
/// its admins send, and the session's account is not one. Every adapter
/// names it so in its `Rejected`.
pub const ADMINS_ONLY: &str = "only the group's admins may send to it, and this account is not one";

/// Why the network refuses a 1:1 message for want of a privacy token (its
/// error 463). Every adapter names it so in its `Rejected`.
pub const NO_PRIVACY_TOKEN: &str = "the network refused the message (error 463: the recipient \
     accepts messages only with a privacy token, and this session has none for them: it gets \
     one when they write to it, or its account's salt by app state after linking)";

/// Stable, machine-readable reasons a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DisconnectReason {
    /// The connection dropped; reconnecting is expected to work.
    ConnectionLost,
    /// The linked phone removed this device (network-side logout).
    LoggedOut,
    /// Another client connected with the same device.
    StreamReplaced,
    /// The network banned the account for a while.
    TemporaryBan,
    /// This process closed the connection (handover, shutdown).
    Closed,
}

impl DisconnectReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DisconnectReason::ConnectionLost => "connection-lost",
            DisconnectReason::LoggedOut => "logged-out",
            DisconnectReason::StreamReplaced => "stream-replaced",
            DisconnectReason::TemporaryBan => "temporary-ban",
            DisconnectReason::Closed => "closed",
        }
    }

    /// Whether the session cannot come back without a new pairing.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            DisconnectReason::LoggedOut | DisconnectReason::TemporaryBan
        )
    }
}

/// The session's own identity once linked.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Identity {
    /// `<phone>:<device>@s.whatsapp.net`.
    pub jid: Jid,
    /// LID user-part.
    pub lid: String,
    pub push_name: String,
}

/// What the network tells a session.
#[derive(Debug, Clone, PartialEq)]
pub enum NetworkEvent {
    /// A (new) QR code to show; the previous one is no longer valid.
    Qr { code: String },
    /// Pairing completed (by QR scan or phone code): the device is linked,
    /// not yet online. `Connected` follows once it is (the real network's
    /// client logs in again first; until then it can send nothing).
    Paired(Identity),
    /// Online with a linked device.
    Connected(Identity),
    /// The connection ended; see the reason.
    Disconnected(DisconnectReason),
    /// A message activity: received, or sent from the linked phone itself;
    /// also the notices (a group's changes, receipts, chat states) a session
    /// delivers when it turned them on (a group's new subject is taken by
    /// every session, to name the group in its events).
    Message(Box<InboundMessage>),
    /// Messages of the account's past that its phone sent the new device
    /// (history sync, after pairing): the hosted inbox's, never the
    /// webhook's. A sync comes in several of these, each at most
    /// [`HISTORY_CHUNK`] messages.
    History(Vec<InboundMessage>),
    /// The names the account's contacts gave themselves, as its phone
    /// knows them (history sync, after pairing): the session's contacts
    /// and the hosted inbox's unnamed rooms take them. A name may come
    /// first by its LID alone, then again with the phone once the network
    /// paired them.
    ContactNames(Vec<ContactName>),
}

/// The most messages one [`NetworkEvent::History`] carries.
pub const HISTORY_CHUNK: usize = 500;

/// What one session knows when it connects.
#[derive(Debug, Clone)]
pub struct SessionContext {
    pub client_id: ClientId,
    /// The lease's fencing token: every write of network state carries it.
    pub fence: u64,
    /// The worker that connects (recorded by the network's connection log).
    pub pod_name: String,
    /// The session's own proxy (`/set-proxy`), its address checked by the
    /// egress guard and pinned: the connection and its media requests go
    /// through it instead of the deployment's. `None`: the deployment's.
    pub proxy: Option<Proxy>,
}

/// A live connection of one session. Events arrive on the receiver handed out by
/// [`Network::connect`]; it closes when the connection is gone.
#[async_trait]
pub trait Connection: Send + Sync {
    /// Asks for a pairing code for `phone`.
    async fn pair_phone(&self, phone: &PhoneNumber) -> Result<String, NetworkError>;

    /// Logs the device out on the network side (the session is then unpaired).
    async fn logout(&self) -> Result<(), NetworkError>;

    /// Closes the connection without logging out (handover, shutdown).
    async fn close(&self);

    /// The session's answer for a received message (`chat`, `id` as in its
    /// [`NetworkEvent::Message`]): its event is in the log (`Ok`), or could
    /// not be written (`Err`). A network that acknowledges messages
    /// acknowledges this one only on `Ok`; on `Err` it delivers it again.
    async fn persisted(&self, chat: &Jid, id: &MessageId, outcome: Result<(), String>);

    // Sends. Every adapter implements every method; an operation a network
    // cannot do is refused by its own adapter, with [`unsupported`].

    /// The LID user-part the network knows for `phone`, `None` when it knows
    /// none (then messages go to the phone JID).
    async fn lid_for_phone(&self, phone: &PhoneNumber) -> Result<Option<String>, NetworkError>;

    /// Sends a message of any kind (media are uploaded first). A reaction
    /// with an empty `emoji` removes this session's reaction; an edit
    /// replaces the text of this session's message `target_id`.
    async fn send(&self, message: Outgoing) -> Result<SentMessage, NetworkError>;

    /// Deletes `target` for everyone in `chat`.
    async fn revoke(&self, chat: &Jid, target: &MessageRef) -> Result<SentMessage, NetworkError>;

    /// Deletes the session's status update `target` for `audience`, the
    /// contacts it was shown to (the deletion is encrypted to them).
    async fn revoke_status(
        &self,
        target: &MessageId,
        audience: &[Jid],
    ) -> Result<SentMessage, NetworkError>;

    /// Deletes `target` on this account's devices only (an app-state patch).
    async fn delete_for_me(&self, chat: &Jid, target: &MessageRef) -> Result<(), NetworkError>;

    /// Shows (`true`) or clears the typing indicator in `chat`.
    async fn typing(&self, chat: &Jid, composing: bool) -> Result<(), NetworkError>;

    /// Asks for the presence of the user `who` (online, offline, last seen)
    /// while this connection lasts; it arrives as `Content::Presence`
    /// messages. The network lets only a user's contacts see it: one who
    /// never wrote to the session's account stays silent.
    async fn subscribe_presence(&self, who: &Jid) -> Result<(), NetworkError>;

    /// Tells the account's contacts that it is online (`available`) or
    /// offline, as the session's device; the network passes it to the
    /// devices that subscribed to the account's presence.
    async fn set_presence(&self, available: bool) -> Result<(), NetworkError>;

    /// Rejects the call `call` that rings the account's devices (the
    /// network tells the caller; nothing answers).
    async fn reject_call(&self, call: &CallRef) -> Result<(), NetworkError>;

    /// Sends read receipts for `message_ids` in `chat`.
    async fn mark_read(&self, chat: &Jid, message_ids: &[MessageId]) -> Result<(), NetworkError>;

    /// Flags `chat` as unread on the linked phone (an app-state patch).
    async fn mark_unread(&self, chat: &Jid) -> Result<(), NetworkError>;

    /// Creates or changes the account's label `label` (an app-state patch,
    /// seen by the account's other devices).
    async fn save_label(&self, label: &Label) -> Result<(), NetworkError>;

    /// Deletes the account's label `label_id` (an app-state patch).
    async fn delete_label(&self, label_id: &str) -> Result<(), NetworkError>;

    /// Puts the label `label_id` on `chat`, or takes it off (an app-state patch).
    async fn label_chat(
        &self,
        chat: &Jid,
        label_id: &str,
        labeled: bool,
    ) -> Result<(), NetworkError>;

    /// Downloads and decrypts the file an inbound media message points at, as
    /// a stream of chunks (never the whole file in memory); `kind` decides the
    /// keys the file was encrypted with. A file longer than `max_bytes` fails
    /// (before any byte is read when its declared length says so, else once
    /// the count passes it), and so does one that does not match its hashes:
    /// the stream's last item is then an error, so whoever stores it aborts.
    async fn download_media(
        &self,
        kind: MediaKind,
        media: &MediaDownload,
        max_bytes: u64,
    ) -> Result<ByteStream, NetworkError>;

    // Contacts and groups (whatsapp-rust: `contacts()` and `groups()` features).

    /// What the network tells about the user `jid` (a LID or phone JID);
    /// `None` when it knows no such user.
    async fn user_info(&self, jid: &Jid) -> Result<Option<UserInfo>, QueryError>;

    /// Whether `phone` is registered, and its LID.
    async fn check_number(&self, phone: &PhoneNumber) -> Result<NumberCheck, QueryError>;

    /// The profile picture of `jid` (user or group): the 96 px preview or the
    /// full picture.
    async fn profile_picture(&self, jid: &Jid, preview: bool) -> Result<PictureLookup, QueryError>;

    /// The bytes behind a picture's link.
    async fn download_picture(&self, picture: &Picture) -> Result<PictureFile, QueryError>;

    /// Every group the account is a member of.
    async fn groups(&self) -> Result<Vec<GroupMetadata>, QueryError>;

    /// One group's metadata with its participants.
    async fn group_metadata(&self, group: &Jid) -> Result<GroupMetadata, QueryError>;

    /// Creates a group with `participants` (user JIDs).
    async fn create_group(
        &self,
        subject: &str,
        participants: &[Jid],
    ) -> Result<CreatedGroup, QueryError>;

    /// Adds, removes, promotes or demotes `participants` (user JIDs); the
    /// network answers per participant.
    async fn update_participants(
        &self,
        group: &Jid,
        action: ParticipantAction,
        participants: &[Jid],
    ) -> Result<Vec<ParticipantChange>, QueryError>;

    /// The group's invite link (`https://chat.whatsapp.com/<code>`); `reset`
    /// revokes the current one first.
    async fn invite_link(&self, group: &Jid, reset: bool) -> Result<String, QueryError>;

    /// Leaves the group.
    async fn leave_group(&self, group: &Jid) -> Result<(), QueryError>;
}

/// The refusal of an operation an adapter does not implement.
pub fn unsupported(what: &str) -> NetworkError {
    NetworkError::Rejected(format!("{what} is not supported by this network adapter"))
}

#[async_trait]
pub trait Network: Send + Sync + 'static {
    /// Connects a session: with stored device state it comes online as linked,
    /// without it starts pairing (QR events). Fails when the network is unreachable.
    async fn connect(
        &self,
        ctx: SessionContext,
    ) -> Result<(Box<dyn Connection>, mpsc::Receiver<NetworkEvent>), NetworkError>;

    /// Forgets a session's device state (after `/disconnect`).
    async fn forget(&self, client_id: &ClientId) -> Result<(), NetworkError>;
}

/// An adapter's own test controls (the sandbox's: link, unlink, a contact's
/// message...), which only some networks carry out. The request
/// (`Command::Control`) is the adapter's own, opaque to the bus and the
/// worker; one it cannot read is answered 400.
#[async_trait]
pub trait NetworkControl: Send + Sync + 'static {
    async fn control(
        &self,
        client_id: &ClientId,
        request: serde_json::Value,
    ) -> parley_contract::command::Outcome;
}
