//! What the network answers about contacts and groups, shaped after the
//! lookups whatsapp-rust offers (usync user info, is-on-whatsapp, profile
//! pictures, group metadata, participant updates with per-participant codes).
use bytes::Bytes;
use parley_contract::queries::MemberAction;
use parley_model::address::Jid;

use super::NetworkError;

/// Why a contact or group operation failed.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum QueryError {
    /// No such group, or the session's phone is not in it.
    #[error("not found: {0}")]
    NotFound(String),
    /// The session's phone may not do this (not an admin of the group).
    #[error("not allowed: {0}")]
    NotAllowed(String),
    #[error(transparent)]
    Network(#[from] NetworkError),
}

/// A usync answer about one user.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserInfo {
    /// LID user-part, when the network revealed it.
    pub lid: Option<String>,
    /// Phone digits, when the network revealed them.
    pub phone: Option<String>,
    /// About text.
    pub status: Option<String>,
    pub picture_id: Option<String>,
    pub username: Option<String>,
    pub verified_name: Option<String>,
    /// Device ids (0 is the phone).
    pub devices: Vec<u16>,
}

/// The name a contact gave itself, as the account's phone knows it (a
/// history sync's push names).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ContactName {
    /// LID user-part.
    pub lid: String,
    /// Phone digits; empty when the network did not say.
    pub phone: String,
    pub name: String,
}

/// Whether a phone number is registered on the network.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NumberCheck {
    pub registered: bool,
    /// LID user-part, when registered and revealed.
    pub lid: Option<String>,
    pub username: Option<String>,
}

/// A profile picture the network offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picture {
    /// Changes when the picture changes.
    pub id: String,
    /// Signed link (expires).
    pub url: String,
}

/// The network's answer to a profile-picture query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PictureLookup {
    Found(Picture),
    /// The user or group has no picture.
    NoPicture,
    /// A picture exists but privacy settings hide it from this account.
    Hidden,
}

/// The bytes of a picture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PictureFile {
    pub content_type: String,
    pub data: Bytes,
}

/// One member of a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupParticipant {
    /// As the group lists it (a LID or phone JID).
    pub jid: Jid,
    pub lid: Option<String>,
    pub phone: Option<String>,
    /// `member`, `admin` or `superadmin`.
    pub role: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMetadata {
    /// `<id>@g.us`.
    pub jid: Jid,
    pub subject: String,
    /// The creator's JID.
    pub owner: Option<Jid>,
    /// Unix seconds.
    pub created_at: Option<i64>,
    pub participants: Vec<GroupParticipant>,
}

/// The network's answer for one participant of a group change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParticipantChange {
    /// The JID the change was asked for.
    pub jid: Jid,
    /// `None` when done; else the network's code (403, 404, 409...).
    pub error: Option<u16>,
}

/// A group the session created, and how each asked participant fared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedGroup {
    pub group: GroupMetadata,
    pub participants: Vec<ParticipantChange>,
}

/// The participant action named by the API, as the network port takes it.
pub type ParticipantAction = MemberAction;
