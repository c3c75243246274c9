//! The media library: a session's stored files, paged, and the permanent link of one.
use actix_web::{HttpRequest, get, web};
use parley_contract::error::ApiError;
use parley_contract::wire::inbox::{
    InboxQuery, MediaFile, MediaFileList, MediaFilesQuery, MediaUrl, Pagination,
};
use parley_model::ids::ClientId;
use parley_shared::db::history::{PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX};

use super::inbox::session_for;
use crate::auth::Caller;
use crate::auth::{authorized_client, caller};
use crate::{AppState, HttpError};

/// A positive whole number from the query string, or `default` when absent
/// (an empty value is not a number: 400).
fn positive(field: &str, raw: Option<&str>, default: u64) -> Result<u64, ApiError> {
    match raw.map(str::trim) {
        None => Ok(default),
        Some(s) => match s.parse::<u64>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(ApiError::bad_request(format!(
                "{field} must be a whole number of at least 1"
            ))),
        },
    }
}

#[utoipa::path(tag = "inbox",
    params(("clientId" = String, Query, description = "The session"),
        ("orgId" = String, Query, description = "The session's workspace id"),
        ("page" = Option<u64>, Query, description = "1-based page, default 1"),
        ("limit" = Option<u64>, Query, description = "Files per page, default 50, at most 200 (larger values are capped)")),
    responses((status = 200, body = MediaFileList, description = "Newest first"),
        (status = 400, description = "Missing clientId or orgId, or a bad page or limit"),
        (status = 404, description = "Unknown clientId, or orgId not the session's")))]
#[get("/media-files")]
pub async fn media_files(
    req: HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<MediaFilesQuery>,
) -> Result<web::Json<MediaFileList>, HttpError> {
    let q = query.into_inner();
    let id = authorized_client(&req, q.client_id.as_deref().unwrap_or_default())?;
    let org_id = q.org_id.as_deref().map(str::trim).unwrap_or_default();
    if org_id.is_empty() {
        return Err(ApiError::bad_request("orgId is required").into());
    }
    let page = positive("page", q.page.as_deref(), 1)?;
    let limit = positive("limit", q.limit.as_deref(), PAGE_LIMIT_DEFAULT)?.min(PAGE_LIMIT_MAX);
    if page > u64::from(u32::MAX) {
        return Err(ApiError::bad_request("page is too large").into());
    }
    session_for(&req, &state, &id, Some(org_id)).await?;
    let found = state
        .ports
        .db
        .media_files(id.as_str(), org_id, page, limit)
        .await?;
    let files = found
        .files
        .into_iter()
        .map(|f| MediaFile {
            message_id: f.id,
            client_id: f.client_id,
            mime_type: f.mime_type,
            media_type: f.media_type,
            file_name: f.file_name,
            file_size: f.file_size,
            caption: f.caption,
            created_at: f
                .created_at
                .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
        })
        .collect();
    Ok(web::Json(MediaFileList {
        ok: true,
        files,
        pagination: Pagination {
            page,
            limit,
            total: found.total,
        },
    }))
}

#[utoipa::path(tag = "inbox",
    params(("messageId" = String, Path, description = "The storage UUID of a media-library record"),
        ("clientId" = Option<String>, Query, description = "When given, the file must be this session's (a session secret needs it)"),
        ("orgId" = Option<String>, Query, description = "When given, the file must belong to this workspace")),
    responses((status = 200, body = MediaUrl),
        (status = 400, description = "messageId is not a UUID"),
        (status = 404, description = "No such file")))]
#[get("/media-files/{messageId}/url")]
pub async fn media_file_url(
    req: HttpRequest,
    state: web::Data<AppState>,
    path: web::Path<String>,
    query: web::Query<InboxQuery>,
) -> Result<web::Json<MediaUrl>, HttpError> {
    let raw = path.into_inner();
    let id = uuid::Uuid::parse_str(raw.trim())
        .map_err(|_| ApiError::bad_request("messageId must be a media-library UUID"))?;
    let q = query.into_inner();
    let named = match q.client_id.as_deref() {
        Some(raw) => Some(ClientId::parse(raw)?),
        None => None,
    };
    let not_found = || ApiError::not_found("no such file");
    let file = state
        .ports
        .db
        .media_file(&id.to_string())
        .await?
        .ok_or_else(not_found)?;
    let own = match caller(&req) {
        Caller::Session(own) => Some(own),
        Caller::Account => None,
    };
    for must in [own.as_ref(), named.as_ref()].into_iter().flatten() {
        if must.as_str() != file.client_id {
            return Err(not_found().into());
        }
    }
    if let Some(org) = q.org_id.as_deref()
        && org.trim() != file.org_id
    {
        return Err(not_found().into());
    }
    Ok(web::Json(MediaUrl {
        ok: true,
        url: file.url,
    }))
}
