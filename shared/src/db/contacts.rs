//! What each session learned about contacts: the LID <-> phone mapping (from
//! every lookup, and from events through [`Db::learn_contact`](crate::db::Db::learn_contact)) and the
//! profile-picture cache with the mirrored copy of each picture version.
use chrono::{DateTime, Utc};

/// A contact as one session knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contact {
    /// LID user-part.
    pub lid: String,
    /// Phone digits; empty while not revealed.
    pub phone: String,
    /// Display name; empty when none was learned.
    pub name: String,
    pub updated_at: DateTime<Utc>,
}

/// The network's last answer about one picture (`kind` `preview` or `image`)
/// and the mirrored copy of the version `stored_picture_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedPicture {
    pub jid: String,
    pub kind: String,
    /// Empty when there is no picture (see `reason`).
    pub picture_id: String,
    /// The network's signed link; empty when there is no picture.
    pub url: String,
    /// Why there is no picture; empty when there is one.
    pub reason: String,
    pub stored_picture_id: String,
    /// The permanent copy of `stored_picture_id`; empty until mirrored.
    pub stored_url: String,
    pub checked_at: DateTime<Utc>,
}
