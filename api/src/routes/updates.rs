//! Updates of earlier messages and of the chat: reactions, edits, deletes and
//! the typing indicator.
use actix_web::{HttpRequest, post, web};
use parley_contract::error::ApiError;
use parley_contract::wire::messages::{
    DeleteMessage, EditMessage, SendReaction, SendTyping, StatusFlag, StatusText, Targeted,
};
use parley_model::address::MessageId;
use parley_model::outgoing::{ChatAction, Content, DeleteMode, OutgoingMessage};

use super::inbox;
use super::messages::{act, deliver};
use crate::auth::authorized_client;
use crate::compose::{self, TEXT_MAX};
use crate::owner;
use crate::{AppState, HttpError};

#[utoipa::path(tag = "messages", request_body = SendReaction, responses((status = 200, body = Targeted),
    (status = 400, description = "Missing or invalid fields"),
    (status = 404, description = "Unknown or unpaired clientId"),
    (status = 502, description = "The network rejected the reaction")))]
#[post("/send-reaction")]
pub async fn send_reaction(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SendReaction>,
) -> Result<web::Json<Targeted>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let to = compose::recipient(body.to.as_deref())?;
    let target_id = MessageId::parse("messageId", body.message_id.as_deref())?;
    let content = Content::Reaction {
        target_id: target_id.clone(),
        emoji: compose::emoji(body.emoji)?,
        target_from_me: body.target_from_me.unwrap_or(false),
    };
    let result = deliver(&state, &id, bare(to, content), owner::COMMANDS).await?;
    Ok(web::Json(Targeted {
        status: "sent".into(),
        message_id: result.message_id,
        target_id: target_id.into_string(),
    }))
}

#[utoipa::path(tag = "messages", request_body = EditMessage, responses((status = 200, body = Targeted),
    (status = 400, description = "Missing or invalid fields"),
    (status = 404, description = "Unknown or unpaired clientId"),
    (status = 502, description = "The network rejected the edit (not this session's message, or older than about 15 minutes)")))]
#[post("/edit-message")]
pub async fn edit_message(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<EditMessage>,
) -> Result<web::Json<Targeted>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let to = compose::recipient(body.to.as_deref())?;
    let target_id = MessageId::parse("messageId", body.message_id.as_deref())?;
    let content = Content::Edit {
        target_id: target_id.clone(),
        body: compose::text("body", body.body, TEXT_MAX)?,
    };
    let result = deliver(&state, &id, bare(to, content), owner::COMMANDS).await?;
    Ok(web::Json(Targeted {
        status: "sent".into(),
        message_id: result.message_id,
        target_id: target_id.into_string(),
    }))
}

/// A message without the envelope (reactions and edits take none).
fn bare(to: parley_model::recipients::Recipient, content: Content) -> OutgoingMessage {
    OutgoingMessage {
        to,
        content,
        quoted_message_id: None,
        mentions: Vec::new(),
        meta: None,
        status: None,
    }
}

#[utoipa::path(tag = "messages", request_body = SendTyping, responses((status = 200, body = StatusText),
    (status = 400, description = "Missing or invalid fields"),
    (status = 404, description = "Unknown or unpaired clientId"),
    (status = 502, description = "The network rejected the indicator")))]
#[post("/send-typing")]
pub async fn send_typing(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SendTyping>,
) -> Result<web::Json<StatusText>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let to = compose::recipient(body.to.as_deref())?;
    let composing = body.composing.unwrap_or(true);
    act(&state, &id, ChatAction::Typing { to, composing }).await?;
    Ok(web::Json(StatusText {
        status: "ok".into(),
    }))
}

/// `mode: me` is sent to the network as a delete-for-me. With a hosted inbox the
/// message must be in history (in `chatRoomId`, else in the room of `to`): else
/// 404; once the network took it, the stored row is marked deleted.
#[utoipa::path(tag = "messages", request_body = DeleteMessage, responses((status = 200, body = StatusFlag),
    (status = 400, description = "Bad mode or missing fields"),
    (status = 404, description = "Unknown or unpaired clientId, or (mode me, hosted inbox) message not found in history"),
    (status = 502, description = "The network rejected the revoke (everyone: own messages only)")))]
#[post("/delete-message")]
pub async fn delete_message(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<DeleteMessage>,
) -> Result<web::Json<StatusFlag>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let to = compose::recipient(body.to.as_deref())?;
    let message_id = MessageId::parse("messageId", body.message_id.as_deref())?;
    let from_me = compose::flag("fromMe", body.from_me)?;
    let mode = match body.mode.as_deref().map(str::trim) {
        Some("everyone") => DeleteMode::Everyone,
        Some("me") => DeleteMode::Me,
        None | Some("") => return Err(ApiError::bad_request("mode is required").into()),
        Some(_) => return Err(ApiError::bad_request("mode must be everyone or me").into()),
    };
    let chat_room_id = compose::optional("chatRoomId", body.chat_room_id, compose::SHORT_MAX)?;
    let stored = if mode == DeleteMode::Me && inbox::hosted(&state, &id).await? {
        let room = match chat_room_id {
            Some(room) => Some(room),
            None => inbox::room_of(&state, &id, &to)
                .await?
                .map(|r| r.chat_room_id),
        };
        let found = match &room {
            Some(room) => state
                .ports
                .db
                .history_message(id.as_str(), room, message_id.as_str())
                .await?
                .map(|_| room.clone()),
            None => None,
        };
        let Some(room) = found else {
            return Err(ApiError::not_found("message not found in history").into());
        };
        Some(room)
    } else {
        None
    };
    let action = ChatAction::Delete {
        to,
        message_id: message_id.clone(),
        from_me,
        mode,
    };
    act(&state, &id, action).await?;
    if let Some(room) = stored
        && let Err(e) = state
            .ports
            .db
            .delete_for_me(id.as_str(), &room, message_id.as_str())
            .await
    {
        tracing::warn!(error = %e, client_id = %id, "cannot mark the stored message deleted");
    }
    crate::audit::done(&req, "delete message", &id);
    Ok(web::Json(StatusFlag { status: true }))
}
