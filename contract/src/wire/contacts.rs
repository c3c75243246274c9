//! Bodies of the contact routes: `/user-info`, `/check-owner-lid`, `/profile-picture`.
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `POST /user-info`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserInfoRequest {
    #[serde(default)]
    pub client_id: String,
    /// LID user-part, full JID or `+phone`.
    pub jid: Option<String>,
}

/// `POST /subscribe-presence` (Parley's): the session asks for a contact's
/// presence while its connection lasts.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscribePresence {
    #[serde(default)]
    pub client_id: String,
    /// The contact: LID user-part, full JID or `+phone` (not a group).
    pub jid: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserInfo {
    /// The user's JID (`<lid>@lid` when the network knows the LID).
    pub jid: String,
    /// Username handle; empty when none.
    pub username: String,
    /// The user's about text; empty when none or hidden.
    pub status: String,
    /// Id of the current profile picture; empty when none or hidden.
    pub picture_id: String,
    /// Number of devices (the phone and its linked devices).
    pub devices: u32,
    /// Verified business name; empty when none.
    pub verified_name: String,
}

/// `POST /check-owner-lid`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckOwnerLid {
    #[serde(default)]
    pub client_id: String,
    /// Phone number with country code (`+` and spaces allowed).
    pub number: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OwnerLid {
    /// The session's own LID user-part.
    pub my_lid: String,
    /// The session's own JID.
    pub my_jid: String,
    /// The number checked (digits); empty when none was given.
    pub number: String,
    #[serde(rename = "isOnWhatsApp")]
    pub is_on_whatsapp: bool,
    /// `<number>@s.whatsapp.net` when it is on the network, else empty.
    pub number_jid: String,
    /// The number's LID user-part (use it as `to`); empty when unknown.
    pub number_lid: String,
    /// The number's username handle; empty when none.
    pub username: String,
}

/// `GET /profile-picture` query.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProfilePictureQuery {
    #[serde(default)]
    pub client_id: String,
    pub jid: Option<String>,
    /// `true` (default): 96 px preview; `false`: full size.
    pub preview: Option<String>,
    /// `true`: bypass the 24 h cache.
    pub refresh: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProfilePicture {
    pub jid: String,
    /// The picture's id (changes when the picture changes); empty when none.
    pub id: String,
    /// `preview` or `image` (full size).
    #[serde(rename = "type")]
    pub kind: String,
    /// The network's signed link (expires in about 10 days); empty when none.
    pub url: String,
    /// Permanent copy in the media store; empty when none.
    pub stored_url: String,
    /// True when this answer stored a new copy (a picture version seen first).
    pub mirrored: bool,
    /// Why `url` is empty: `no profile picture` or `hidden by privacy settings`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
