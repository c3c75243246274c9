//! `POST /send-status` (Parley's): a status update (a story) of the
//! session's account: a text on a background, or an image or a video
//! fetched from `downloadUrl` as `/send-media-message` does, shown to the
//! contacts named (`audience`) or to every contact the session knows. It is
//! a send: its `fromMe` event is a `status` event (when the session turned
//! `status` on), never a chat's message.
use actix_web::{HttpRequest, post, web};
use parley_contract::error::ApiError;
use parley_contract::wire::messages::{DeleteStatus, SendStatus, StatusDeleted, StatusSent};
use parley_model::address::MessageId;
use parley_model::media::MediaInfo;
use parley_model::outgoing::{
    ChatAction, Content, MediaRequest, MediaSource, OutgoingMessage, STATUS_AUDIENCE_MAX,
    STATUS_FONTS, StatusPost,
};
use parley_model::recipients::Recipient;

use super::messages::{act, deliver};
use crate::auth::authorized_client;
use crate::compose::{self, TEXT_MAX};
use crate::{AppState, HttpError, owner};

/// A background colour, `#RRGGBB` (opaque) or `#AARRGGBB`, as `0xAARRGGBB`.
fn colour(raw: &str) -> Result<u32, ApiError> {
    let hex = raw.trim().strip_prefix('#').unwrap_or_default();
    let valid = matches!(hex.len(), 6 | 8) && hex.bytes().all(|b| b.is_ascii_hexdigit());
    let value = u32::from_str_radix(hex, 16).ok().filter(|_| valid);
    match (value, hex.len()) {
        (Some(rgb), 6) => Ok(0xFF00_0000 | rgb),
        (Some(argb), _) => Ok(argb),
        (None, _) => Err(ApiError::bad_request(
            "backgroundColor must be #RRGGBB or #AARRGGBB",
        )),
    }
}

/// A font's network number, by name.
fn font(raw: &str) -> Result<u32, ApiError> {
    let name = raw.trim();
    STATUS_FONTS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, number)| *number)
        .ok_or_else(|| {
            let names: Vec<&str> = STATUS_FONTS.iter().map(|(n, _)| *n).collect();
            ApiError::bad_request(format!("font must be one of {}", names.join(", ")))
        })
}

/// The contacts named: 1 to [`STATUS_AUDIENCE_MAX`] users (no groups), each once.
fn audience(raw: Option<Vec<String>>) -> Result<Option<Vec<Recipient>>, ApiError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    if raw.is_empty() || raw.len() > STATUS_AUDIENCE_MAX {
        return Err(ApiError::bad_request(format!(
            "audience must name 1 to {STATUS_AUDIENCE_MAX} contacts (leave it out for every contact)"
        )));
    }
    let mut out: Vec<Recipient> = Vec::with_capacity(raw.len());
    for one in &raw {
        let r = Recipient::parse("audience", one)?;
        if r.is_group() {
            return Err(ApiError::bad_request("audience names contacts, not groups"));
        }
        if !out.contains(&r) {
            out.push(r);
        }
    }
    Ok(Some(out))
}

/// The status to post, checked.
fn status(body: SendStatus) -> Result<(Content, StatusPost), ApiError> {
    let kind = body.kind.as_deref().map(str::trim).unwrap_or("text");
    let text = kind == "text";
    if !text && (body.background_color.is_some() || body.font.is_some()) {
        return Err(ApiError::bad_request(
            "backgroundColor and font are a text status's",
        ));
    }
    let content = match kind {
        "text" => Content::Text {
            body: compose::text("body", body.body, TEXT_MAX)?,
        },
        "image" | "video" => Content::Media(MediaRequest {
            source: MediaSource::Url {
                url: compose::download_url(body.download_url)?,
            },
            info: MediaInfo {
                mime_type: compose::mime_type(body.mime_type)?.unwrap_or_default(),
                caption: compose::optional("caption", body.caption, TEXT_MAX)?.unwrap_or_default(),
                ..MediaInfo::default()
            },
            sticker: false,
        }),
        other => {
            return Err(ApiError::bad_request(format!(
                "type: {other:?} is not text, image or video"
            )));
        }
    };
    let post = StatusPost {
        audience: audience(body.audience)?,
        background_argb: body.background_color.as_deref().map(colour).transpose()?,
        font: body.font.as_deref().map(font).transpose()?,
    };
    Ok((content, post))
}

#[utoipa::path(tag = "messages", request_body = SendStatus, responses((status = 200, body = StatusSent),
    (status = 400, description = "Missing or invalid fields, an audience of groups or over 1024 contacts, or no contact known to show it to"),
    (status = 404, description = "Unknown or unpaired clientId"),
    (status = 502, description = "downloadUrl could not be fetched, or the network rejected the status")))]
#[post("/send-status")]
pub async fn send_status(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SendStatus>,
) -> Result<web::Json<StatusSent>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let (content, post) = status(body)?;
    let patience = match content {
        Content::Media(_) => owner::MEDIA,
        _ => owner::COMMANDS,
    };
    let message = OutgoingMessage {
        to: Recipient::Status,
        content,
        quoted_message_id: None,
        mentions: Vec::new(),
        meta: None,
        status: Some(Box::new(post)),
    };
    let result = deliver(&state, &id, message, patience).await?;
    Ok(web::Json(StatusSent {
        status: "sent".into(),
        message_id: result.message_id,
        audience: result.audience.unwrap_or_default(),
        warning: result.warning,
    }))
}

#[utoipa::path(tag = "messages", request_body = DeleteStatus, responses((status = 200, body = StatusDeleted),
    (status = 400, description = "Missing clientId or messageId, or a messageId that is not an id"),
    (status = 404, description = "Unknown or unpaired clientId, or no status with this id posted by the session in the last 24 hours"),
    (status = 409, description = "Session not connected"),
    (status = 502, description = "The network did not take it")))]
#[post("/delete-status")]
pub async fn delete_status(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<DeleteStatus>,
) -> Result<web::Json<StatusDeleted>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    let message_id = MessageId::parse("messageId", body.message_id.as_deref())?.into_string();
    let action = ChatAction::DeleteStatus {
        message_id: message_id.clone(),
    };
    act(&state, &id, action).await?;
    Ok(web::Json(StatusDeleted {
        ok: true,
        client_id: id.to_string(),
        message_id,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_background_is_rgb_or_argb() {
        assert_eq!(colour("#1E6E4F").unwrap(), 0xFF1E_6E4F);
        assert_eq!(colour(" #801e6e4f ").unwrap(), 0x801E_6E4F);
        for bad in ["1E6E4F", "#1E6E4", "#GGGGGG", "#", "#+1E6E4F"] {
            assert_eq!(colour(bad).unwrap_err().status, 400, "{bad}");
        }
    }

    #[test]
    fn fonts_go_by_name() {
        assert_eq!(font("system_bold").unwrap(), 6);
        assert_eq!(font("comic").unwrap_err().status, 400);
    }

    #[test]
    fn an_audience_names_contacts_once() {
        assert_eq!(audience(None).unwrap(), None);
        let named = audience(Some(vec!["+491700000001".into(), "+491700000001".into()]))
            .unwrap()
            .unwrap();
        assert_eq!(named.len(), 1);
        for bad in [
            vec![],
            vec!["120363025246125486@g.us".to_string()],
            vec!["x".into()],
        ] {
            assert_eq!(audience(Some(bad)).unwrap_err().status, 400);
        }
    }
}
