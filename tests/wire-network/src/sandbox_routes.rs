//! The sandbox's `/sandbox/*` routes over the wire-level test network, served
//! by the test-network build only (`parley-test-network` with
//! `PARLEY_NETWORK_CONTROL_URL`): a documented test-only departure from the
//! rule that they answer 404 with the real network. Each route resolves the
//! session (authorization, 404, 409) as the sandbox's do, then has the test
//! network's world do the real thing (`crate::world::control`): its phone
//! scans the QR, a contact's device sends an encrypted message, the devices
//! that received the session's messages say what they were. The worker and
//! the adapter are the real ones, untouched.
use std::time::Duration;

use actix_web::{HttpRequest, get, post, web};
use parley_api::extension::{RouteSet, ask_owner, authorized_client, known, unexpected};
use parley_api::{AppState, HttpError};
use parley_model::address::PhoneNumber;
use parley_model::ids::ClientId;
use parley_model::recipients::Recipient;
use parley_network_sandbox::routes::wire::{
    Outbox, OutboxQuery, SandboxContact, SandboxEnterCode, SandboxFault, SandboxGroupCreated,
    SandboxGroupRequest, SandboxGroupSubject, SandboxLink, SandboxLinked, SandboxMessage,
    SandboxMessageSent, SandboxPhoneInfo,
};
use parley_shared::command::{Command, Reply};
use parley_shared::db::SessionRow;
use parley_shared::error::ApiError;
use parley_shared::wire::sessions::{ClientOnly, Ok as OkBody};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use parley_network_sandbox::routes::checks;

use crate::world::SessionRef;

/// The routes, and what the OpenAPI document says of them (the sandbox's).
pub const ROUTES: RouteSet = RouteSet {
    everywhere: |_| {},
    gateway,
    rules: parley_network_sandbox::routes::ROUTES.rules,
    local_only: |path| path == "/sandbox/outbox" || path == "/sandbox/contacts",
    lenient: &["/sandbox/link"],
};

/// How long a control may take on the test network (a new phone connects first).
const WORLD_TIMEOUT: Duration = Duration::from_secs(60);

/// How long `/sandbox/messages` waits for the session to log what it received.
const LOGGED_WAIT: Duration = Duration::from_secs(20);

fn gateway(cfg: &mut utoipa_actix_web::service_config::ServiceConfig) {
    cfg.service(link)
        .service(enter_code)
        .service(unlink)
        .service(faults)
        .service(contacts)
        .service(outbox)
        .service(messages)
        .service(groups)
        .service(group_subject);
}

/// Calls the world's control `path` with `body`; its refusal is the answer.
async fn world<T: DeserializeOwned>(
    state: &AppState,
    path: &str,
    body: Value,
) -> Result<T, ApiError> {
    let base = state
        .config
        .network_control_url
        .as_deref()
        .ok_or_else(|| ApiError::not_found("the test network has no control URL"))?;
    let url = format!("{}{path}", base.trim_end_matches('/'));
    // The test network is on loopback: never through a proxy of the
    // environment (which the gateway's own egress ignores as well).
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|e| ApiError::bad_gateway(format!("the test network's client: {e}")))?;
    let res = client
        .post(&url)
        .json(&body)
        .timeout(WORLD_TIMEOUT)
        .send()
        .await
        .map_err(|e| ApiError::bad_gateway(format!("the test network did not answer: {e}")))?;
    let status = res.status().as_u16();
    let answer: Value = res
        .json()
        .await
        .map_err(|e| ApiError::bad_gateway(format!("the test network's answer: {e}")))?;
    if status != 200 {
        let why = answer["error"].as_str().unwrap_or("refused").to_string();
        return Err(ApiError::new(status, why));
    }
    serde_json::from_value(answer)
        .map_err(|e| ApiError::bad_gateway(format!("the test network's answer: {e}")))
}

/// The session's device on the network, or 409 when it is not linked.
fn linked_device(row: &SessionRow) -> Result<SessionRef, ApiError> {
    SessionRef::from_jid(&row.jid).ok_or_else(|| ApiError::conflict("session not linked"))
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
    let phone = PhoneNumber::parse("phone", &body.phone)?.into_string();
    let (id, qr) = match (&body.client_id, &body.qr) {
        (Some(raw), _) => {
            let id = authorized_client(&req, raw)?;
            known(&state, id.as_str()).await?;
            let shown = current_qr(&state, &id).await?;
            if body.qr.as_ref().is_some_and(|qr| *qr != shown) {
                return Err(ApiError::bad_request("qr is not a current QR code").into());
            }
            (id, shown)
        }
        (None, Some(qr)) => {
            let id = qr_owner(&state, qr).await?;
            let id = authorized_client(&req, id.as_str())?;
            (id, qr.clone())
        }
        (None, None) => return Err(ApiError::bad_request("clientId or qr is required").into()),
    };
    let linked: crate::world::Linked = world(
        &state,
        "/link",
        json!({ "phone": phone, "name": body.name, "qr": qr }),
    )
    .await?;
    connected(&state, &id).await?;
    Ok(web::Json(SandboxLinked {
        client_id: id.to_string(),
        jid: linked.jid,
        lid: linked.lid,
    }))
}

/// The QR code the session shows now; 409 when it is not waiting for a scan.
async fn current_qr(state: &AppState, id: &ClientId) -> Result<String, ApiError> {
    match ask_owner(state, id, Command::Qr).await? {
        Reply::Qr { status, qr } if status == "qr" && !qr.is_empty() => Ok(qr),
        Reply::Qr { .. } => Err(ApiError::conflict("session not in state qr")),
        other => Err(unexpected(other)),
    }
}

/// The session showing `qr` now.
async fn qr_owner(state: &AppState, qr: &str) -> Result<ClientId, ApiError> {
    let waiting = state.ports.db.sessions().await?;
    for row in waiting.into_iter().filter(|r| r.status == "qr") {
        let id = ClientId::parse(&row.client_id)?;
        if current_qr(state, &id).await.is_ok_and(|shown| shown == qr) {
            return Ok(id);
        }
    }
    Err(ApiError::bad_request("qr is not a current QR code"))
}

/// Waits until the session says it is connected (as the sandbox answers after it is).
async fn connected(state: &AppState, id: &ClientId) -> Result<(), ApiError> {
    let until = tokio::time::Instant::now() + WORLD_TIMEOUT;
    loop {
        let row = known(state, id.as_str()).await?;
        if row.status == "connected" {
            return Ok(());
        }
        if tokio::time::Instant::now() >= until {
            return Err(ApiError::gateway_timeout(
                "the session did not come online after the phone linked it",
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
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
    let linked: crate::world::Linked =
        world(&state, "/enter-code", json!({ "code": code })).await?;
    connected(&state, &id).await?;
    Ok(web::Json(SandboxLinked {
        client_id: id.to_string(),
        jid: linked.jid,
        lid: linked.lid,
    }))
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
    let session = linked_device(&known(&state, id.as_str()).await?)?;
    let _: Value = world(&state, "/unlink", json!({ "session": session })).await?;
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
    let row = known(&state, id.as_str()).await?;
    if body.op == "pair-code" {
        // A session asking for a code has no device yet: the fault is armed
        // for the socket its QR code names.
        let qr = current_qr(&state, &id).await?;
        let _: Value = world(&state, "/code-fault", json!({ "qr": qr, "count": count })).await?;
        return Ok(web::Json(OkBody { ok: true }));
    }
    let session = linked_device(&row)?;
    let _: Value = world(
        &state,
        "/faults",
        json!({ "session": session, "op": body.op, "count": count }),
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
    let patch = SandboxContact { phone, ..body };
    Ok(web::Json(world(&state, "/contacts", json!(patch)).await?))
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
    let to = query.to.filter(|t| !t.trim().is_empty());
    if let Some(to) = &to {
        Recipient::parse("to", to.trim())?;
    }
    // A session never linked, or gone, sent nothing.
    let Some(row) = state.ports.db.session(id.as_str()).await? else {
        return Ok(web::Json(Outbox { messages: vec![] }));
    };
    let Ok(session) = linked_device(&row) else {
        return Ok(web::Json(Outbox { messages: vec![] }));
    };
    let outbox = world(
        &state,
        "/outbox",
        json!({ "session": session, "to": to, "since": since }),
    )
    .await?;
    Ok(web::Json(outbox))
}

#[utoipa::path(tag = "sandbox", request_body = SandboxMessage, responses((status = 200, body = SandboxMessageSent),
    (status = 400, description = "Invalid body"), (status = 404, description = "Unknown clientId"),
    (status = 409, description = "Session not connected")))]
#[post("/sandbox/messages")]
pub async fn messages(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<Value>,
) -> Result<web::Json<SandboxMessageSent>, HttpError> {
    let raw = body.into_inner();
    let parsed: SandboxMessage = serde_json::from_value(raw.clone())
        .map_err(|e| ApiError::bad_request(format!("invalid body: {e}")))?;
    let id = authorized_client(&req, &parsed.client_id)?;
    if parsed.from.trim().is_empty() {
        return Err(ApiError::bad_request("from is required (a phone number or \"me\")").into());
    }
    let row = known(&state, id.as_str()).await?;
    parley_network_sandbox::routes::check_message(&parsed)?;
    if row.status != "connected" {
        return Err(ApiError::conflict("session not connected").into());
    }
    let session = linked_device(&row)?;
    // Where the session's log ends now (reading it is only a fallback of
    // `logged`: a log it cannot read does not fail the injection).
    let after = last_seq(&state, &id).await.unwrap_or(0);
    // A message the gateway logs no event of is answered once the session's
    // device acknowledged it instead.
    let logs = logs_event(parsed.chat.as_deref(), row.enable_group_ai);
    let sent: SandboxMessageSent = world(
        &state,
        "/messages",
        json!({ "session": session, "message": raw, "acknowledged": !logs }),
    )
    .await?;
    if logs {
        logged(&state, &id, after, &sent.message_id).await?;
    }
    Ok(web::Json(sent))
}

/// Whether the gateway logs an event of a message into `chat`: never of a
/// status, a broadcast list's or a channel's, of a group's only while the
/// session takes group messages (`enable_group_ai`).
fn logs_event(chat: Option<&str>, takes_groups: bool) -> bool {
    let chat = chat.unwrap_or_default().trim();
    if chat.ends_with("@broadcast") || chat.ends_with("@newsletter") {
        return false;
    }
    takes_groups || !chat.ends_with("@g.us")
}

/// The session's last logged event.
async fn last_seq(state: &AppState, id: &ClientId) -> Result<u64, ApiError> {
    let mut after = 0;
    loop {
        let page = state
            .ports
            .db
            .events_after(id.as_str(), after, 1000)
            .await?;
        match page.last() {
            Some(last) => after = last.seq,
            None => return Ok(after),
        }
    }
}

/// Waits until the session logged an event of message `message_id` after
/// `after`, as the sandbox answers once the event is persisted.
async fn logged(
    state: &AppState,
    id: &ClientId,
    mut after: u64,
    message_id: &str,
) -> Result<(), ApiError> {
    let event_id = format!("msg_{id}_{message_id}");
    let needle = format!("\"{message_id}\"");
    let until = tokio::time::Instant::now() + LOGGED_WAIT;
    loop {
        // Its own event, by id; else an event that names it (an update of
        // another message may be logged under that message's id).
        if state.ports.db.event_logged(&event_id).await? {
            return Ok(());
        }
        let later = state.ports.db.events_after(id.as_str(), after, 1000).await;
        for event in later.unwrap_or_default() {
            after = event.seq;
            if String::from_utf8_lossy(&event.body).contains(&needle) {
                return Ok(());
            }
        }
        if tokio::time::Instant::now() >= until {
            tracing::warn!(client_id = %id, message_id, "the session logged no event of the message in time");
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
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
    let session = linked_device(&known(&state, id.as_str()).await?)?;
    let phones = |all: Vec<PhoneNumber>| -> Vec<String> {
        all.into_iter().map(PhoneNumber::into_string).collect()
    };
    let created = world(
        &state,
        "/groups",
        json!({ "session": session, "subject": group.subject,
                "participants": phones(group.participants), "admins": phones(group.admins) }),
    )
    .await?;
    Ok(web::Json(created))
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
    let session = linked_device(&known(&state, id.as_str()).await?)?;
    let renamed = world(
        &state,
        "/groups/subject",
        json!({ "session": session, "jid": jid.as_str(), "subject": subject }),
    )
    .await?;
    Ok(web::Json(renamed))
}
