//! Authentication: the account token, or a session's own secret for requests
//! that name that session (`clientId` in the query string, the JSON body, or
//! the chat room id of hosted-inbox paths). Digests are compared in constant time.
use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::{AUTHORIZATION, CONTENT_TYPE};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, HttpRequest, ResponseError, web};
use bytes::BytesMut;
use futures::StreamExt;
use parley_contract::error::ApiError;
use parley_model::ids::{ChatRoomId, ClientId};
use parley_shared::digest;
use parley_shared::picture_links;

use crate::errors::HttpError;
use crate::{AppState, JSON_LIMIT};

/// Who is calling, attached to the request for handlers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The account token: every session.
    Account,
    /// A session secret: that session only.
    Session(ClientId),
}

impl Caller {
    /// Refuses a session secret used for another session.
    pub fn check(&self, client_id: &ClientId) -> Result<(), ApiError> {
        match self {
            Caller::Account => Ok(()),
            Caller::Session(own) if own == client_id => Ok(()),
            Caller::Session(_) => Err(ApiError::unauthorized()),
        }
    }
}

/// The caller attached by the authentication middleware.
pub fn caller(req: &HttpRequest) -> Caller {
    req.extensions()
        .get::<Caller>()
        .cloned()
        .unwrap_or(Caller::Account)
}

/// Parses a `clientId` and checks the caller may act on it.
pub fn authorized_client(req: &HttpRequest, raw: &str) -> Result<ClientId, ApiError> {
    let id = ClientId::parse(raw)?;
    caller(req).check(&id)?;
    Ok(id)
}

/// Paths anyone may call: probes, non-secret facts, permanent media links,
/// the sandbox's signed picture links (like the network's own), and the static
/// pages (whose scripts call the authenticated routes with the user's token).
pub(crate) fn is_public(path: &str) -> bool {
    crate::static_pages::is_static(path)
        || matches!(
            path,
            "/health" | "/health/live" | "/health/ready" | "/health/clients"
        )
        || matches!(path, "/config" | "/openapi.json" | "/metrics")
        || path.starts_with("/media/")
        || path
            .strip_prefix(picture_links::PATH)
            .is_some_and(|rest| rest.starts_with('/'))
}

fn presented_token(req: &ServiceRequest) -> Option<String> {
    let headers = req.headers();
    if let Some(v) = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok()) {
        let v = v.trim();
        if v.len() > 7 && v[..7].eq_ignore_ascii_case("bearer ") {
            return Some(v[7..].trim().to_string());
        }
    }
    headers
        .get("x-v3-secret")
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

fn unauthorized<B>(req: ServiceRequest) -> ServiceResponse<EitherBody<B>> {
    req.into_response(HttpError(ApiError::unauthorized()).error_response())
        .map_into_right_body()
}

pub async fn authenticate(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    // The operations listener serves `/metrics` and nothing else: no token,
    // and anything else is simply not found.
    let operations = req
        .app_data::<web::Data<AppState>>()
        .is_some_and(|s| s.surface == crate::Surface::Operations);
    if operations || is_public(req.path()) {
        return next
            .call(req)
            .await
            .map(ServiceResponse::map_into_left_body);
    }
    let Some(state) = req.app_data::<web::Data<AppState>>().cloned() else {
        return Ok(unauthorized(req));
    };
    let (Some(token), Some(account)) = (presented_token(&req), state.account_digest) else {
        return Ok(unauthorized(req));
    };
    if digest::matches(&token, &account) {
        req.extensions_mut().insert(Caller::Account);
        return next
            .call(req)
            .await
            .map(ServiceResponse::map_into_left_body);
    }

    // Not the account token: it may be the secret of the session the request names.
    let mut named: Vec<String> = Vec::new();
    if let Ok(q) = web::Query::<ClientIdOnly>::from_query(req.query_string())
        && let Some(id) = q.into_inner().client_id
    {
        named.push(id);
    }
    if let Some(id) = chat_room_client(req.path()) {
        named.push(id);
    }
    let is_json = req
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if is_json {
        let body = match read_body(req.take_payload()).await {
            Ok(body) => body,
            Err(e) => {
                return Ok(req
                    .into_response(HttpError(e).error_response())
                    .map_into_right_body());
            }
        };
        if let Ok(b) = serde_json::from_slice::<ClientIdOnly>(&body)
            && let Some(id) = b.client_id
        {
            named.push(id);
        }
        req.set_payload(Payload::from(body));
    }
    let Some(first) = named.first().cloned() else {
        return Ok(unauthorized(req));
    };
    if named.iter().any(|n| *n != first) {
        return Ok(unauthorized(req));
    }
    let Ok(client_id) = ClientId::parse(&first) else {
        return Ok(unauthorized(req));
    };
    let stored = match state.ports.db.session(client_id.as_str()).await {
        Ok(row) => row.and_then(|r| r.secret_hash),
        Err(e) => {
            let e: ApiError = e.into();
            return Ok(req
                .into_response(HttpError(e).error_response())
                .map_into_right_body());
        }
    };
    match stored {
        Some(hash) if digest::matches_hex(&token, &hash) => {
            req.extensions_mut().insert(Caller::Session(client_id));
            next.call(req)
                .await
                .map(ServiceResponse::map_into_left_body)
        }
        _ => Ok(unauthorized(req)),
    }
}

#[derive(serde::Deserialize)]
struct ClientIdOnly {
    #[serde(rename = "clientId")]
    client_id: Option<String>,
}

/// Hosted-inbox paths carry the session in the chat room id: `<clientId>-<myLid>-<other>`.
fn chat_room_client(path: &str) -> Option<String> {
    let rest = path.strip_prefix("/chatrooms/")?;
    let room = rest.split('/').next()?;
    ChatRoomId::named_client(room).map(str::to_string)
}

/// A JSON body, at most [`JSON_LIMIT`] bytes (413 past it).
pub(crate) async fn read_body(mut payload: Payload) -> Result<bytes::Bytes, ApiError> {
    let mut body = BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk =
            chunk.map_err(|e| ApiError::bad_request(format!("cannot read request body: {e}")))?;
        if body.len() + chunk.len() > JSON_LIMIT {
            return Err(ApiError::payload_too_large(format!(
                "request body is larger than {JSON_LIMIT} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}
