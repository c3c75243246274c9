//! `GET /events/feed`: the session's live feed (see `crate::feed`).
use std::convert::Infallible;
use std::sync::Arc;

use actix_web::http::header::{CACHE_CONTROL, HeaderName};
use actix_web::{HttpRequest, HttpResponse, get, web};
use parley_contract::error::ApiError;
use parley_contract::wire::events::FeedQuery;

use super::events::number;
use super::inbox::session_for;
use crate::auth::authorized_client;
use crate::{AppState, HttpError};

/// The header a Server-Sent Events reader resumes with.
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

#[utoipa::path(tag = "events",
    params(("clientId" = String, Query, description = "The session"),
        ("after" = Option<u64>, Query, description = "Events after this seq; default 0 (from the oldest kept). A `Last-Event-ID` header takes its place"),
        ("Last-Event-ID" = Option<u64>, Header, description = "The seq of the last event received, sent by a reader that resumes")),
    responses((status = 200, content_type = "text/event-stream",
            description = "Server-Sent Events: each event of the log after the resume point, in seq order, as `id: <seq>` and `data: <the envelope as delivered>`; then every new one as it is logged. Named messages: `gap` (`{after, next}`: events the log no longer keeps), `end` (`{reason}`: the server is stopping, or the session was deleted)"),
        (status = 400, description = "Missing clientId, or a bad after or Last-Event-ID"),
        (status = 404, description = "Unknown clientId"),
        (status = 503, description = "This server has PARLEY_LIVE_FEED_LIMIT feeds open, or is stopping")))]
#[get("/events/feed")]
pub async fn feed(
    req: HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<FeedQuery>,
) -> Result<HttpResponse, HttpError> {
    let q = query.into_inner();
    let id = authorized_client(&req, q.client_id.as_deref().unwrap_or_default())?;
    let after = resume_point(&req, q.after.as_deref())?;
    session_for(&req, &state, &id, None).await?;
    let Some(slot) = state.feeds.admit() else {
        return Err(ApiError::unavailable(
            "this server has no room for another live feed: try again, or another server",
        )
        .into());
    };
    let frames = state.feeds.start(
        slot,
        state.ports.db.clone(),
        Arc::clone(&state.ports.bus),
        id.to_string(),
        after,
    );
    let body = futures::stream::unfold(frames, |mut frames| async move {
        let frame = frames.recv().await?;
        Some((Ok::<_, Infallible>(frame), frames))
    });
    Ok(HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header((CACHE_CONTROL, "no-store"))
        // Proxies that buffer responses (nginx) pass this one on at once.
        .insert_header(("X-Accel-Buffering", "no"))
        .streaming(body))
}

/// Where the feed starts: after the `Last-Event-ID` a resuming reader sends,
/// else after `after` (0: the oldest event kept).
fn resume_point(req: &HttpRequest, after: Option<&str>) -> Result<u64, ApiError> {
    let max = i64::MAX as u64;
    match req.headers().get(LAST_EVENT_ID) {
        // A value that is not text is no number either: the same 400.
        Some(value) => number(
            "Last-Event-ID",
            Some(value.to_str().unwrap_or("")),
            0,
            0,
            max,
        ),
        None => number("after", after, 0, 0, max),
    }
}
