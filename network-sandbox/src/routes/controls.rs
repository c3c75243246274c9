//! The control routes (`/sandbox/*`): each checks the caller, the session
//! and the body, then asks the test network behind the gateway
//! ([`TestNetwork`]: the simulated network, or the wire-level test network in
//! its test build).
use actix_web::{HttpRequest, get, post, web};

use parley_api::extension::{authorized_client, known};
use parley_api::{AppState, HttpError};
use parley_contract::error::ApiError;
use parley_contract::wire::sandbox::{
    Outbox, OutboxQuery, SandboxContact, SandboxEnterCode, SandboxFault, SandboxGroupChanged,
    SandboxGroupCreated, SandboxGroupMembers, SandboxGroupRequest, SandboxGroupSettings,
    SandboxGroupSubject, SandboxGroupUpdated, SandboxHistory, SandboxHistorySet, SandboxLink,
    SandboxLinked, SandboxPhoneInfo, SandboxPresence, SandboxReceipt, SandboxTyping,
};
use parley_contract::wire::sandbox::{
    SandboxCall, SandboxCallEnd, SandboxCallPlaced, SandboxLabel,
};
use parley_contract::wire::sessions::{ClientOnly, Ok as OkBody};
use parley_model::address::{Jid, PhoneNumber};
use parley_model::ids::ClientId;
use parley_model::inbound::GroupSetting;
use parley_model::recipients::Recipient;
use parley_network::test_network::{SettingChange, TestNetwork};

use super::checks;

/// Makes the test network the routes drive, from the app's state (see
/// [`super::control_routes`]).
#[derive(Clone, Copy)]
pub(super) struct Controlled(pub fn(web::Data<AppState>) -> Box<dyn TestNetwork>);

/// The test network behind this request's routes.
pub(super) fn network(
    req: &HttpRequest,
    state: &web::Data<AppState>,
) -> Result<Box<dyn TestNetwork>, ApiError> {
    let made = req
        .app_data::<Controlled>()
        .ok_or_else(|| ApiError::internal("control routes", "no test network registered"))?;
    Ok((made.0)(state.clone()))
}

#[utoipa::path(tag = "sandbox", request_body = SandboxLink, responses((status = 200, body = SandboxLinked),
    (status = 400, description = "Invalid phone, or a QR that is not current"),
    (status = 404, description = "Unknown clientId"), (status = 409, description = "Not waiting for a scan")))]
#[post("/sandbox/link")]
pub async fn link(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SandboxLink>,
) -> Result<web::Json<SandboxLinked>, HttpError> {
    let body = body.into_inner();
    let phone = PhoneNumber::parse("phone", &body.phone)?;
    let net = network(&req, &state)?;
    let id = match (&body.client_id, &body.qr) {
        (Some(raw), _) => {
            let id = authorized_client(&req, raw)?;
            known(&state, id.as_str()).await?;
            id
        }
        (None, Some(qr)) => {
            let owner = net.qr_owner(qr).await?;
            authorized_client(&req, owner.as_str())?
        }
        (None, None) => return Err(ApiError::bad_request("clientId or qr is required").into()),
    };
    Ok(web::Json(net.link(&id, phone, body.name, body.qr).await?))
}

#[utoipa::path(tag = "sandbox", request_body = SandboxEnterCode, responses((status = 200, body = SandboxLinked),
    (status = 400, description = "Wrong or expired code (or none is waiting)"), (status = 404, description = "Unknown clientId")))]
#[post("/sandbox/enter-code")]
pub async fn enter_code(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SandboxEnterCode>,
) -> Result<web::Json<SandboxLinked>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    known(&state, id.as_str()).await?;
    let code = checks::code(&body)?;
    let net = network(&req, &state)?;
    Ok(web::Json(net.enter_code(&id, code).await?))
}

#[utoipa::path(tag = "sandbox", request_body = ClientOnly, responses((status = 200, body = OkBody),
    (status = 404, description = "Unknown clientId"), (status = 409, description = "Session not linked")))]
#[post("/sandbox/unlink")]
pub async fn unlink(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<ClientOnly>,
) -> Result<web::Json<OkBody>, HttpError> {
    let id = authorized_client(&req, &body.client_id)?;
    known(&state, id.as_str()).await?;
    network(&req, &state)?.unlink(&id).await?;
    Ok(web::Json(OkBody { ok: true }))
}

#[utoipa::path(tag = "sandbox", request_body = SandboxFault, responses((status = 200, body = OkBody),
    (status = 400, description = "Unknown op"), (status = 404, description = "Unknown clientId"),
    (status = 409, description = "drop: the session has no live connection; pair-code: the session is not waiting to pair")))]
#[post("/sandbox/faults")]
pub async fn faults(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SandboxFault>,
) -> Result<web::Json<OkBody>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let count = checks::fault(&body)?;
    known(&state, id.as_str()).await?;
    network(&req, &state)?.fault(&id, body.op, count).await?;
    Ok(web::Json(OkBody { ok: true }))
}

#[utoipa::path(tag = "sandbox", request_body = SandboxContact, responses((status = 200, body = SandboxPhoneInfo),
    (status = 400, description = "Invalid phone or avatar")))]
#[post("/sandbox/contacts")]
pub async fn contacts(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SandboxContact>,
) -> Result<web::Json<SandboxPhoneInfo>, HttpError> {
    let body = body.into_inner();
    let phone = PhoneNumber::parse("phone", &body.phone)?.into_string();
    checks::avatar(body.avatar.as_deref())?;
    checks::avatar_privacy(body.avatar_privacy.as_deref())?;
    checks::call_privacy(body.call_privacy.as_deref())?;
    let contact = SandboxContact { phone, ..body };
    Ok(web::Json(network(&req, &state)?.contact(contact).await?))
}

#[utoipa::path(tag = "sandbox", request_body = SandboxHistory, responses((status = 200, body = SandboxHistorySet),
    (status = 400, description = "Invalid phone, or a message that is not a text of a chat with a contact or a group")))]
#[post("/sandbox/history")]
pub async fn history(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SandboxHistory>,
) -> Result<web::Json<SandboxHistorySet>, HttpError> {
    let history = checks::history(body.into_inner())?;
    Ok(web::Json(network(&req, &state)?.history(history).await?))
}

#[utoipa::path(tag = "sandbox",
    params(("clientId" = String, Query), ("to" = Option<String>, Query, description = "Chat JID, user-part or +phone"),
        ("since" = Option<String>, Query, description = "RFC 3339")),
    responses((status = 200, body = Outbox), (status = 400, description = "Invalid clientId, to or since")))]
#[get("/sandbox/outbox")]
pub async fn outbox(
    req: HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<OutboxQuery>,
) -> Result<web::Json<Outbox>, HttpError> {
    let query = query.into_inner();
    let id = authorized_client(&req, &query.client_id)?;
    let since = checks::since(query.since.as_deref())?;
    let to = query
        .to
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty());
    if let Some(to) = &to {
        Recipient::parse("to", to)?;
    }
    Ok(web::Json(
        network(&req, &state)?.outbox(&id, to, since).await?,
    ))
}

#[utoipa::path(tag = "sandbox", request_body = SandboxGroupRequest, responses((status = 200, body = SandboxGroupCreated),
    (status = 400, description = "Missing subject, invalid phones, or an admin who is not a participant"),
    (status = 404, description = "Unknown clientId"), (status = 409, description = "Session not linked")))]
#[post("/sandbox/groups")]
pub async fn groups(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SandboxGroupRequest>,
) -> Result<web::Json<SandboxGroupCreated>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let group = checks::group(body)?;
    known(&state, id.as_str()).await?;
    Ok(web::Json(
        network(&req, &state)?.create_group(&id, group).await?,
    ))
}

#[utoipa::path(tag = "sandbox", request_body = SandboxGroupSubject, responses((status = 200, body = SandboxGroupCreated),
    (status = 400, description = "Missing subject, jid is not a group JID, or by is not a phone"),
    (status = 404, description = "Unknown clientId, or no such group with the session's phone in it"),
    (status = 409, description = "Session not linked, `by` is not a member, or the group is locked and `by` is not an admin")))]
#[post("/sandbox/groups/subject")]
pub async fn group_subject(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SandboxGroupSubject>,
) -> Result<web::Json<SandboxGroupCreated>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let (jid, subject, by) = checks::group_subject(body)?;
    let answer = SandboxGroupCreated {
        jid: jid.as_str().to_string(),
        subject: subject.clone(),
    };
    let setting = GroupSetting::Subject(subject);
    update_group(&req, &state, &id, jid, SettingChange { setting, by }).await?;
    Ok(web::Json(answer))
}

#[utoipa::path(tag = "sandbox", request_body = SandboxGroupSettings, responses((status = 200, body = SandboxGroupUpdated),
    (status = 400, description = "Not exactly one setting, an unknown disappearing time, a description too long, jid is not a group JID, or by is not a phone"),
    (status = 404, description = "Unknown clientId, or no such group with the session's phone in it"),
    (status = 409, description = "Session not linked, `by` is not a member, or not an admin where only admins may (announce, locked; any setting of a locked group)")))]
#[post("/sandbox/groups/settings")]
pub async fn group_settings(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SandboxGroupSettings>,
) -> Result<web::Json<SandboxGroupUpdated>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let (jid, change) = checks::group_settings(body)?;
    let answer = SandboxGroupUpdated {
        jid: jid.as_str().to_string(),
        group_update: serde_json::json!(change.setting),
    };
    update_group(&req, &state, &id, jid, change).await?;
    Ok(web::Json(answer))
}

/// Asks the session's network to make a checked change of a group's settings.
async fn update_group(
    req: &HttpRequest,
    state: &web::Data<AppState>,
    id: &ClientId,
    jid: Jid,
    change: SettingChange,
) -> Result<(), HttpError> {
    known(state, id.as_str()).await?;
    Ok(network(req, state)?.update_group(id, jid, change).await?)
}

#[utoipa::path(tag = "sandbox", request_body = SandboxGroupMembers, responses((status = 200, body = SandboxGroupChanged),
    (status = 400, description = "jid is not a group JID, an unknown action, or invalid phones"),
    (status = 404, description = "Unknown clientId, or no such group with the session's phone in it"),
    (status = 409, description = "Session not linked, by is not an admin of the group, or a participant who is (add) or is not (the others) a member")))]
#[post("/sandbox/groups/participants")]
pub async fn group_members(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SandboxGroupMembers>,
) -> Result<web::Json<SandboxGroupChanged>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let (jid, change) = checks::group_members(body)?;
    known(&state, id.as_str()).await?;
    Ok(web::Json(
        network(&req, &state)?
            .change_members(&id, jid, change)
            .await?,
    ))
}

#[utoipa::path(tag = "sandbox", request_body = SandboxReceipt, responses((status = 200, body = OkBody),
    (status = 400, description = "Invalid from, an unknown status, or 0 or more than 100 message ids"),
    (status = 404, description = "Unknown clientId"), (status = 409, description = "Session not linked")))]
#[post("/sandbox/receipts")]
pub async fn receipts(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SandboxReceipt>,
) -> Result<web::Json<OkBody>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let receipt = checks::receipt(body)?;
    known(&state, id.as_str()).await?;
    network(&req, &state)?.receipt(&id, receipt).await?;
    Ok(web::Json(OkBody { ok: true }))
}

#[utoipa::path(tag = "sandbox", request_body = SandboxTyping, responses((status = 200, body = OkBody),
    (status = 400, description = "Invalid from or an unknown state"),
    (status = 404, description = "Unknown clientId"), (status = 409, description = "Session not linked")))]
#[post("/sandbox/typing")]
pub async fn typing(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SandboxTyping>,
) -> Result<web::Json<OkBody>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let typing = checks::typing(body)?;
    known(&state, id.as_str()).await?;
    network(&req, &state)?.typing(&id, typing).await?;
    Ok(web::Json(OkBody { ok: true }))
}

#[utoipa::path(tag = "sandbox", request_body = SandboxPresence, responses((status = 200, body = OkBody),
    (status = 400, description = "Invalid from or an unknown state"),
    (status = 404, description = "Unknown clientId"), (status = 409, description = "Session not linked")))]
#[post("/sandbox/presence")]
pub async fn presence(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SandboxPresence>,
) -> Result<web::Json<OkBody>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let (from, available) = checks::presence(&body)?;
    known(&state, id.as_str()).await?;
    network(&req, &state)?
        .presence(&id, from, available)
        .await?;
    Ok(web::Json(OkBody { ok: true }))
}

#[utoipa::path(tag = "sandbox", request_body = SandboxCall, responses((status = 200, body = SandboxCallPlaced),
    (status = 400, description = "Invalid from, or a group that is not a group JID"),
    (status = 404, description = "Unknown clientId, or no such group with the session's phone in it"),
    (status = 409, description = "Session not linked, from is not a member of group, or the session's account takes calls from its contacts only and never wrote to from (error 463)")))]
#[post("/sandbox/calls")]
pub async fn calls(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SandboxCall>,
) -> Result<web::Json<SandboxCallPlaced>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let call = checks::call(body)?;
    known(&state, id.as_str()).await?;
    let call_id = network(&req, &state)?.call(&id, call).await?;
    Ok(web::Json(SandboxCallPlaced { call_id }))
}

#[utoipa::path(tag = "sandbox", request_body = SandboxCallEnd, responses((status = 200, body = OkBody),
    (status = 400, description = "Invalid from or callId, or an unknown reason"),
    (status = 404, description = "Unknown clientId"), (status = 409, description = "Session not linked")))]
#[post("/sandbox/calls/end")]
pub async fn end_call(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SandboxCallEnd>,
) -> Result<web::Json<OkBody>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let end = checks::call_end(body)?;
    known(&state, id.as_str()).await?;
    network(&req, &state)?.end_call(&id, end).await?;
    Ok(web::Json(OkBody { ok: true }))
}

#[utoipa::path(tag = "sandbox", request_body = SandboxLabel, responses((status = 200, body = OkBody),
    (status = 400, description = "A missing or malformed labelId, a chat that is no phone number or group JID, a new label without a name, a name or colour out of range"),
    (status = 404, description = "Unknown clientId"), (status = 409, description = "Session not linked")))]
#[post("/sandbox/labels")]
pub async fn labels(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SandboxLabel>,
) -> Result<web::Json<OkBody>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let label = checks::label(body)?;
    known(&state, id.as_str()).await?;
    network(&req, &state)?.phone_label(&id, label).await?;
    Ok(web::Json(OkBody { ok: true }))
}
