//! Session lifecycle: start, QR, phone-code pairing, disconnect.
use actix_web::{HttpRequest, get, post, web};
use parley_contract::command::{Command, Reply};
use parley_contract::error::ApiError;
use parley_contract::wire::sessions::{
    ClientIdQuery, ClientOnly, Disconnected, PairCode, PairPhone, QrState, StartBody, Started,
};
use parley_model::address::PhoneNumber;
use parley_shared::db::{NewSession, SettingsPatch};
use parley_shared::urls;

use crate::auth::authorized_client;
use crate::{AppState, HttpError, owner, qr as qr_png};

#[utoipa::path(tag = "sessions", params(("clientId" = String, Query, description = "Letters and digits")),
    request_body(content = Option<StartBody>, description = "Optional webhook settings"),
    responses((status = 200, body = Started), (status = 400, description = "Invalid clientId or URL"),
        (status = 500, description = "Session started but webhook not persisted")))]
#[post("/start")]
pub async fn start(
    req: HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<ClientIdQuery>,
    body: web::Bytes,
) -> Result<web::Json<Started>, HttpError> {
    // The body is optional; when present it is JSON like everywhere else.
    let body: StartBody = if body.iter().all(u8::is_ascii_whitespace) {
        StartBody::default()
    } else {
        let is_json = req
            .headers()
            .get(actix_web::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        if !is_json {
            return Err(ApiError::unsupported_media_type(
                "expected Content-Type: application/json",
            )
            .into());
        }
        serde_json::from_slice(&body)
            .map_err(|e| ApiError::bad_request(format!("malformed JSON: {e}")))?
    };
    let id = authorized_client(&req, &query.client_id)?;
    let allow_http = state.config.allow_http_webhooks;
    let webhook_url = body
        .webhook_url
        .as_deref()
        .map(|u| urls::callback_url("webhookUrl", u, allow_http))
        .transpose()?;
    let poll_lookup_url = body
        .poll_lookup_url
        .as_deref()
        .map(|u| urls::callback_url("pollLookupUrl", u, allow_http))
        .transpose()?;

    let (row, created) = state
        .ports
        .db
        .create_session(NewSession {
            client_id: id.to_string(),
            webhook_url: webhook_url.clone().unwrap_or_default(),
            webhook_token: body.webhook_token.clone().unwrap_or_default(),
            poll_lookup_url: poll_lookup_url.clone().unwrap_or_default(),
        })
        .await?;
    let mut row = row;
    let settings_given =
        webhook_url.is_some() || body.webhook_token.is_some() || poll_lookup_url.is_some();
    if !created && (settings_given || !row.desired) {
        // An existing session: new settings apply, and a logged-out one pairs again.
        let patch = SettingsPatch {
            webhook_url,
            webhook_token: body.webhook_token,
            poll_lookup_url,
            desired: Some(true),
            ..Default::default()
        };
        row = match state.ports.db.update_settings(id.as_str(), patch).await {
            Ok(Some(row)) => row,
            Ok(None) | Err(_) => {
                return Err(ApiError::new(
                    500,
                    "session started but webhook not persisted; call /set-webhook",
                )
                .into());
            }
        };
    }
    let request_id = uuid::Uuid::new_v4().to_string();
    let (status, pod_name) = match owner::start(&state, &id, &request_id).await? {
        Reply::Status { status, pod_name } => (status, pod_name),
        other => return Err(unexpected(other).into()),
    };
    Ok(web::Json(Started {
        client_id: row.client_id,
        status,
        pod_name,
        webhook_url: row.webhook_url,
        poll_lookup_url: row.poll_lookup_url,
    }))
}

#[utoipa::path(tag = "sessions", params(("clientId" = String, Query)),
    responses((status = 200, body = QrState), (status = 404, description = "Unknown clientId")))]
#[get("/qr")]
pub async fn qr(
    req: HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<ClientIdQuery>,
) -> Result<web::Json<QrState>, HttpError> {
    let id = authorized_client(&req, &query.client_id)?;
    known(&state, id.as_str()).await?;
    match owner::send(&state, &id, Command::Qr).await? {
        Reply::Qr { status, qr: code } => {
            let qr = if code.is_empty() {
                String::new()
            } else {
                qr_png::png_data_url(&code).map_err(|e| ApiError::internal("rendering QR", e))?
            };
            Ok(web::Json(QrState {
                client_id: id.to_string(),
                status,
                qr,
            }))
        }
        other => Err(unexpected(other).into()),
    }
}

#[utoipa::path(tag = "sessions", request_body = PairPhone, responses((status = 200, body = PairCode),
    (status = 400, description = "Invalid phone"), (status = 404, description = "Unknown clientId"),
    (status = 409, description = "Already paired"), (status = 502, description = "No code issued")))]
#[post("/pair-phone")]
pub async fn pair_phone(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<PairPhone>,
) -> Result<web::Json<PairCode>, HttpError> {
    let id = authorized_client(&req, &body.client_id)?;
    let phone = PhoneNumber::parse("phone", &body.phone)?;
    known(&state, id.as_str()).await?;
    match owner::send(
        &state,
        &id,
        Command::PairPhone {
            phone: phone.clone(),
        },
    )
    .await?
    {
        Reply::PairCode { code } => Ok(web::Json(PairCode {
            client_id: id.to_string(),
            phone: phone.into_string(),
            code,
        })),
        other => Err(unexpected(other).into()),
    }
}

#[utoipa::path(tag = "sessions", request_body = ClientOnly, responses((status = 200, body = Disconnected),
    (status = 404, description = "No active session")))]
#[post("/disconnect")]
pub async fn disconnect(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<ClientOnly>,
) -> Result<web::Json<Disconnected>, HttpError> {
    let id = authorized_client(&req, &body.client_id)?;
    let row = known(&state, id.as_str()).await?;
    let warning = if row.desired {
        match owner::send(&state, &id, Command::Disconnect).await? {
            Reply::Disconnected { warning } => warning,
            other => return Err(unexpected(other).into()),
        }
    } else {
        // Already logged out by the network: nothing runs; remove the record.
        state.ports.db.delete_session(id.as_str()).await?;
        None
    };
    crate::audit::done(&req, "disconnect", &id);
    Ok(web::Json(Disconnected {
        ok: true,
        client_id: id.to_string(),
        warning,
    }))
}

/// The session's row, or 404.
pub async fn known(
    state: &AppState,
    client_id: &str,
) -> Result<parley_shared::db::SessionRow, ApiError> {
    state
        .ports
        .db
        .session(client_id)
        .await?
        .ok_or_else(|| ApiError::not_found("unknown clientId"))
}

pub fn unexpected(reply: Reply) -> ApiError {
    ApiError::internal(
        "unexpected reply from the session owner",
        format!("{reply:?}"),
    )
}
