//! Every failure answers `{error}` with its status: handler errors, extractor
//! errors (malformed JSON, wrong content type, oversized body), unknown routes
//! and wrong methods.
use actix_web::body::{BoxBody, EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::error::{JsonPayloadError, PayloadError};
use actix_web::http::StatusCode;
use actix_web::http::header::{CONTENT_TYPE, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{HttpRequest, HttpResponse, ResponseError, web};
use parley_contract::error::ApiError;

use crate::JSON_LIMIT;
use crate::inventory::Inventory;

/// The handlers' error: an [`ApiError`] rendered as `{error}`.
#[derive(Debug)]
pub struct HttpError(pub ApiError);

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl ResponseError for HttpError {
    fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.0.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    fn error_response(&self) -> HttpResponse {
        let mut res = HttpResponse::build(self.status_code());
        if let Some(secs) = self.0.retry_after {
            res.insert_header((actix_web::http::header::RETRY_AFTER, secs.to_string()));
        }
        res.json(self.0.body())
    }
}

impl From<ApiError> for HttpError {
    fn from(e: ApiError) -> Self {
        HttpError(e)
    }
}

impl From<parley_model::Invalid> for HttpError {
    fn from(e: parley_model::Invalid) -> Self {
        HttpError(e.into())
    }
}

impl From<parley_shared::db::DbError> for HttpError {
    fn from(e: parley_shared::db::DbError) -> Self {
        HttpError(e.into())
    }
}

fn payload_error(e: &PayloadError) -> ApiError {
    match e {
        PayloadError::Overflow => {
            ApiError::payload_too_large(format!("request body is larger than {JSON_LIMIT} bytes"))
        }
        other => ApiError::bad_request(format!("cannot read request body: {other}")),
    }
}

pub fn json_config() -> web::JsonConfig {
    web::JsonConfig::default()
        .limit(JSON_LIMIT)
        .error_handler(|err, _req| {
            let api = match &err {
                JsonPayloadError::ContentType => {
                    ApiError::unsupported_media_type("expected Content-Type: application/json")
                }
                JsonPayloadError::OverflowKnownLength { .. }
                | JsonPayloadError::Overflow { .. } => ApiError::payload_too_large(format!(
                    "request body is larger than {JSON_LIMIT} bytes"
                )),
                JsonPayloadError::Deserialize(e) if e.is_data() => {
                    ApiError::bad_request(format!("invalid request body: {e}"))
                }
                JsonPayloadError::Deserialize(e) => {
                    ApiError::bad_request(format!("malformed JSON: {e}"))
                }
                JsonPayloadError::Payload(p) => payload_error(p),
                other => ApiError::bad_request(format!("invalid request body: {other}")),
            };
            HttpError(api).into()
        })
}

pub fn query_config() -> web::QueryConfig {
    web::QueryConfig::default().error_handler(|err, _req| {
        HttpError(ApiError::bad_request(format!(
            "invalid query string: {err}"
        )))
        .into()
    })
}

pub fn path_config() -> web::PathConfig {
    web::PathConfig::default().error_handler(|err, _req| {
        HttpError(ApiError::bad_request(format!("invalid path: {err}"))).into()
    })
}

/// Unknown routes: 405 with `Allow` (RFC 9110) when the path exists with
/// other methods, else 404.
pub async fn fallback(req: HttpRequest, inventory: web::Data<Inventory>) -> HttpResponse {
    let methods = inventory.methods_for(req.path());
    if methods.is_empty() {
        let error = ApiError::not_found(format!("no route for {} {}", req.method(), req.path()));
        return HttpError(error).error_response();
    }
    let mut res = HttpError(ApiError::method_not_allowed()).error_response();
    if let Ok(allow) = HeaderValue::from_str(&methods.join(", ")) {
        res.headers_mut()
            .insert(actix_web::http::header::ALLOW, allow);
    }
    res
}

/// Safety net: an error response that is not JSON (raised by the framework
/// before a handler ran) is rewritten as `{error}` with the same status.
pub async fn json_errors(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody, BoxBody>>, actix_web::Error> {
    let res = next.call(req).await?;
    let status = res.status();
    let is_json = res
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if status.as_u16() < 400 || is_json {
        return Ok(res.map_into_left_body());
    }
    let message = match status {
        StatusCode::NOT_FOUND => "not found".to_string(),
        StatusCode::METHOD_NOT_ALLOWED => "method not allowed".to_string(),
        StatusCode::PAYLOAD_TOO_LARGE => "request body too large".to_string(),
        s if s.is_server_error() => "internal error".to_string(),
        s => s
            .canonical_reason()
            .unwrap_or("request failed")
            .to_ascii_lowercase(),
    };
    let (req, mut res) = res.into_parts();
    let body = serde_json::json!({ "error": message }).to_string();
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let res = res.set_body(BoxBody::new(body));
    Ok(ServiceResponse::new(req, res).map_into_right_body())
}
