//! Calls (Parley's): whether a session rejects the calls that ring it as
//! they come, with a text to the caller (`/set-call-rejection`, stored and
//! applied by the owner at once, so it holds across reconnects and moves),
//! and the rejection of one call that rings now (`/reject-call`). The calls
//! themselves are the opt-in `call` events.
use actix_web::{HttpRequest, post, web};
use parley_contract::error::ApiError;
use parley_contract::wire::sessions::{
    CallRejected, CallRejectionSet, RejectCall, SetCallRejection,
};
use parley_model::address::MessageId;
use parley_model::outgoing::ChatAction;
use parley_shared::db::SettingsPatch;

use super::messages::act;
use super::settings::store;
use crate::auth::authorized_client;
use crate::compose::TEXT_MAX;
use crate::{AppState, HttpError};

/// The setting a `/set-call-rejection` body asks for: whether to reject,
/// and the reply (empty: none).
fn rejection(body: &SetCallRejection) -> Result<(bool, String), ApiError> {
    let reject = body
        .reject
        .ok_or_else(|| ApiError::bad_request("reject is required (true or false)"))?;
    let reply = body.reply_text.as_deref().unwrap_or_default().trim();
    if reply.chars().count() > TEXT_MAX {
        return Err(ApiError::bad_request(format!(
            "replyText is longer than {TEXT_MAX} characters"
        )));
    }
    if !reject && !reply.is_empty() {
        return Err(ApiError::bad_request(
            "replyText is sent after a rejection: it needs reject: true",
        ));
    }
    Ok((reject, reply.to_string()))
}

#[utoipa::path(tag = "sessions", request_body = SetCallRejection, responses((status = 200, body = CallRejectionSet),
    (status = 400, description = "Missing clientId or reject, a replyText too long, or a replyText without reject: true"),
    (status = 404, description = "Unknown clientId")))]
#[post("/set-call-rejection")]
pub async fn set_call_rejection(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SetCallRejection>,
) -> Result<web::Json<CallRejectionSet>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let (reject, reply) = rejection(&body)?;
    let patch = SettingsPatch {
        reject_calls: Some(reject),
        call_reply: Some(reply),
        ..Default::default()
    };
    let row = store(&state, &id, patch).await?;
    Ok(web::Json(CallRejectionSet {
        ok: true,
        client_id: row.client_id,
        reject: row.reject_calls,
        reply_text: row.call_reply,
    }))
}

#[utoipa::path(tag = "sessions", request_body = RejectCall, responses((status = 200, body = CallRejected),
    (status = 400, description = "Missing clientId or callId, or a callId that is not an id"),
    (status = 404, description = "Unknown or unpaired clientId, or no call with this id rings the session"),
    (status = 409, description = "Session not connected"),
    (status = 502, description = "The network did not take it")))]
#[post("/reject-call")]
pub async fn reject_call(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<RejectCall>,
) -> Result<web::Json<CallRejected>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let call_id = MessageId::parse("callId", body.call_id.as_deref())?.into_string();
    let action = ChatAction::RejectCall {
        call_id: call_id.clone(),
    };
    act(&state, &id, action).await?;
    Ok(web::Json(CallRejected {
        ok: true,
        client_id: id.to_string(),
        call_id,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(reject: Option<bool>, reply: Option<&str>) -> SetCallRejection {
        SetCallRejection {
            client_id: "c".into(),
            reject,
            reply_text: reply.map(str::to_string),
        }
    }

    #[test]
    fn a_rejection_names_reject_and_replies_only_when_it_rejects() {
        assert_eq!(
            rejection(&body(Some(true), Some(" busy "))).unwrap(),
            (true, "busy".into())
        );
        assert_eq!(
            rejection(&body(Some(true), None)).unwrap(),
            (true, String::new())
        );
        assert_eq!(
            rejection(&body(Some(false), Some(""))).unwrap(),
            (false, String::new())
        );
        let long = "x".repeat(TEXT_MAX + 1);
        for bad in [
            body(None, None),
            body(Some(false), Some("busy")),
            body(Some(true), Some(&long)),
        ] {
            assert_eq!(rejection(&bad).unwrap_err().status, 400, "{bad:?}");
        }
    }
}
