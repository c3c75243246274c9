//! `POST /refresh-avatars`: the session's owner looks the hosted-inbox rooms'
//! pictures up again, paced at about 7 rooms per second, and answers when done.
use std::time::Duration;

use actix_web::{HttpRequest, post, web};
use parley_contract::command::{Command, Reply};
use parley_contract::queries::{Answer, Query};
use parley_contract::wire::inbox::{RefreshAvatars, RefreshedAvatars};

use super::lifecycle::unexpected;
use crate::auth::authorized_client;
use crate::owner::{self, Patience};
use crate::{AppState, HttpError};

/// How long the owner may take: a base plus a generous second per room (the
/// pace is about 7 per second; a slow network answer takes longer).
fn patience(rooms: usize) -> Patience {
    let rooms = u64::try_from(rooms).unwrap_or(u64::MAX).min(100_000);
    let attempt = Duration::from_secs(30 + rooms);
    Patience {
        attempt,
        budget: attempt + Duration::from_secs(25),
    }
}

#[utoipa::path(tag = "inbox", request_body = RefreshAvatars,
    responses((status = 200, body = RefreshedAvatars, description = "Every room walked: rooms = updated + skipped + noPhoto + failed"),
        (status = 400, description = "Missing or invalid clientId, or force not a boolean"),
        (status = 404, description = "Unknown or unpaired clientId"),
        (status = 409, description = "Session not connected"),
        (status = 504, description = "The owner did not answer in time")))]
#[post("/refresh-avatars")]
pub async fn refresh_avatars(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<RefreshAvatars>,
) -> Result<web::Json<RefreshedAvatars>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let rooms = state.ports.db.chat_rooms(id.as_str()).await?.len();
    let query = Query::RefreshAvatars {
        force: body.force.unwrap_or(false),
    };
    match owner::send_with(&state, &id, Command::Query(query), patience(rooms)).await? {
        Reply::Answer(Answer::Avatars(counts)) => Ok(web::Json(counts)),
        other => Err(unexpected(other).into()),
    }
}
