//! Contact lookups through the session's owner: `/user-info`,
//! `/check-owner-lid` (phone number -> `to`), `/profile-picture`, and
//! `/subscribe-presence` (Parley's).
use actix_web::{HttpRequest, get, post, web};
use parley_contract::command::{Command, Reply};
use parley_contract::error::ApiError;
use parley_contract::queries::{Answer, Query};
use parley_contract::wire::contacts::{
    CheckOwnerLid, OwnerLid, ProfilePicture, ProfilePictureQuery, SubscribePresence, UserInfo,
    UserInfoRequest,
};
use parley_contract::wire::sessions::Ok as OkBody;
use parley_model::ids::ClientId;
use parley_model::outgoing::ChatAction;
use parley_model::recipients::Recipient;

use super::lifecycle::unexpected;
use crate::auth::authorized_client;
use crate::{AppState, HttpError, lookup, owner};

/// Asks the session's owner to carry out `query`.
pub(super) async fn ask(state: &AppState, id: &ClientId, query: Query) -> Result<Answer, ApiError> {
    match owner::send(state, id, Command::Query(query)).await? {
        Reply::Answer(answer) => Ok(answer),
        other => Err(unexpected(other)),
    }
}

#[utoipa::path(tag = "contacts", request_body = UserInfoRequest, responses((status = 200, body = UserInfo),
    (status = 400, description = "Missing or invalid jid"),
    (status = 404, description = "No info for that user, or unknown clientId"),
    (status = 409, description = "Session not connected"),
    (status = 502, description = "Lookup failed (retry)")))]
#[post("/user-info")]
pub async fn user_info(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<UserInfoRequest>,
) -> Result<web::Json<UserInfo>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let user = lookup::who("jid", body.jid.as_deref(), false)?;
    match ask(&state, &id, Query::UserInfo { user }).await? {
        Answer::UserInfo(info) => Ok(web::Json(info)),
        other => Err(unexpected(Reply::Answer(other)).into()),
    }
}

#[utoipa::path(tag = "contacts", request_body = CheckOwnerLid, responses((status = 200, body = OwnerLid),
    (status = 400, description = "Invalid number"),
    (status = 404, description = "Unknown clientId"),
    (status = 409, description = "Session not connected"),
    (status = 502, description = "Number check failed (retry)")))]
#[post("/check-owner-lid")]
pub async fn check_owner_lid(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<CheckOwnerLid>,
) -> Result<web::Json<OwnerLid>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let number = lookup::number("number", body.number.as_deref())?;
    match ask(&state, &id, Query::CheckNumber { number }).await? {
        Answer::Owner(owner) => Ok(web::Json(owner)),
        other => Err(unexpected(Reply::Answer(other)).into()),
    }
}

#[utoipa::path(tag = "contacts",
    params(("clientId" = String, Query), ("jid" = String, Query, description = "LID, +phone or group JID"),
        ("preview" = Option<bool>, Query, description = "Default true: 96 px; false: full size"),
        ("refresh" = Option<bool>, Query, description = "Bypass the 24 h cache")),
    responses((status = 200, body = ProfilePicture, description = "Also when there is no picture: empty url and a reason"),
        (status = 400, description = "Missing or invalid jid, preview or refresh"),
        (status = 404, description = "Unknown clientId"),
        (status = 409, description = "Session not connected"),
        (status = 502, description = "Lookup failed (retry)")))]
#[get("/profile-picture")]
pub async fn profile_picture(
    req: HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<ProfilePictureQuery>,
) -> Result<web::Json<ProfilePicture>, HttpError> {
    let query = query.into_inner();
    let id = authorized_client(&req, &query.client_id)?;
    let who = lookup::who("jid", query.jid.as_deref(), true)?;
    let preview = lookup::query_flag("preview", query.preview.as_deref(), true)?;
    let refresh = lookup::query_flag("refresh", query.refresh.as_deref(), false)?;
    let q = Query::ProfilePicture {
        who,
        preview,
        refresh,
    };
    match ask(&state, &id, q).await? {
        Answer::Picture(picture) => Ok(web::Json(picture)),
        other => Err(unexpected(Reply::Answer(other)).into()),
    }
}

#[utoipa::path(tag = "contacts", request_body = SubscribePresence, responses((status = 200, body = OkBody),
    (status = 400, description = "Missing or invalid jid, or a group"),
    (status = 404, description = "Unknown or unpaired clientId"),
    (status = 409, description = "Session not connected"),
    (status = 502, description = "The network did not take the subscription")))]
#[post("/subscribe-presence")]
pub async fn subscribe_presence(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SubscribePresence>,
) -> Result<web::Json<OkBody>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let to = match Recipient::parse("jid", body.jid.as_deref().unwrap_or_default())? {
        Recipient::Group(_) => {
            return Err(ApiError::bad_request("jid must be a user, not a group").into());
        }
        to => to,
    };
    super::messages::act(&state, &id, ChatAction::SubscribePresence { to }).await?;
    Ok(web::Json(OkBody { ok: true }))
}
