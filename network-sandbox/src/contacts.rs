//! Contact lookups on the simulated network: user info, number checks and
//! profile pictures from the phone registry. Each lookup needs a linked
//! connection and uses up an armed `lookup` fault by failing.
use crate::store::SandboxPhone;
use crate::store::entities::phones::CONTACTS;
use bytes::Bytes;
use parley_model::recipients::{LID_SERVER, PHONE_SERVER};
use parley_shared::picture_links::{PictureLinks, PictureRef};

use super::connection::SandboxConnection;
use super::live::Phase;
use super::{SandboxNetwork, unreachable};
use parley_network::{
    Jid, NetworkError, NumberCheck, PhoneNumber, Picture, PictureFile, PictureLookup, QueryError,
    UserInfo,
};

/// The fault that fails user info, number checks and profile pictures.
const LOOKUP_FAULT: &str = "lookup";

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
    pub(super) async fn phone_of(&self, jid: &Jid) -> Result<Option<SandboxPhone>, NetworkError> {
        let db = self.network().store();
        let found = match jid.server() {
            LID_SERVER => db.phone_by_lid(jid.user()).await,
            PHONE_SERVER => db.phone(jid.user()).await,
            _ => return Ok(None),
        };
        found.map_err(unreachable)
    }

    /// Like [`Self::phone_of`], only phones registered on the network.
    pub(super) async fn registered(&self, jid: &Jid) -> Result<Option<SandboxPhone>, NetworkError> {
        Ok(self.phone_of(jid).await?.filter(|p| p.on_network))
    }

    pub(super) async fn lookup_user(&self, jid: &Jid) -> Result<Option<UserInfo>, QueryError> {
        self.admit_lookup().await?;
        let Some(phone) = self.registered(jid).await? else {
            return Ok(None);
        };
        // A picture for the owner's contacts shows its id to those it wrote to.
        let visible = !phone.picture_id.is_empty()
            && (phone.avatar_privacy != CONTACTS || self.holds_token_of(&phone.phone).await?);
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

    pub(super) async fn lookup_number(
        &self,
        phone: &PhoneNumber,
    ) -> Result<NumberCheck, QueryError> {
        self.admit_lookup().await?;
        let known = self
            .network()
            .store()
            .phone(phone.as_str())
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
        jid: &Jid,
        preview: bool,
    ) -> Result<PictureLookup, QueryError> {
        self.admit_lookup().await?;
        if jid.is_group() {
            // Groups on the simulated network have no pictures.
            return Ok(PictureLookup::NoPicture);
        }
        let Some(phone) = self.registered(jid).await? else {
            return Ok(PictureLookup::NoPicture);
        };
        Ok(match phone.avatar.as_str() {
            "none" | "" => PictureLookup::NoPicture,
            "hidden" => PictureLookup::Hidden,
            _ if phone.avatar_privacy == CONTACTS && !self.holds_token_of(&phone.phone).await? => {
                PictureLookup::Hidden
            }
            _ => {
                let picture = PictureRef {
                    lid: phone.lid,
                    picture_id: phone.picture_id,
                    preview,
                };
                PictureLookup::Found(Picture {
                    url: self.network().picture_link(&picture).await?,
                    id: picture.picture_id,
                })
            }
        })
    }

    /// Whether the session's phone holds a privacy token `issuer` issued it
    /// (`issuer` wrote to it), or is `issuer`.
    pub(super) async fn holds_token_of(&self, issuer: &str) -> Result<bool, NetworkError> {
        let me = self.own_phone().await?;
        if me == issuer {
            return Ok(true);
        }
        let store = self.network().store();
        store.holds_token(issuer, &me).await.map_err(unreachable)
    }

    /// The bytes behind a link made by [`SandboxNetwork::picture_link`],
    /// while the picture is current (read from the simulated network's own
    /// store, not over HTTP).
    pub(super) async fn fetch_picture(&self, picture: &Picture) -> Result<PictureFile, QueryError> {
        let gone = || QueryError::NotFound("the picture is no longer available".into());
        let named = PictureLinks::parse(&picture.url).ok_or_else(gone)?;
        let (content_type, data) = self
            .network()
            .store()
            .phone_by_lid(&named.lid)
            .await
            .map_err(unreachable)?
            .filter(|p| p.picture_id == picture.id && p.picture_id == named.picture_id)
            .and_then(|p| p.picture())
            .ok_or_else(gone)?;
        Ok(PictureFile {
            content_type: content_type.to_string(),
            data: Bytes::from(data),
        })
    }
}

impl SandboxNetwork {
    /// A signed link to `picture` on the gateway's stand-in for the network's
    /// picture CDN (served without the account token until it expires). The
    /// simulated network keeps one size: the preview is the same picture.
    async fn picture_link(&self, picture: &PictureRef) -> Result<String, NetworkError> {
        let key = self
            .inner
            .links_key
            .get_or_try_init(|| self.store().picture_link_key())
            .await
            .map_err(unreachable)?;
        let ttl = i64::try_from(self.inner.links_ttl.as_secs()).unwrap_or(i64::MAX / 2);
        let expires = chrono::Utc::now().timestamp().saturating_add(ttl);
        Ok(PictureLinks::new(key).url(&self.inner.links_base, picture, expires))
    }
}
