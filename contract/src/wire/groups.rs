//! Bodies of the group routes: list, participants, create, member updates,
//! invite link and leave.
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `POST /get-group-participants` and `POST /leave-group`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupRequest {
    #[serde(default)]
    pub client_id: String,
    /// `<id>@g.us`.
    pub group_jid: Option<String>,
}

/// `POST /create-group`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateGroup {
    #[serde(default)]
    pub client_id: String,
    /// 1 to 100 characters.
    pub subject: Option<String>,
    /// `to`-style users (LID user-part, `+phone`, user JID); 1 to 256.
    pub participants: Option<Vec<String>>,
}

/// `POST /update-group-members`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateGroupMembers {
    #[serde(default)]
    pub client_id: String,
    pub group_jid: Option<String>,
    /// `add`, `remove`, `promote` or `demote`.
    pub action: Option<String>,
    /// `to`-style users; 1 to 256.
    pub participants: Option<Vec<String>>,
}

/// `POST /group-invite-link`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupInviteLinkRequest {
    #[serde(default)]
    pub client_id: String,
    pub group_jid: Option<String>,
    /// `true`: revoke the current link and issue a new one.
    #[serde(default)]
    pub reset: bool,
}

/// A group member.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupMember {
    /// The member's JID as the group lists it.
    pub jid: String,
    /// LID user-part; empty when unknown.
    pub lid: String,
    /// Phone digits; empty when not revealed.
    pub phone: String,
    /// `member`, `admin` or `superadmin`.
    pub role: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Group {
    pub group_jid: String,
    pub subject: String,
    /// The creator's JID; empty when unknown.
    pub owner: String,
    /// RFC 3339; empty when unknown.
    pub created_at: String,
    pub participants: Vec<GroupMember>,
}

/// `POST /get-groups`: every group the session's phone is a member of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Groups {
    pub groups: Vec<Group>,
}

/// The network's answer for one participant of a create or update.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ParticipantResult {
    /// The value as given in the request.
    pub participant: String,
    /// The JID it was resolved to.
    pub jid: String,
    pub ok: bool,
    /// The network's code: 200 done, 403 refused (privacy or not allowed),
    /// 404 not on the network or not a member, 409 already a member.
    pub status: u16,
    /// Why it failed; empty when `ok`.
    pub error: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupCreated {
    pub group_jid: String,
    pub subject: String,
    pub participants: Vec<ParticipantResult>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupMembersUpdated {
    pub group_jid: String,
    pub action: String,
    pub participants: Vec<ParticipantResult>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupInviteLink {
    pub group_jid: String,
    /// `https://chat.whatsapp.com/<code>`.
    pub link: String,
    pub code: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupLeft {
    pub ok: bool,
    pub group_jid: String,
}
