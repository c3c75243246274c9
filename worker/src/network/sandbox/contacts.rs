//! Contact lookups on the simulated network: user info, number checks and
//! profile pictures from the phone registry. Each lookup needs a linked
//! connection and uses up an armed `lookup` fault by failing.
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use parley_shared::db::sandbox::SandboxPhone;
use parley_shared::recipients::{GROUP_SERVER, LID_SERVER, PHONE_SERVER};

use super::connection::SandboxConnection;
use super::live::Phase;
use super::unreachable;
use crate::network::{
    NetworkError, NumberCheck, Picture, PictureFile, PictureLookup, QueryError, UserInfo,
};

/// The fault that fails user info, number checks and profile pictures.
const LOOKUP_FAULT: &str = "lookup";

/// Host of the simulated picture links (never resolvable).
const PICTURE_HOST: &str = "https://pps.sandbox.invalid";

/// How long a picture link is said to stay valid.
const LINK_DAYS: i64 = 10;

impl SandboxConnection {
    /// Refuses unless the connection is linked.
    pub(super) async fn ensure_linked(&self) -> Result<(), NetworkError> {
        match self.live().state().await.phase {
            Phase::Linked => Ok(()),
            Phase::Pairing { .. } => Err(NetworkError::NotPaired),
            Phase::Ended => Err(NetworkError::Unreachable("connection closed".into())),
        }
    }

    async fn admit_lookup(&self) -> Result<(), NetworkError> {
        self.ensure_linked().await?;
        self.check_fault(LOOKUP_FAULT, "sandbox fault: lookup failed")
            .await
    }

    /// The registered phone a user JID (`<lid>@lid` or `<phone>@s.whatsapp.net`)
    /// stands for.
    pub(super) async fn phone_of(&self, jid: &str) -> Result<Option<SandboxPhone>, NetworkError> {
        let db = self.network().db();
        let found = match jid.split_once('@') {
            Some((user, LID_SERVER)) => db.phone_by_lid(user).await,
            Some((user, PHONE_SERVER)) => db.phone(user).await,
            _ => return Ok(None),
        };
        found.map_err(unreachable)
    }

    /// Like [`Self::phone_of`], only phones registered on the network.
    pub(super) async fn registered(&self, jid: &str) -> Result<Option<SandboxPhone>, NetworkError> {
        Ok(self.phone_of(jid).await?.filter(|p| p.on_network))
    }

    pub(super) async fn lookup_user(&self, jid: &str) -> Result<Option<UserInfo>, QueryError> {
        self.admit_lookup().await?;
        let Some(phone) = self.registered(jid).await? else {
            return Ok(None);
        };
        let visible = !phone.picture_id.is_empty();
        Ok(Some(UserInfo {
            lid: Some(phone.lid),
            phone: Some(phone.phone),
            status: Some(phone.about).filter(|s| !s.is_empty()),
            picture_id: Some(phone.picture_id).filter(|_| visible),
            username: Some(phone.username).filter(|s| !s.is_empty()),
            verified_name: None,
            devices: vec![0],
        }))
    }

    pub(super) async fn lookup_number(&self, phone: &str) -> Result<NumberCheck, QueryError> {
        self.admit_lookup().await?;
        let known = self
            .network()
            .db()
            .phone(phone)
            .await
            .map_err(unreachable)?
            .filter(|p| p.on_network);
        Ok(match known {
            Some(p) => NumberCheck {
                registered: true,
                lid: Some(p.lid),
                username: Some(p.username).filter(|s| !s.is_empty()),
            },
            None => NumberCheck::default(),
        })
    }

    pub(super) async fn lookup_picture(
        &self,
        jid: &str,
        preview: bool,
    ) -> Result<PictureLookup, QueryError> {
        self.admit_lookup().await?;
        if jid.ends_with(&format!("@{GROUP_SERVER}")) {
            // Groups on the simulated network have no pictures.
            return Ok(PictureLookup::NoPicture);
        }
        let Some(phone) = self.registered(jid).await? else {
            return Ok(PictureLookup::NoPicture);
        };
        Ok(match phone.avatar.as_str() {
            "none" | "" => PictureLookup::NoPicture,
            "hidden" => PictureLookup::Hidden,
            _ => PictureLookup::Found(Picture {
                url: picture_url(&phone.lid, &phone.picture_id, preview),
                id: phone.picture_id,
            }),
        })
    }

    /// The bytes behind a link made by [`picture_url`], while the picture is current.
    pub(super) async fn fetch_picture(&self, picture: &Picture) -> Result<PictureFile, QueryError> {
        let gone = || QueryError::NotFound("the picture is no longer available".into());
        let lid = lid_of_url(&picture.url).ok_or_else(gone)?;
        let phone = self
            .network()
            .db()
            .phone_by_lid(lid)
            .await
            .map_err(unreachable)?
            .filter(|p| p.picture_id == picture.id && !p.picture_id.is_empty())
            .ok_or_else(gone)?;
        let data = STANDARD
            .decode(phone.avatar.as_bytes())
            .map_err(|_| gone())?;
        let content_type = if data.starts_with(b"\x89PNG") {
            "image/png"
        } else {
            "image/jpeg"
        };
        Ok(PictureFile {
            content_type: content_type.to_string(),
            data: Bytes::from(data),
        })
    }
}

/// A signed-looking link to the picture `id` of the user `lid`. (The
/// simulated network keeps one size: the preview is the same picture.)
fn picture_url(lid: &str, id: &str, preview: bool) -> String {
    let kind = if preview { "preview" } else { "image" };
    let expires = (chrono::Utc::now() + chrono::Duration::days(LINK_DAYS)).timestamp();
    format!("{PICTURE_HOST}/v/{lid}/{id}.jpg?type={kind}&oe={expires:X}")
}

/// The LID in a link made by [`picture_url`].
fn lid_of_url(url: &str) -> Option<&str> {
    let rest = url.strip_prefix(PICTURE_HOST)?.strip_prefix("/v/")?;
    rest.split('/').next().filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picture_links_name_their_user() {
        let url = picture_url("123456789012345", "1234567890", true);
        assert!(url.starts_with(
            "https://pps.sandbox.invalid/v/123456789012345/1234567890.jpg?type=preview&oe="
        ));
        assert_eq!(lid_of_url(&url), Some("123456789012345"));
        assert!(picture_url("1", "2", false).contains("type=image"));
        assert_eq!(lid_of_url("https://example.com/v/1/2.jpg"), None);
    }
}
