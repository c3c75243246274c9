//! Read state of chats: read receipts (`/mark-read`) and the unread flag on the
//! linked phone (`/mark-unread`).
use actix_web::{HttpRequest, post, web};
use parley_contract::error::ApiError;
use parley_contract::wire::messages::{MarkRead, MarkUnread, MarkedRead};
use parley_contract::wire::sessions::Ok as OkBody;
use parley_model::address::MessageId;
use parley_model::outgoing::ChatAction;

use super::inbox;
use super::messages::act;
use crate::auth::authorized_client;
use crate::compose::{self, MARK_READ_MAX};
use crate::{AppState, HttpError};

#[utoipa::path(tag = "chats", request_body = MarkRead, responses((status = 200, body = MarkedRead),
    (status = 400, description = "Empty messageIds or invalid fields"),
    (status = 404, description = "Unknown or unpaired clientId"),
    (status = 502, description = "The network rejected the receipt")))]
#[post("/mark-read")]
pub async fn mark_read(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<MarkRead>,
) -> Result<web::Json<MarkedRead>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let to = compose::recipient(body.to.as_deref())?;
    let raw = body.message_ids.unwrap_or_default();
    if raw.is_empty() {
        return Err(ApiError::bad_request("messageIds must not be empty").into());
    }
    if raw.len() > MARK_READ_MAX {
        return Err(ApiError::bad_request(format!(
            "messageIds has more than {MARK_READ_MAX} items"
        ))
        .into());
    }
    let mut message_ids: Vec<MessageId> = Vec::with_capacity(raw.len());
    for one in &raw {
        let one = MessageId::parse("messageIds", Some(one))?;
        if !message_ids.contains(&one) {
            message_ids.push(one);
        }
    }
    let count = message_ids.len();
    let room = inbox::room_of(&state, &id, &to).await?;
    act(&state, &id, ChatAction::MarkRead { to, message_ids }).await?;
    // The network took the receipts: the hosted badge is cleared too. The
    // receipts are out either way, so a failure here is logged, not answered.
    if let Some(room) = room
        && let Err(e) = state
            .ports
            .db
            .reset_unread(&room.client_id, &room.chat_room_id)
            .await
    {
        tracing::warn!(error = %e, client_id = %id, "cannot reset the hosted unread count");
    }
    Ok(web::Json(MarkedRead { ok: true, count }))
}

/// The chat must have a stored message (else 404, as the spec's Errors say):
/// a session without the hosted inbox stores none, so it is always a 404.
#[utoipa::path(tag = "chats", request_body = MarkUnread, responses((status = 200, body = OkBody),
    (status = 400, description = "Invalid fields"),
    (status = 404, description = "Unknown or unpaired clientId, or no stored message for the chat (always without the hosted inbox)"),
    (status = 502, description = "The network rejected the app-state patch")))]
#[post("/mark-unread")]
pub async fn mark_unread(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<MarkUnread>,
) -> Result<web::Json<OkBody>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let to = compose::recipient(body.to.as_deref())?;
    super::paired(&state, &id).await?;
    let stored = match inbox::room_of(&state, &id, &to).await? {
        Some(room) => {
            state
                .ports
                .db
                .room_has_messages(&room.client_id, &room.chat_room_id)
                .await?
        }
        None => false,
    };
    if !stored {
        return Err(ApiError::not_found("no stored message for this chat").into());
    }
    act(&state, &id, ChatAction::MarkUnread { to }).await?;
    Ok(web::Json(OkBody { ok: true }))
}
