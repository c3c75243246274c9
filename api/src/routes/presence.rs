//! The session's own presence (`/set-presence`, Parley's): said on the
//! network through the session's owner, then stored, so the owner says it
//! again after every reconnect and a session's next owner after a move.
use actix_web::{HttpRequest, post, web};
use parley_contract::error::ApiError;
use parley_contract::wire::sessions::{PresenceSet, SetPresence, presence_available};
use parley_model::outgoing::ChatAction;
use parley_shared::db::SettingsPatch;

use super::messages::act;
use super::settings::store;
use crate::auth::authorized_client;
use crate::{AppState, HttpError};

/// Whether `presence` says online; a missing or other value is a 400.
fn available(presence: Option<&str>) -> Result<bool, ApiError> {
    let Some(value) = presence.map(str::trim) else {
        return Err(ApiError::bad_request(
            "presence is required (available or unavailable)",
        ));
    };
    presence_available(value).ok_or_else(|| {
        ApiError::bad_request(format!(
            "presence: {value:?} is not available or unavailable"
        ))
    })
}

#[utoipa::path(tag = "sessions", request_body = SetPresence, responses((status = 200, body = PresenceSet),
    (status = 400, description = "Missing clientId, or a presence other than available or unavailable"),
    (status = 404, description = "Unknown or unpaired clientId"),
    (status = 409, description = "Session not connected"),
    (status = 502, description = "The network did not take it")))]
#[post("/set-presence")]
pub async fn set_presence(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SetPresence>,
) -> Result<web::Json<PresenceSet>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let available = available(body.presence.as_deref())?;
    act(&state, &id, ChatAction::SetPresence { available }).await?;
    let presence = if available {
        "available"
    } else {
        "unavailable"
    };
    let patch = SettingsPatch {
        presence: Some(presence.to_string()),
        ..Default::default()
    };
    let row = store(&state, &id, patch).await?;
    Ok(web::Json(PresenceSet {
        ok: true,
        client_id: row.client_id,
        presence: row.presence,
    }))
}

#[cfg(test)]
mod tests {
    use super::available;

    #[test]
    fn a_presence_is_available_or_unavailable() {
        assert!(available(Some("available")).unwrap());
        assert!(!available(Some(" unavailable")).unwrap());
        for bad in [None, Some(""), Some("online"), Some("Available")] {
            assert_eq!(available(bad).unwrap_err().status, 400, "{bad:?}");
        }
    }
}
