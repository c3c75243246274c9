//! The event log: a session's events with their delivery state, its dead
//! letters, and redelivery. Reads go straight to the database; a redelivery
//! marks the events pending there, then tells the owner (if any) to deliver
//! them; a session without an owner delivers them when it next runs.
use std::time::Duration;

use actix_web::{HttpRequest, get, post, web};
use parley_contract::command::Command;
use parley_contract::error::ApiError;
use parley_contract::wire::events::{
    DeadLetterPage, DeadLettersQuery, EventDelivery, EventPage, EventsQuery, LoggedEventItem,
    RedeliverRequest, Redelivered,
};
use parley_contract::wire::inbox::Pagination;
use parley_model::ids::ClientId;
use parley_shared::bus::commands;
use parley_shared::bus::session_subject;
use parley_shared::db::events::{LoggedEvent, Redeliver};
use serde_json::Value;

use super::inbox::session_for;
use crate::auth::authorized_client;
use crate::{AppState, HttpError};

/// Events per page: at most, and when not given.
pub const LIMIT_MAX: u64 = 500;
pub const LIMIT_DEFAULT: u64 = 100;
/// Longest event id (longer ones cannot exist).
const EVENT_ID_MAX: usize = 256;

/// A whole number from the query string within `min..=max`, or `default`
/// when absent (an empty value is not a number: 400).
pub(crate) fn number(
    field: &str,
    raw: Option<&str>,
    default: u64,
    min: u64,
    max: u64,
) -> Result<u64, ApiError> {
    match raw.map(str::trim) {
        None => Ok(default),
        Some(s) => match s.parse::<u64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(ApiError::bad_request(format!(
                "{field} must be a whole number from {min} to {max}"
            ))),
        },
    }
}

fn item(e: LoggedEvent) -> LoggedEventItem {
    let event = serde_json::from_slice(&e.body).unwrap_or_else(|err| {
        tracing::error!(client_id = %e.client_id, event_id = %e.event_id, error = %err,
            "a logged event is not JSON");
        Value::Null
    });
    LoggedEventItem {
        seq: e.seq,
        event_id: e.event_id,
        event,
        delivery: EventDelivery {
            state: e.delivery.state.as_str().to_string(),
            attempts: e.delivery.attempts,
            last_status: e.delivery.last_status,
            last_attempt_at: e
                .delivery
                .last_attempt_at
                .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
        },
    }
}

#[utoipa::path(tag = "events",
    params(("clientId" = String, Query, description = "The session"),
        ("after" = Option<u64>, Query, description = "Events after this seq; default 0 (from the oldest kept)"),
        ("limit" = Option<u64>, Query, description = "Events per page, 1 to 500, default 100")),
    responses((status = 200, body = EventPage, description = "Oldest first"),
        (status = 400, description = "Missing clientId, or a bad after or limit"),
        (status = 404, description = "Unknown clientId")))]
#[get("/events")]
pub async fn events(
    req: HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<EventsQuery>,
) -> Result<web::Json<EventPage>, HttpError> {
    let q = query.into_inner();
    let id = authorized_client(&req, q.client_id.as_deref().unwrap_or_default())?;
    let after = number("after", q.after.as_deref(), 0, 0, i64::MAX as u64)?;
    let limit = number("limit", q.limit.as_deref(), LIMIT_DEFAULT, 1, LIMIT_MAX)?;
    session_for(&req, &state, &id, None).await?;
    // One more than asked tells whether another page follows.
    let mut found = state
        .ports
        .db
        .events_after(id.as_str(), after, limit + 1)
        .await?;
    let more = found.len() as u64 > limit;
    found.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    let next = more.then(|| found.last().map(|e| e.seq)).flatten();
    Ok(web::Json(EventPage {
        events: found.into_iter().map(item).collect(),
        next,
    }))
}

#[utoipa::path(tag = "events",
    params(("clientId" = String, Query, description = "The session"),
        ("page" = Option<u64>, Query, description = "1-based page, default 1"),
        ("limit" = Option<u64>, Query, description = "Events per page, 1 to 500, default 100")),
    responses((status = 200, body = DeadLetterPage,
            description = "Events rejected by the receiver or out of attempts, oldest first"),
        (status = 400, description = "Missing clientId, or a bad page or limit"),
        (status = 404, description = "Unknown clientId")))]
#[get("/events/dead-letters")]
pub async fn dead_letters(
    req: HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<DeadLettersQuery>,
) -> Result<web::Json<DeadLetterPage>, HttpError> {
    let q = query.into_inner();
    let id = authorized_client(&req, q.client_id.as_deref().unwrap_or_default())?;
    let page = number("page", q.page.as_deref(), 1, 1, u64::from(u32::MAX))?;
    let limit = number("limit", q.limit.as_deref(), LIMIT_DEFAULT, 1, LIMIT_MAX)?;
    session_for(&req, &state, &id, None).await?;
    let (found, total) = state
        .ports
        .db
        .dead_letters(id.as_str(), page, limit)
        .await?;
    Ok(web::Json(DeadLetterPage {
        events: found.into_iter().map(item).collect(),
        pagination: Pagination { page, limit, total },
    }))
}

/// What a redelivery names: exactly one of `eventIds` and `afterSeq`.
fn redelivery(body: &RedeliverRequest) -> Result<Redeliver, ApiError> {
    match (&body.event_ids, &body.after_seq) {
        (Some(ids), None) => event_ids(ids).map(Redeliver::Ids),
        (None, Some(after)) => whole(after)
            .map(Redeliver::AfterSeq)
            .ok_or_else(|| ApiError::bad_request("afterSeq must be a whole number of at least 0")),
        _ => Err(ApiError::bad_request(
            "give exactly one of eventIds and afterSeq",
        )),
    }
}

/// A whole number of at least 0 that fits a seq; `5` and `5.0` are the same
/// number in JSON.
fn whole(raw: &Value) -> Option<u64> {
    raw.as_u64()
        .or_else(|| {
            raw.as_f64()
                .filter(|f| f.fract() == 0.0 && (0.0..9.0e15).contains(f))
                .map(|f| f as u64)
        })
        .filter(|n| *n <= i64::MAX as u64)
}

fn event_ids(raw: &Value) -> Result<Vec<String>, ApiError> {
    let invalid = || {
        ApiError::bad_request(format!(
            "eventIds must be 1 to {LIMIT_MAX} event ids (letters, digits and ._:- up to {EVENT_ID_MAX} characters)"
        ))
    };
    let items = raw.as_array().ok_or_else(invalid)?;
    if items.is_empty() || items.len() as u64 > LIMIT_MAX {
        return Err(invalid());
    }
    items
        .iter()
        .map(|v| {
            v.as_str()
                .filter(|s| valid_event_id(s))
                .map(str::to_string)
                .ok_or_else(invalid)
        })
        .collect()
}

/// The characters an event id is made of (`msg_<clientId>_<messageId>`).
pub fn valid_event_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= EVENT_ID_MAX
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

#[utoipa::path(tag = "events", request_body = RedeliverRequest,
    responses((status = 200, body = Redelivered,
            description = "The events named, queued again with the same eventId, to the session's current webhook"),
        (status = 400, description = "Missing clientId, neither or both of eventIds and afterSeq, or an invalid one"),
        (status = 404, description = "Unknown clientId"),
        (status = 409, description = "The session has no webhookUrl to deliver to")))]
#[post("/events/redeliver")]
pub async fn redeliver(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<RedeliverRequest>,
) -> Result<web::Json<Redelivered>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let which = redelivery(&body)?;
    let session = session_for(&req, &state, &id, None).await?;
    if session.webhook_url.is_empty() {
        return Err(ApiError::conflict(
            "the session has no webhookUrl: set one with /set-webhook first",
        )
        .into());
    }
    let queued = state.ports.db.requeue_events(id.as_str(), &which).await?;
    if let Some(first) = queued.first() {
        wake_owner(&state, &id, first.seq - 1).await;
    }
    crate::audit::done(&req, "redeliver events", &id);
    Ok(web::Json(Redelivered {
        queued: queued.len() as u64,
    }))
}

/// Tells the owner (if any) to deliver the pending events after `after`. A
/// session without an owner delivers them when it next runs, so failures
/// here lose nothing.
async fn wake_owner(state: &AppState, id: &ClientId, after: u64) {
    let request_id = uuid::Uuid::new_v4().to_string();
    let sent = commands::call(
        state.ports.bus.as_ref(),
        &session_subject(id.as_str()),
        &Command::DeliverPending { after },
        &request_id,
        Duration::from_secs(3),
    )
    .await;
    if let Err(e) = sent {
        tracing::debug!(client_id = %id, error = %e, "redelivery not announced to an owner");
    }
}

#[cfg(test)]
mod tests {
    use super::number;

    #[test]
    fn a_query_number_is_absent_or_a_whole_number_in_range() {
        assert_eq!(number("after", None, 7, 0, 10).unwrap(), 7);
        assert_eq!(number("after", Some(" 3 "), 7, 0, 10).unwrap(), 3);
        for bad in ["", " ", "-1", "11", "1.5", "x"] {
            assert!(number("after", Some(bad), 7, 0, 10).is_err(), "{bad:?}");
        }
    }
}
