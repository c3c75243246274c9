//! Groups through the session's owner: list, participants, create, member
//! updates (answered per participant), invite link, leave.
use actix_web::{HttpRequest, post, web};
use parley_contract::command::Reply;
use parley_contract::queries::{Answer, Query};
use parley_contract::wire::groups::{
    CreateGroup, Group, GroupCreated, GroupInviteLink, GroupInviteLinkRequest, GroupLeft,
    GroupMembersUpdated, GroupRequest, Groups, UpdateGroupMembers,
};
use parley_contract::wire::sessions::ClientOnly;

use super::contacts::ask;
use super::lifecycle::unexpected;
use crate::auth::authorized_client;
use crate::{AppState, HttpError, lookup};

fn mismatch(answer: Answer) -> HttpError {
    unexpected(Reply::Answer(answer)).into()
}

#[utoipa::path(tag = "groups", request_body = ClientOnly, responses((status = 200, body = Groups),
    (status = 404, description = "Unknown clientId"),
    (status = 409, description = "Session not connected"),
    (status = 502, description = "The network failed (retry)")))]
#[post("/get-groups")]
pub async fn get_groups(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<ClientOnly>,
) -> Result<web::Json<Groups>, HttpError> {
    let id = authorized_client(&req, &body.client_id)?;
    match ask(&state, &id, Query::Groups).await? {
        Answer::Groups(groups) => Ok(web::Json(Groups { groups })),
        other => Err(mismatch(other)),
    }
}

#[utoipa::path(tag = "groups", request_body = GroupRequest, responses((status = 200, body = Group),
    (status = 400, description = "Missing or invalid groupJid"),
    (status = 404, description = "Unknown clientId, or no such group with this account in it"),
    (status = 409, description = "Session not connected"),
    (status = 502, description = "The network failed (retry)")))]
#[post("/get-group-participants")]
pub async fn get_group_participants(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<GroupRequest>,
) -> Result<web::Json<Group>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let group = lookup::group_jid(body.group_jid.as_deref())?;
    match ask(&state, &id, Query::Group { group }).await? {
        Answer::Group(group) => Ok(web::Json(group)),
        other => Err(mismatch(other)),
    }
}

#[utoipa::path(tag = "groups", request_body = CreateGroup, responses((status = 200, body = GroupCreated),
    (status = 400, description = "Missing or invalid subject or participants"),
    (status = 404, description = "Unknown clientId"),
    (status = 409, description = "Session not connected"),
    (status = 502, description = "The network failed (retry)")))]
#[post("/create-group")]
pub async fn create_group(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<CreateGroup>,
) -> Result<web::Json<GroupCreated>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let subject = lookup::subject(body.subject)?;
    let participants = lookup::participants(body.participants)?;
    let q = Query::CreateGroup {
        subject,
        participants,
    };
    match ask(&state, &id, q).await? {
        Answer::Created(created) => Ok(web::Json(created)),
        other => Err(mismatch(other)),
    }
}

#[utoipa::path(tag = "groups", request_body = UpdateGroupMembers, responses((status = 200, body = GroupMembersUpdated,
        description = "One result per participant; some may have failed"),
    (status = 400, description = "Missing or invalid groupJid, action or participants"),
    (status = 403, description = "This account is not an admin of the group"),
    (status = 404, description = "Unknown clientId, or no such group with this account in it"),
    (status = 409, description = "Session not connected"),
    (status = 502, description = "The network failed (retry)")))]
#[post("/update-group-members")]
pub async fn update_group_members(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<UpdateGroupMembers>,
) -> Result<web::Json<GroupMembersUpdated>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let group = lookup::group_jid(body.group_jid.as_deref())?;
    let action = lookup::action(body.action.as_deref())?;
    let participants = lookup::participants(body.participants)?;
    let q = Query::UpdateMembers {
        group,
        action,
        participants,
    };
    match ask(&state, &id, q).await? {
        Answer::Members(updated) => {
            crate::audit::done(&req, "update group members", &id);
            Ok(web::Json(updated))
        }
        other => Err(mismatch(other)),
    }
}

#[utoipa::path(tag = "groups", request_body = GroupInviteLinkRequest, responses((status = 200, body = GroupInviteLink),
    (status = 400, description = "Missing or invalid groupJid"),
    (status = 403, description = "This account is not an admin of the group"),
    (status = 404, description = "Unknown clientId, or no such group with this account in it"),
    (status = 409, description = "Session not connected"),
    (status = 502, description = "The network failed (retry)")))]
#[post("/group-invite-link")]
pub async fn group_invite_link(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<GroupInviteLinkRequest>,
) -> Result<web::Json<GroupInviteLink>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let group = lookup::group_jid(body.group_jid.as_deref())?;
    let q = Query::InviteLink {
        group,
        reset: body.reset,
    };
    match ask(&state, &id, q).await? {
        Answer::InviteLink(link) => Ok(web::Json(link)),
        other => Err(mismatch(other)),
    }
}

#[utoipa::path(tag = "groups", request_body = GroupRequest, responses((status = 200, body = GroupLeft),
    (status = 400, description = "Missing or invalid groupJid"),
    (status = 404, description = "Unknown clientId, or no such group with this account in it"),
    (status = 409, description = "Session not connected"),
    (status = 502, description = "The network failed (retry)")))]
#[post("/leave-group")]
pub async fn leave_group(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<GroupRequest>,
) -> Result<web::Json<GroupLeft>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let group = lookup::group_jid(body.group_jid.as_deref())?;
    match ask(
        &state,
        &id,
        Query::LeaveGroup {
            group: group.clone(),
        },
    )
    .await?
    {
        Answer::Left => {
            crate::audit::done(&req, "leave group", &id);
            Ok(web::Json(GroupLeft {
                ok: true,
                group_jid: group.into_string(),
            }))
        }
        other => Err(mismatch(other)),
    }
}
