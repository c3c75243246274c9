//! `POST /send-media-message`: JSON mode (the owner fetches `downloadUrl`) or
//! multipart mode (`clientId` in the query; the file is streamed into the media
//! store and the command carries its key, never the bytes).
use actix_web::http::header::CONTENT_TYPE;
use actix_web::{HttpRequest, post, web};
use parley_contract::command::SendResult;
use parley_contract::error::ApiError;
use parley_contract::wire::messages::{MediaSent, SendMediaForm, SendMediaUrl};
use parley_contract::wire::sessions::ClientIdQuery;
use parley_model::ids::ClientId;
use parley_model::media::MediaInfo;
use parley_model::outgoing::{Content, MediaRequest, MediaSource};

use super::messages::deliver;
use crate::auth::authorized_client;
use crate::compose::{self, TEXT_MAX};
use crate::upload::{self, Form};
use crate::{AppState, HttpError, owner};

#[utoipa::path(tag = "messages",
    params(("clientId" = Option<String>, Query, description = "Required in multipart mode")),
    request_body(description = "JSON with a downloadUrl, or a multipart form with the file",
        content((SendMediaUrl = "application/json"), (SendMediaForm = "multipart/form-data"))),
    responses((status = 200, body = MediaSent),
        (status = 400, description = "Missing or invalid fields"),
        (status = 404, description = "Unknown or unpaired clientId"),
        (status = 413, description = "Body over 1 MiB (JSON) or 128 MiB (multipart)"),
        (status = 415, description = "Neither JSON nor multipart/form-data"),
        (status = 502, description = "downloadUrl could not be fetched (non-200, timeout, over 100 MB, refused by the egress guard), or the network rejected the send")))]
#[post("/send-media-message")]
pub async fn send_media(
    req: HttpRequest,
    state: web::Data<AppState>,
    payload: web::Payload,
) -> Result<web::Json<MediaSent>, HttpError> {
    let content_type = req
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    if content_type.starts_with("application/json") {
        by_url(&req, &state, payload).await
    } else if content_type.starts_with("multipart/form-data") {
        by_upload(&req, &state, payload).await
    } else {
        Err(ApiError::unsupported_media_type(
            "expected Content-Type: application/json or multipart/form-data",
        )
        .into())
    }
}

fn answer(result: SendResult, with_bytes: bool) -> web::Json<MediaSent> {
    web::Json(MediaSent {
        status: "sent".into(),
        message_id: result.message_id,
        media_type: result.media_type,
        bytes: result.bytes.filter(|_| with_bytes),
        fallback: result.fallback,
        warning: result.warning,
    })
}

/// JSON mode.
async fn by_url(
    req: &HttpRequest,
    state: &AppState,
    payload: web::Payload,
) -> Result<web::Json<MediaSent>, HttpError> {
    let raw = crate::auth::read_body(payload.into_inner()).await?;
    let body: SendMediaUrl = serde_json::from_slice(&raw).map_err(|e| {
        if e.is_data() {
            ApiError::bad_request(format!("invalid request body: {e}"))
        } else {
            ApiError::bad_request(format!("malformed JSON: {e}"))
        }
    })?;
    let id = authorized_client(req, &body.client_id)?;
    let to = compose::recipient(body.to.as_deref())?;
    let request = MediaRequest {
        source: MediaSource::Url {
            url: compose::download_url(body.download_url)?,
        },
        info: MediaInfo {
            mime_type: compose::mime_type(body.mime_type)?.unwrap_or_default(),
            file_name: compose::file_name(body.file_name)?.unwrap_or_default(),
            caption: compose::optional("caption", body.caption, TEXT_MAX)?.unwrap_or_default(),
            ptt: body.send_audio_as_voice.unwrap_or(false),
            view_once: body.view_once.unwrap_or(false),
        },
        sticker: body.as_sticker.unwrap_or(false),
    };
    let message = compose::message(to, Content::Media(request), body.envelope)?;
    let result = deliver(state, &id, message, owner::MEDIA).await?;
    Ok(answer(result, true))
}

/// Multipart mode.
async fn by_upload(
    req: &HttpRequest,
    state: &AppState,
    payload: web::Payload,
) -> Result<web::Json<MediaSent>, HttpError> {
    let query = web::Query::<ClientIdQuery>::from_query(req.query_string())
        .map_err(|e| ApiError::bad_request(format!("invalid query string: {e}")))?;
    if query.client_id.is_empty() {
        return Err(ApiError::bad_request(
            "clientId is required in the query string for multipart uploads",
        )
        .into());
    }
    let id = authorized_client(req, &query.client_id)?;
    // No upload for a session that does not exist (the owner tells unpaired ones).
    if state.ports.db.session(id.as_str()).await?.is_none() {
        return Err(ApiError::not_found("unknown or unpaired clientId").into());
    }
    let store = state.ports.media.as_ref();
    let form = upload::read_form(req, payload, store).await?;
    let key = form.file.as_ref().map(|f| f.key.clone());
    let sent = send_form(state, &id, form).await;
    if sent.is_err()
        && let Some(key) = key
    {
        // Not (or no longer) needed by the owner, which deletes it after a send.
        upload::discard(store, &key).await;
    }
    Ok(answer(sent?, false))
}

async fn send_form(state: &AppState, id: &ClientId, form: Form) -> Result<SendResult, ApiError> {
    let Form { file, mut fields } = form;
    let mut take = |name: &str| fields.remove(name);
    if let Some(named) = take("clientId").filter(|n| !n.is_empty())
        && named != id.as_str()
    {
        return Err(ApiError::bad_request(
            "the clientId part differs from the clientId in the query string",
        ));
    }
    let to = compose::recipient(take("to").as_deref())?;
    let file = file.ok_or_else(|| ApiError::bad_request("file is required"))?;
    let voice = truth("sendAudioAsVoice", take("sendAudioAsVoice"))?;
    let sticker = truth("asSticker", take("asSticker"))?;
    let view_once = truth("viewOnce", take("viewOnce"))?;
    let caption = compose::optional("caption", take("caption"), TEXT_MAX)?;
    let quoted_message_id = take("quotedMessageId");
    let mentions = take("mentions").map(|m| {
        m.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect::<Vec<_>>()
    });
    let meta_data = take("metaData")
        .filter(|m| !m.trim().is_empty())
        .map(|m| {
            serde_json::from_str(&m)
                .map_err(|_| ApiError::bad_request("metaData must be a JSON object (as text)"))
        })
        .transpose()?;
    let request = MediaRequest {
        source: MediaSource::Upload { key: file.key },
        info: MediaInfo {
            mime_type: file.content_type,
            file_name: compose::file_name(file.file_name)?.unwrap_or_default(),
            caption: caption.unwrap_or_default(),
            ptt: voice,
            view_once,
        },
        sticker,
    };
    let envelope = parley_contract::wire::messages::Envelope {
        quoted_message_id,
        mentions,
        meta_data,
    };
    let message = compose::message(to, Content::Media(request), envelope)?;
    deliver(state, id, message, owner::MEDIA).await
}

/// A flag part: `true` or `false` (absent: false).
fn truth(name: &str, value: Option<String>) -> Result<bool, ApiError> {
    match value.as_deref().map(str::trim) {
        None | Some("") | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(_) => Err(ApiError::bad_request(format!(
            "{name} must be true or false"
        ))),
    }
}
