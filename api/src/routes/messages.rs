//! The message sends: text, polls, interactive buttons, locations, contact
//! cards. Each body is validated into a `Command::Send` for the session owner,
//! which answers with the network's message id.
use actix_web::{HttpRequest, post, web};
use parley_contract::command::SendResult;
use parley_contract::command::{Command, Reply};
use parley_contract::error::ApiError;
use parley_contract::wire::messages::{
    SendContact, SendInteractive, SendLocation, SendPoll, SendText, Sent,
};
use parley_model::ids::ClientId;
use parley_model::outgoing::{ChatAction, Content, OutgoingMessage};

use super::lifecycle::unexpected;
use crate::auth::authorized_client;
use crate::compose::{self, TEXT_MAX};
use crate::owner::{self, Patience};
use crate::{AppState, HttpError};

/// Sends `message` through the session's owner.
pub(super) async fn deliver(
    state: &AppState,
    id: &ClientId,
    message: OutgoingMessage,
    patience: Patience,
) -> Result<SendResult, ApiError> {
    match owner::send_with(state, id, Command::Send(message), patience).await? {
        Reply::Sent(result) => Ok(result),
        other => Err(unexpected(other)),
    }
}

/// Carries out a chat action through the session's owner.
pub(super) async fn act(
    state: &AppState,
    id: &ClientId,
    action: ChatAction,
) -> Result<(), ApiError> {
    match owner::send(state, id, Command::Chat(action)).await? {
        Reply::Done => Ok(()),
        other => Err(unexpected(other)),
    }
}

/// `{status: "sent", messageId}` of a plain send.
async fn sent(
    state: &AppState,
    id: &ClientId,
    message: OutgoingMessage,
) -> Result<web::Json<Sent>, HttpError> {
    let result = deliver(state, id, message, owner::COMMANDS).await?;
    Ok(web::Json(Sent {
        status: "sent".into(),
        message_id: result.message_id,
        warning: result.warning,
    }))
}

#[utoipa::path(tag = "messages", request_body = SendText, responses((status = 200, body = Sent),
    (status = 400, description = "Missing or invalid fields"),
    (status = 404, description = "Unknown or unpaired clientId"),
    (status = 502, description = "The network rejected the send; nothing was delivered")))]
#[post("/send-message")]
pub async fn send_message(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SendText>,
) -> Result<web::Json<Sent>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let to = compose::recipient(body.to.as_deref())?;
    let content = Content::Text {
        body: compose::text("body", body.body, TEXT_MAX)?,
    };
    let message = compose::message(to, content, body.envelope)?;
    sent(&state, &id, message).await
}

#[utoipa::path(tag = "messages", request_body = SendPoll, responses((status = 200, body = Sent),
    (status = 400, description = "Missing or invalid fields: 2 to 12 distinct options, selectableCount 1 to the number of options"),
    (status = 404, description = "Unknown or unpaired clientId"),
    (status = 502, description = "The network rejected the send; nothing was delivered")))]
#[post("/send-poll-message")]
pub async fn send_poll(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SendPoll>,
) -> Result<web::Json<Sent>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let to = compose::recipient(body.to.as_deref())?;
    let content = compose::poll(body.poll_name, body.poll_options, body.selectable_count)?;
    let message = compose::message(to, content, body.envelope)?;
    sent(&state, &id, message).await
}

#[utoipa::path(tag = "messages", request_body = SendInteractive, responses((status = 200, body = Sent),
    (status = 400, description = "Missing or invalid fields, or a button without the fields of its type"),
    (status = 404, description = "Unknown or unpaired clientId"),
    (status = 502, description = "The network rejected the send; nothing was delivered")))]
#[post("/send-interactive-message")]
pub async fn send_interactive(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SendInteractive>,
) -> Result<web::Json<Sent>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let to = compose::recipient(body.to.as_deref())?;
    let content = Content::Interactive {
        body: compose::text("bodyText", body.body_text, TEXT_MAX)?,
        footer: compose::optional("footerText", body.footer_text, compose::SHORT_MAX)?,
        buttons: compose::buttons(body.buttons)?,
    };
    let message = compose::message(to, content, body.envelope)?;
    sent(&state, &id, message).await
}

#[utoipa::path(tag = "messages", request_body = SendLocation, responses((status = 200, body = Sent),
    (status = 400, description = "Missing or invalid fields: latitude -90 to 90, longitude -180 to 180"),
    (status = 404, description = "Unknown or unpaired clientId"),
    (status = 502, description = "The network rejected the send; nothing was delivered")))]
#[post("/send-location")]
pub async fn send_location(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SendLocation>,
) -> Result<web::Json<Sent>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let to = compose::recipient(body.to.as_deref())?;
    let content = compose::location(body.latitude, body.longitude, body.name, body.address)?;
    let message = compose::message(to, content, body.envelope)?;
    sent(&state, &id, message).await
}

#[utoipa::path(tag = "messages", request_body = SendContact, responses((status = 200, body = Sent),
    (status = 400, description = "Missing or invalid fields: phone or vcard is required"),
    (status = 404, description = "Unknown or unpaired clientId"),
    (status = 502, description = "The network rejected the send; nothing was delivered")))]
#[post("/send-contact")]
pub async fn send_contact(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SendContact>,
) -> Result<web::Json<Sent>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let to = compose::recipient(body.to.as_deref())?;
    let content = compose::contact_card(body.display_name, body.phone, body.vcard)?;
    let message = compose::message(to, content, body.envelope)?;
    sent(&state, &id, message).await
}
