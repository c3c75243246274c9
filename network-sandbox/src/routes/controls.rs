//! The simulated network's controls (`/sandbox/*`, sandbox mode only): they act
//! through the worker that owns the session, exactly where the network would.
use super::checks;
use crate::store::PhonePatch;
use actix_web::{HttpRequest, get, post, web};

use parley_model::address::{Jid, PhoneNumber};
use parley_shared::command::Reply;

use crate::ops::SandboxOp;
use parley_model::recipients::{GROUP_SERVER, LID_SERVER, PHONE_SERVER, Recipient, lid_jid};
use parley_shared::error::ApiError;
use parley_shared::wire::sessions::{ClientOnly, Ok as OkBody};

use super::wire::{
    Outbox, OutboxEntry, OutboxQuery, SandboxContact, SandboxEnterCode, SandboxFault,
    SandboxGroupCreated, SandboxGroupRequest, SandboxGroupSubject, SandboxLink, SandboxLinked,
    SandboxPhoneInfo,
};

use parley_api::extension::authorized_client;
use parley_api::extension::{ask_owner, known, unexpected};
use parley_api::{AppState, HttpError};

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
    let raw_id = match (&body.client_id, &body.qr) {
        (Some(id), _) => id.clone(),
        (None, Some(code)) => super::store(&state)
            .qr_owner(code)
            .await?
            .ok_or_else(|| ApiError::bad_request("qr is not a current QR code"))?,
        (None, None) => return Err(ApiError::bad_request("clientId or qr is required").into()),
    };
    let id = authorized_client(&req, &raw_id)?;
    known(&state, id.as_str()).await?;
    let op = SandboxOp::Link {
        phone,
        name: body.name,
        qr: body.qr,
    };
    linked(&state, &id, op).await
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
    linked(&state, &id, SandboxOp::EnterCode { code }).await
}

async fn linked(
    state: &AppState,
    id: &parley_model::ids::ClientId,
    op: SandboxOp,
) -> Result<web::Json<SandboxLinked>, HttpError> {
    match ask_owner(state, id, op.command()?).await? {
        Reply::Linked { jid, lid } => Ok(web::Json(SandboxLinked {
            client_id: id.to_string(),
            jid,
            lid,
        })),
        other => Err(unexpected(other).into()),
    }
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
    ask_owner(&state, &id, SandboxOp::Unlink.command()?).await?;
    Ok(web::Json(OkBody { ok: true }))
}

#[utoipa::path(tag = "sandbox", request_body = SandboxFault, responses((status = 200, body = OkBody),
    (status = 400, description = "Unknown op"), (status = 404, description = "Unknown clientId"),
    (status = 409, description = "drop: the session has no live connection")))]
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
    ask_owner(
        &state,
        &id,
        SandboxOp::Fault { op: body.op, count }.command()?,
    )
    .await?;
    Ok(web::Json(OkBody { ok: true }))
}

#[utoipa::path(tag = "sandbox", request_body = SandboxContact, responses((status = 200, body = SandboxPhoneInfo),
    (status = 400, description = "Invalid phone or avatar")))]
#[post("/sandbox/contacts")]
pub async fn contacts(
    state: web::Data<AppState>,
    body: web::Json<SandboxContact>,
) -> Result<web::Json<SandboxPhoneInfo>, HttpError> {
    let body = body.into_inner();
    let phone = PhoneNumber::parse("phone", &body.phone)?.into_string();
    checks::avatar(body.avatar.as_deref())?;
    let patch = PhonePatch {
        name: body.name,
        username: body.username,
        on_network: body.on_network,
        avatar: body.avatar,
        about: body.about,
    };
    let stored = super::store(&state).upsert_phone(&phone, patch).await?;
    Ok(web::Json(SandboxPhoneInfo {
        jid: stored.jid(),
        phone: stored.phone,
        lid: stored.lid,
    }))
}

/// Most entries one `/sandbox/outbox` answer holds (the oldest; page with `since`).
const OUTBOX_LIMIT: u64 = 10_000;

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
    let chats = match query.to.as_deref().filter(|t| !t.trim().is_empty()) {
        Some(to) => Some(chat_jids(&state, to).await?),
        None => None,
    };
    let rows = super::store(&state)
        .outbox(id.as_str(), chats.as_deref(), since, OUTBOX_LIMIT)
        .await?;
    let messages = rows
        .into_iter()
        .map(|r| OutboxEntry {
            message_id: r.message_id,
            to: r.to_jid,
            kind: r.kind,
            payload: r.payload,
            at: r.at,
        })
        .collect();
    Ok(web::Json(Outbox { messages }))
}

/// The chat JIDs a `to` filter names: a JID itself; a user-part as a LID,
/// phone or group JID; a `+phone` as its phone JID and its LID JID when known.
async fn chat_jids(state: &AppState, to: &str) -> Result<Vec<String>, ApiError> {
    let to = to.trim();
    let parsed = Recipient::parse("to", to)?;
    Ok(match parsed {
        Recipient::Lid(user) if !to.contains('@') => [LID_SERVER, PHONE_SERVER, GROUP_SERVER]
            .into_iter()
            .filter_map(|server| Jid::new(&user, server))
            .map(Jid::into_string)
            .collect(),
        Recipient::Phone(phone) => {
            let mut jids = vec![Jid::phone(&phone).into_string()];
            if let Some(known) = super::store(state).phone(phone.as_str()).await?
                && let Some(lid) = lid_jid(&known.lid)
            {
                jids.push(lid.into_string());
            }
            jids
        }
        other => vec![other.jid().into_string()],
    })
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
    let op = SandboxOp::CreateGroup {
        subject: group.subject,
        participants: group.participants,
        admins: group.admins,
    };
    match ask_owner(&state, &id, op.command()?).await? {
        Reply::SandboxGroup { jid, subject } => Ok(web::Json(SandboxGroupCreated { jid, subject })),
        other => Err(unexpected(other).into()),
    }
}

#[utoipa::path(tag = "sandbox", request_body = SandboxGroupSubject, responses((status = 200, body = SandboxGroupCreated),
    (status = 400, description = "Missing subject, or jid is not a group JID"),
    (status = 404, description = "Unknown clientId, or no such group with the session's phone in it"),
    (status = 409, description = "Session not linked")))]
#[post("/sandbox/groups/subject")]
pub async fn group_subject(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SandboxGroupSubject>,
) -> Result<web::Json<SandboxGroupCreated>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let (jid, subject) = checks::group_subject(body)?;
    known(&state, id.as_str()).await?;
    let op = SandboxOp::GroupSubject { jid, subject };
    match ask_owner(&state, &id, op.command()?).await? {
        Reply::SandboxGroup { jid, subject } => Ok(web::Json(SandboxGroupCreated { jid, subject })),
        other => Err(unexpected(other).into()),
    }
}
