//! Session settings: webhook, the event types it takes, workspace id, group
//! delivery, opt-in events. Stored first, then the owner is told to apply
//! them at once (no restart).
use std::time::Duration;

use actix_web::{HttpRequest, post, web};
use parley_contract::command::Command;
use parley_contract::error::ApiError;
use parley_contract::event::{OPT_IN_EVENTS, event_types};
use parley_contract::pacing::Pacing;
use parley_contract::wire::sessions::{
    EventsSet, GroupAiSet, OrgIdSet, SendPacingSet, SetEnableGroupAi, SetEvents, SetOrgId,
    SetSendPacing, SetWebhook, SetWebhookTypes, WebhookSet, WebhookTypesSet,
};
use parley_model::ids::ClientId;
use parley_shared::bus::commands;
use parley_shared::bus::session_subject;
use parley_shared::db::SettingsPatch;
use parley_shared::urls;

use crate::auth::authorized_client;
use crate::{AppState, HttpError};

/// Stores a settings change; 404 when the session does not exist.
pub(super) async fn store(
    state: &AppState,
    id: &ClientId,
    patch: SettingsPatch,
) -> Result<parley_shared::db::SessionRow, ApiError> {
    let row = state
        .ports
        .db
        .update_settings(id.as_str(), patch)
        .await?
        .ok_or_else(|| ApiError::not_found("unknown clientId"))?;
    reload(state, id).await;
    Ok(row)
}

/// Tells the owner (if any) to re-read its settings. A session without an owner
/// reads them when it starts, so failures here lose nothing.
async fn reload(state: &AppState, id: &ClientId) {
    let request_id = uuid::Uuid::new_v4().to_string();
    let subject = session_subject(id.as_str());
    let sent = commands::call(
        state.ports.bus.as_ref(),
        &subject,
        &Command::Reload,
        &request_id,
        Duration::from_secs(3),
    )
    .await;
    if let Err(e) = sent {
        tracing::debug!(client_id = %id, error = %e, "settings reload not delivered");
    }
}

#[utoipa::path(tag = "sessions", request_body = SetWebhook, responses((status = 200, body = WebhookSet),
    (status = 400, description = "Missing clientId or invalid URL"), (status = 404, description = "Unknown clientId")))]
#[post("/set-webhook")]
pub async fn set_webhook(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SetWebhook>,
) -> Result<web::Json<WebhookSet>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let allow_http = state.config.allow_http_webhooks;
    let webhook_url = urls::callback_url("webhookUrl", &body.webhook_url, allow_http)?;
    let poll_lookup_url = body
        .poll_lookup_url
        .as_deref()
        .map(|u| urls::callback_url("pollLookupUrl", u, allow_http))
        .transpose()?;
    let patch = SettingsPatch {
        webhook_url: Some(webhook_url),
        webhook_token: body.webhook_token,
        poll_lookup_url,
        ..Default::default()
    };
    let row = store(&state, &id, patch).await?;
    crate::audit::done(&req, "set webhook", &id);
    Ok(web::Json(WebhookSet {
        ok: true,
        client_id: row.client_id,
        webhook_url: row.webhook_url,
        poll_lookup_url: row.poll_lookup_url,
    }))
}

/// Most names a webhook's selection may list (duplicates count).
const SELECTED_MAX: usize = 32;

/// The event types `raw` names, each once, in the order given: `None` for
/// every type; a name that is not an event type, an empty or an oversized
/// list is a 400.
fn selected_types(raw: Option<Vec<String>>) -> Result<Option<Vec<String>>, ApiError> {
    let Some(raw) = raw else { return Ok(None) };
    if raw.is_empty() || raw.len() > SELECTED_MAX {
        return Err(ApiError::bad_request(format!(
            "types must name 1 to {SELECTED_MAX} event types (null: every type; an empty webhookUrl stops delivery)"
        )));
    }
    each_once("types", &raw, &event_types()).map(Some)
}

/// The names of `raw` (trimmed), each once, in the order given; a name not
/// in `known` is a 400 naming `field` and listing them.
fn each_once(field: &str, raw: &[String], known: &[&str]) -> Result<Vec<String>, ApiError> {
    let mut names: Vec<String> = Vec::new();
    for name in raw.iter().map(|n| n.trim()) {
        if !known.contains(&name) {
            return Err(ApiError::bad_request(format!(
                "{field}: {name:?} is not one of {}",
                known.join(", ")
            )));
        }
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    Ok(names)
}

#[utoipa::path(tag = "sessions", request_body = SetWebhookTypes, responses((status = 200, body = WebhookTypesSet),
    (status = 400, description = "Missing clientId, an empty list, or a name that is not an event type"),
    (status = 404, description = "Unknown clientId")))]
#[post("/set-webhook-types")]
pub async fn set_webhook_types(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SetWebhookTypes>,
) -> Result<web::Json<WebhookTypesSet>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let types = selected_types(body.types)?;
    let patch = SettingsPatch {
        webhook_types: Some(types.unwrap_or_default()),
        ..Default::default()
    };
    let row = store(&state, &id, patch).await?;
    crate::audit::done(&req, "set webhook types", &id);
    Ok(web::Json(WebhookTypesSet {
        ok: true,
        types: row.selected_types(),
        client_id: row.client_id,
    }))
}

#[utoipa::path(tag = "sessions", request_body = SetOrgId, responses((status = 200, body = OrgIdSet),
    (status = 404, description = "Session not active")))]
#[post("/set-org-id")]
pub async fn set_org_id(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SetOrgId>,
) -> Result<web::Json<OrgIdSet>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    if body.org_id.len() > 200 {
        return Err(ApiError::bad_request("orgId is longer than 200 characters").into());
    }
    let patch = SettingsPatch {
        org_id: Some(body.org_id.trim().to_string()),
        ..Default::default()
    };
    let row = store(&state, &id, patch).await?;
    crate::audit::done(&req, "set orgId", &id);
    Ok(web::Json(OrgIdSet {
        ok: true,
        client_id: row.client_id,
        org_id: row.org_id,
    }))
}

#[utoipa::path(tag = "sessions", request_body = SetEnableGroupAi, responses((status = 200, body = GroupAiSet),
    (status = 404, description = "Unknown clientId")))]
#[post("/set-enable-group-ai")]
pub async fn set_enable_group_ai(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SetEnableGroupAi>,
) -> Result<web::Json<GroupAiSet>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let patch = SettingsPatch {
        enable_group_ai: Some(body.enabled),
        ..Default::default()
    };
    let row = store(&state, &id, patch).await?;
    Ok(web::Json(GroupAiSet {
        ok: true,
        client_id: row.client_id,
        enabled: row.enable_group_ai,
    }))
}

#[utoipa::path(tag = "sessions", request_body = SetEvents, responses((status = 200, body = EventsSet),
    (status = 400, description = "Missing events, or one that is not an event a session can turn on"),
    (status = 404, description = "Unknown clientId")))]
#[post("/set-events")]
pub async fn set_events(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SetEvents>,
) -> Result<web::Json<EventsSet>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let events = each_once("events", &body.events, OPT_IN_EVENTS)?;
    let patch = SettingsPatch {
        events: Some(events),
        ..Default::default()
    };
    let row = store(&state, &id, patch).await?;
    crate::audit::done(&req, "set events", &id);
    Ok(web::Json(EventsSet {
        ok: true,
        client_id: row.client_id,
        events: row.events,
    }))
}

#[utoipa::path(tag = "sessions", request_body = SetSendPacing, responses((status = 200, body = SendPacingSet),
    (status = 400, description = "Missing or out-of-range messagesPerMinute or burst"),
    (status = 404, description = "Unknown clientId")))]
#[post("/set-send-pacing")]
pub async fn set_send_pacing(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SetSendPacing>,
) -> Result<web::Json<SendPacingSet>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let pacing = Pacing::from_request(body.messages_per_minute, body.burst)?;
    let patch = SettingsPatch {
        pacing: Some(pacing),
        ..Default::default()
    };
    let row = store(&state, &id, patch).await?;
    Ok(web::Json(SendPacingSet {
        ok: true,
        client_id: row.client_id,
        pacing: row.pacing,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Option<Vec<String>> {
        Some(list.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn a_selection_names_event_types_once_or_every_type() {
        assert_eq!(selected_types(None).unwrap(), None);
        assert_eq!(
            selected_types(names(&[" text", "receipt", "text"])).unwrap(),
            names(&["text", "receipt"])
        );
        for bad in [names(&[]), names(&["message.received"]), names(&["Text"])] {
            let e = selected_types(bad).unwrap_err();
            assert_eq!(e.status, 400, "{e:?}");
        }
        let many: Vec<String> = std::iter::repeat_n("text".to_string(), SELECTED_MAX + 1).collect();
        assert!(selected_types(Some(many)).is_err());
    }
}
