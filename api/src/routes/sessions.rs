//! Session routes answered from the database: listing, state, per-session secrets.
use actix_web::{HttpRequest, get, post, web};
use parley_contract::command::{Command, Reply};
use parley_contract::error::ApiError;
use parley_contract::wire::sessions::{
    CheckState, ClientList, ClientOnly, ClientQuery, ClientSummary, HasSecret, SetApiSecret,
};
use parley_model::ids::ClientId;
use parley_shared::bus::commands;
use parley_shared::db::SettingsPatch;
use parley_shared::digest;

use crate::auth::{Caller, authorized_client, caller};
use crate::{AppState, HttpError};

/// Shortest accepted session secret.
const SECRET_MIN: usize = 16;

#[utoipa::path(tag = "sessions", params(("clientId" = Option<String>, Query, description = "Limit to one session")),
    responses((status = 200, body = ClientList)))]
#[get("/clients")]
pub async fn clients(
    req: HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<ClientQuery>,
) -> Result<web::Json<ClientList>, HttpError> {
    let only = match (caller(&req), query.into_inner().client_id) {
        (Caller::Session(own), _) => Some(own),
        (Caller::Account, Some(raw)) => Some(ClientId::parse(&raw)?),
        (Caller::Account, None) => None,
    };
    let rows = state.ports.db.sessions().await?;
    let clients = rows
        .into_iter()
        .filter(|r| only.as_ref().is_none_or(|id| id.as_str() == r.client_id))
        .map(|r| ClientSummary {
            client_id: r.client_id,
            jid: r.jid,
            pod_name: r.pod_name,
            org_id: r.org_id,
            webhook_url: r.webhook_url,
            pacing: r.pacing,
        })
        .collect();
    Ok(web::Json(ClientList { clients }))
}

#[utoipa::path(tag = "sessions", request_body = ClientOnly, responses((status = 200, body = CheckState)))]
#[post("/check-state")]
pub async fn check_state(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<serde_json::Value>,
) -> Result<web::Json<CheckState>, HttpError> {
    let unknown = || CheckState {
        status: false,
        state: "unknown clientId".into(),
    };
    if !body.is_object() {
        return Err(ApiError::bad_request("the body must be a JSON object").into());
    }
    // Any clientId, even not a string, answers 200 (spec: always 200).
    let named = body
        .get("clientId")
        .and_then(|v| v.as_str())
        .unwrap_or_default();
    let Ok(id) = authorized_client(&req, named) else {
        return Ok(web::Json(unknown()));
    };
    let Some(row) = state.ports.db.session(id.as_str()).await? else {
        return Ok(web::Json(unknown()));
    };
    // The owner is the truth (a stored flag can be stale after a crash): ask it.
    let connected = row.desired && owner_says_connected(&state, &id).await;
    let answer = match state.ports.db.session(id.as_str()).await? {
        None => unknown(),
        Some(row) if connected && !row.jid.is_empty() => CheckState {
            status: true,
            state: row.jid,
        },
        Some(_) => CheckState {
            status: false,
            state: "not connected".into(),
        },
    };
    Ok(web::Json(answer))
}

#[utoipa::path(tag = "sessions", request_body = SetApiSecret, responses(
    (status = 200, body = HasSecret),
    (status = 400, description = "Secret shorter than 16 characters"),
    (status = 404, description = "Unknown clientId")))]
#[post("/set-api-secret")]
pub async fn set_api_secret(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SetApiSecret>,
) -> Result<web::Json<HasSecret>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let hash = if body.secret.is_empty() {
        None
    } else if body.secret.chars().count() < SECRET_MIN {
        return Err(ApiError::bad_request(format!(
            "secret must be at least {SECRET_MIN} characters"
        ))
        .into());
    } else {
        Some(digest::sha256_hex(&body.secret))
    };
    let patch = SettingsPatch {
        secret_hash: Some(hash),
        ..Default::default()
    };
    let row = state
        .ports
        .db
        .update_settings(id.as_str(), patch)
        .await?
        .ok_or_else(|| ApiError::not_found("unknown clientId"))?;
    crate::audit::done(&req, "set session secret", &id);
    Ok(web::Json(HasSecret {
        client_id: row.client_id,
        has_secret: row.secret_hash.is_some(),
    }))
}

/// Whether the worker that owns the session reports it connected now.
async fn owner_says_connected(state: &AppState, id: &ClientId) -> bool {
    let request_id = uuid::Uuid::new_v4().to_string();
    let subject = parley_shared::bus::session_subject(id.as_str());
    let timeout = std::time::Duration::from_secs(3);
    let asked = commands::call(
        state.ports.bus.as_ref(),
        &subject,
        &Command::State,
        &request_id,
        timeout,
    )
    .await;
    matches!(asked, Ok(Ok(Reply::Status { status, .. })) if status == "connected")
}
