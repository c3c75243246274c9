//! What each session learned about contacts: the LID <-> phone mapping (from
//! every lookup, and from events through [`Db::learn_contact`]) and the
//! profile-picture cache with the mirrored copy of each picture version.
use chrono::{DateTime, Utc};

use super::entities::{contacts, profile_pictures};
use super::{Db, DbError};

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

impl Db {
    /// Records what is known of a contact of `client_id`: its LID user-part,
    /// its phone digits (empty when not revealed) and name (empty when none).
    /// Empty values never erase stored ones. A phone belongs to one LID: when
    /// it moves, the previous LID forgets it.
    pub async fn learn_contact(
        &self,
        client_id: &str,
        lid: &str,
        phone: &str,
        name: &str,
    ) -> Result<(), DbError> {
        if lid.is_empty() {
            return Ok(());
        }
        contacts::learn(self, client_id, lid, phone, name).await
    }

    /// The LID user-part `client_id` learned for `phone`.
    pub async fn lid_for_phone(
        &self,
        client_id: &str,
        phone: &str,
    ) -> Result<Option<String>, DbError> {
        Ok(contacts::by_phone(self, client_id, phone)
            .await?
            .map(|c| c.lid))
    }

    /// The phone digits `client_id` learned for `lid`.
    pub async fn phone_for_lid(
        &self,
        client_id: &str,
        lid: &str,
    ) -> Result<Option<String>, DbError> {
        Ok(contacts::by_lid(self, client_id, lid)
            .await?
            .map(|c| c.phone)
            .filter(|p| !p.is_empty()))
    }

    /// Everything `client_id` learned about `lid`.
    pub async fn contact(&self, client_id: &str, lid: &str) -> Result<Option<Contact>, DbError> {
        contacts::by_lid(self, client_id, lid).await
    }

    /// The cached picture of `jid` of kind `kind` for `client_id`.
    pub async fn cached_picture(
        &self,
        client_id: &str,
        jid: &str,
        kind: &str,
    ) -> Result<Option<CachedPicture>, DbError> {
        profile_pictures::find(self, client_id, jid, kind).await
    }

    /// Stores (replacing) the cached picture `picture` for `client_id`.
    pub async fn cache_picture(
        &self,
        client_id: &str,
        picture: &CachedPicture,
    ) -> Result<(), DbError> {
        profile_pictures::put(self, client_id, picture).await
    }
}
