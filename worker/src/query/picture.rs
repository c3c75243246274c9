//! `/profile-picture`: the network's answer cached for 24 h per session, JID
//! and size (`refresh` bypasses it), and each picture version mirrored once
//! into the media store for a permanent link.
use chrono::{DateTime, Utc};
use parley_contract::error::ApiError;
use parley_contract::wire::contacts::ProfilePicture;
use parley_model::recipients::Recipient;
use parley_shared::db::contacts::CachedPicture;
use parley_shared::media;

use super::Querier;
use crate::network::{Picture, PictureLookup};

/// How long an answer of the network is reused.
pub const CACHE_HOURS: i64 = 24;
/// `reason` when there is no picture.
pub const NO_PICTURE: &str = "no profile picture";
/// `reason` when privacy settings hide the picture.
pub const HIDDEN: &str = "hidden by privacy settings";
/// Media-store prefix of mirrored pictures.
const PREFIX: &str = "avatars";

/// The `type` of a picture size.
pub fn kind(preview: bool) -> &'static str {
    if preview { "preview" } else { "image" }
}

/// Whether a cached answer checked at `checked_at` is still fresh at `now`.
pub fn fresh(checked_at: DateTime<Utc>, now: DateTime<Utc>) -> bool {
    now.signed_duration_since(checked_at) < chrono::Duration::hours(CACHE_HOURS)
}

/// The answer a cache row stands for; `storedUrl` only when it is a copy of
/// the current version.
fn answer(row: &CachedPicture, mirrored: bool) -> ProfilePicture {
    let current = !row.picture_id.is_empty() && row.stored_picture_id == row.picture_id;
    ProfilePicture {
        jid: row.jid.clone(),
        id: row.picture_id.clone(),
        kind: row.kind.clone(),
        url: row.url.clone(),
        stored_url: if current {
            row.stored_url.clone()
        } else {
            String::new()
        },
        mirrored,
        reason: Some(row.reason.clone()).filter(|r| !r.is_empty()),
    }
}

impl Querier {
    pub(super) async fn profile_picture(
        &self,
        who: &Recipient,
        preview: bool,
        refresh: bool,
    ) -> Result<ProfilePicture, ApiError> {
        let kind = kind(preview);
        let Some(jid) = self.user_jid(who).await? else {
            // A number that is not on the network has no picture.
            return Ok(ProfilePicture {
                jid: who.jid().into_string(),
                id: String::new(),
                kind: kind.into(),
                url: String::new(),
                stored_url: String::new(),
                mirrored: false,
                reason: Some(NO_PICTURE.into()),
            });
        };
        let cached = self.cached(jid.as_str(), kind).await;
        let now = Utc::now();
        if !refresh
            && let Some(row) = &cached
            && fresh(row.checked_at, now)
        {
            return Ok(match self.complete_mirror(row).await {
                Some(copy) => {
                    self.store(&copy).await;
                    answer(&copy, true)
                }
                None => answer(row, false),
            });
        }
        let lookup = self
            .network(
                "profile picture lookup",
                self.connection.profile_picture(&jid, preview),
            )
            .await?;
        let (stored_picture_id, stored_url) = cached
            .map(|c| (c.stored_picture_id, c.stored_url))
            .unwrap_or_default();
        let mut row = CachedPicture {
            jid: jid.into_string(),
            kind: kind.into(),
            picture_id: String::new(),
            url: String::new(),
            reason: String::new(),
            stored_picture_id,
            stored_url,
            checked_at: now,
        };
        match lookup {
            PictureLookup::NoPicture => row.reason = NO_PICTURE.into(),
            PictureLookup::Hidden => row.reason = HIDDEN.into(),
            PictureLookup::Found(Picture { id, url }) => {
                row.picture_id = id;
                row.url = url;
            }
        }
        let copy = self.complete_mirror(&row).await;
        let mirrored = copy.is_some();
        let row = copy.unwrap_or(row);
        self.store(&row).await;
        Ok(answer(&row, mirrored))
    }

    /// The permanent link of the current picture of `jid` (a user or group
    /// JID; the preview size, as `/profile-picture` answers by default),
    /// `None` without a visible picture. An error when the lookup or the copy
    /// failed.
    pub(crate) async fn room_picture(
        &self,
        jid: &str,
        refresh: bool,
    ) -> Result<Option<String>, ApiError> {
        let who = Recipient::parse("jid", jid)?;
        let picture = self.profile_picture(&who, true, refresh).await?;
        if picture.url.is_empty() {
            return Ok(None);
        }
        if picture.stored_url.is_empty() {
            return Err(ApiError::bad_gateway(
                "the profile picture was not copied; retry",
            ));
        }
        Ok(Some(picture.stored_url))
    }

    async fn store(&self, row: &CachedPicture) {
        if let Err(e) = self
            .book
            .db
            .cache_picture(self.book.client_id.as_str(), row)
            .await
        {
            tracing::warn!(error = %e, "profile picture not cached");
        }
    }

    async fn cached(&self, jid: &str, kind: &str) -> Option<CachedPicture> {
        match self
            .book
            .db
            .cached_picture(self.book.client_id.as_str(), jid, kind)
            .await
        {
            Ok(row) => row,
            Err(e) => {
                tracing::warn!(error = %e, "profile picture cache not read");
                None
            }
        }
    }

    /// Mirrors the row's picture when its version has no copy yet; returns the
    /// row with the copy, `None` when nothing was mirrored. A
    /// failure leaves the copy for a later request: the answer still has `url`.
    async fn complete_mirror(&self, row: &CachedPicture) -> Option<CachedPicture> {
        if row.picture_id.is_empty() || row.stored_picture_id == row.picture_id {
            return None;
        }
        let picture = Picture {
            id: row.picture_id.clone(),
            url: row.url.clone(),
        };
        let file = match self
            .network(
                "profile picture download",
                self.connection.download_picture(&picture),
            )
            .await
        {
            Ok(file) => file,
            Err(e) => {
                tracing::warn!(error = %e.message, "profile picture not mirrored");
                return None;
            }
        };
        let ext = if file.content_type == "image/png" {
            "png"
        } else {
            "jpg"
        };
        let key = media::new_key(PREFIX, Some(ext));
        let stored = match self.media.put(&key, &file.content_type, file.data).await {
            Ok(stored) => stored,
            Err(e) => {
                tracing::warn!(error = %e, "profile picture not mirrored");
                return None;
            }
        };
        let mut row = row.clone();
        row.stored_picture_id = row.picture_id.clone();
        row.stored_url = stored.url;
        Some(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(picture_id: &str, stored: &str) -> CachedPicture {
        CachedPicture {
            jid: "1@lid".into(),
            kind: "preview".into(),
            picture_id: picture_id.into(),
            url: "https://x/1".into(),
            reason: String::new(),
            stored_picture_id: stored.into(),
            stored_url: "https://store/a.jpg".into(),
            checked_at: Utc::now(),
        }
    }

    #[test]
    fn stored_links_belong_to_their_version() {
        assert_eq!(
            answer(&row("7", "7"), false).stored_url,
            "https://store/a.jpg"
        );
        assert_eq!(answer(&row("8", "7"), false).stored_url, "");
        let mut none = row("", "7");
        none.reason = NO_PICTURE.into();
        let a = answer(&none, false);
        assert_eq!(
            (a.stored_url.as_str(), a.reason.as_deref()),
            ("", Some(NO_PICTURE))
        );
    }

    #[test]
    fn answers_are_fresh_for_a_day() {
        let now = Utc::now();
        assert!(fresh(now - chrono::Duration::hours(23), now));
        assert!(!fresh(now - chrono::Duration::hours(24), now));
        assert_eq!((kind(true), kind(false)), ("preview", "image"));
    }
}
