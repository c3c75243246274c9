//! Chat labels (Parley's, beside the spec): list them (`GET /labels`),
//! create or change one (`/set-label`), delete one (`/delete-label`), put
//! one on a chat or take it off (`/set-chat-label`). A change goes to the
//! network through the session's owner (an app-state patch the account's
//! other devices see) and is stored once the network took it; no event.
use actix_web::{HttpRequest, get, post, web};
use parley_contract::error::ApiError;
use parley_contract::wire::labels::{
    ChatLabelSet, DeleteLabel, LabelDeleted, LabelList, LabelListed, LabelSaved, LabelView,
    SetChatLabel, SetLabel,
};
use parley_model::ids::ClientId;
use parley_model::outgoing::{ChatAction, Label};
use serde::Deserialize;

use super::messages::act;
use crate::auth::authorized_client;
use crate::compose;
use crate::{AppState, HttpError};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelsQuery {
    client_id: Option<String>,
}

/// A label id as given.
fn label_id(value: Option<&str>) -> Result<String, ApiError> {
    Ok(Label::parse_id("labelId", value)?)
}

/// A label the session has; 404 otherwise.
async fn existing(state: &AppState, id: &ClientId, label_id: &str) -> Result<Label, ApiError> {
    state
        .ports
        .db
        .label(id.as_str(), label_id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("the session has no label {label_id}")))
}

/// The chats (JIDs) the session's label `label_id` is on; 404 without it.
pub(super) async fn chats_of(
    state: &AppState,
    id: &ClientId,
    label_id: &str,
) -> Result<Vec<String>, ApiError> {
    state
        .ports
        .db
        .label_chats(id.as_str(), label_id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("the session has no label {label_id}")))
}

#[utoipa::path(tag = "chats",
    params(("clientId" = String, Query, description = "The session")),
    responses((status = 200, body = LabelList),
        (status = 400, description = "Missing or invalid clientId"),
        (status = 404, description = "Unknown or unpaired clientId")))]
#[get("/labels")]
pub async fn labels(
    req: HttpRequest,
    state: web::Data<AppState>,
    query: web::Query<LabelsQuery>,
) -> Result<web::Json<LabelList>, HttpError> {
    let id = authorized_client(&req, query.client_id.as_deref().unwrap_or_default())?;
    super::paired(&state, &id).await?;
    let labels = state.ports.db.labels(id.as_str()).await?;
    Ok(web::Json(LabelList {
        client_id: id.to_string(),
        labels: labels
            .into_iter()
            .map(|l| LabelListed {
                id: l.label.id,
                name: l.label.name,
                color: l.label.color,
                chats: l.chats,
            })
            .collect(),
    }))
}

#[utoipa::path(tag = "chats", request_body = SetLabel, responses((status = 200, body = LabelSaved),
    (status = 400, description = "Missing clientId; a new label without a name; a name or colour out of range; a malformed labelId"),
    (status = 404, description = "Unknown or unpaired clientId, or no such label to change"),
    (status = 409, description = "Session not connected"),
    (status = 502, description = "The network did not take it")))]
#[post("/set-label")]
pub async fn set_label(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SetLabel>,
) -> Result<web::Json<LabelSaved>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let name = Label::parse_name(body.name.as_deref())?;
    let color = Label::parse_color(body.color)?;
    super::paired(&state, &id).await?;
    let label = match body.label_id.as_deref() {
        Some(given) => {
            let old = existing(&state, &id, &label_id(Some(given))?).await?;
            Label {
                id: old.id,
                name: name.unwrap_or(old.name),
                color: color.unwrap_or(old.color),
            }
        }
        None => Label {
            id: state.ports.db.next_label_id(id.as_str()).await?,
            name: name.ok_or_else(|| ApiError::bad_request("name is required"))?,
            color: color.unwrap_or(0),
        },
    };
    act(
        &state,
        &id,
        ChatAction::SaveLabel {
            label: label.clone(),
        },
    )
    .await?;
    Ok(web::Json(LabelSaved {
        ok: true,
        client_id: id.to_string(),
        label: LabelView {
            id: label.id,
            name: label.name,
            color: label.color,
        },
    }))
}

#[utoipa::path(tag = "chats", request_body = DeleteLabel, responses((status = 200, body = LabelDeleted),
    (status = 400, description = "Missing clientId or labelId"),
    (status = 404, description = "Unknown or unpaired clientId, or no such label"),
    (status = 409, description = "Session not connected"),
    (status = 502, description = "The network did not take it")))]
#[post("/delete-label")]
pub async fn delete_label(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<DeleteLabel>,
) -> Result<web::Json<LabelDeleted>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let label_id = label_id(body.label_id.as_deref())?;
    super::paired(&state, &id).await?;
    existing(&state, &id, &label_id).await?;
    let action = ChatAction::DeleteLabel {
        label_id: label_id.clone(),
    };
    act(&state, &id, action).await?;
    Ok(web::Json(LabelDeleted {
        ok: true,
        client_id: id.to_string(),
        label_id,
    }))
}

#[utoipa::path(tag = "chats", request_body = SetChatLabel, responses((status = 200, body = ChatLabelSet),
    (status = 400, description = "Missing clientId, to or labelId, or an invalid to"),
    (status = 404, description = "Unknown or unpaired clientId, or no such label"),
    (status = 409, description = "Session not connected"),
    (status = 502, description = "The network did not take it")))]
#[post("/set-chat-label")]
pub async fn set_chat_label(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SetChatLabel>,
) -> Result<web::Json<ChatLabelSet>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let to = compose::recipient(body.to.as_deref())?;
    let label_id = label_id(body.label_id.as_deref())?;
    let labeled = body.labeled.unwrap_or(true);
    super::paired(&state, &id).await?;
    existing(&state, &id, &label_id).await?;
    let action = ChatAction::LabelChat {
        to: to.clone(),
        label_id: label_id.clone(),
        labeled,
    };
    act(&state, &id, action).await?;
    Ok(web::Json(ChatLabelSet {
        ok: true,
        client_id: id.to_string(),
        to: body.to.unwrap_or_default().trim().to_string(),
        label_id,
        labeled,
    }))
}
