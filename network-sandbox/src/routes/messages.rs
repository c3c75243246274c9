//! `POST /sandbox/messages`: someone on the network sends the session a
//! message. The body is checked here, per `type`, for every network the
//! route drives; the test network delivers it.
use super::controls::network;
use crate::injected::InjectedContent;
use crate::store::generated::MAX_LEN;
use actix_web::{HttpRequest, post, web};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use parley_contract::error::ApiError;
use parley_contract::wire::sandbox::{GeneratedFile, SandboxMessage, SandboxMessageSent};
use parley_model::address::MessageId;

use parley_api::extension::{authorized_client, known};
use parley_api::{AppState, HttpError};

/// The `type`s of a file.
pub(super) const MEDIA_TYPES: &[&str] = &["image", "video", "audio", "document", "sticker"];

#[utoipa::path(tag = "sandbox", request_body = SandboxMessage, responses((status = 200, body = SandboxMessageSent),
    (status = 400, description = "Invalid body"), (status = 404, description = "Unknown clientId"),
    (status = 409, description = "Session not connected")))]
#[post("/sandbox/messages")]
pub async fn messages(
    req: HttpRequest,
    state: web::Data<AppState>,
    body: web::Json<SandboxMessage>,
) -> Result<web::Json<SandboxMessageSent>, HttpError> {
    let body = body.into_inner();
    let id = authorized_client(&req, &body.client_id)?;
    if body.from.trim().is_empty() {
        return Err(ApiError::bad_request("from is required (a phone number or \"me\")").into());
    }
    known(&state, id.as_str()).await?;
    check(&body)?;
    Ok(web::Json(network(&req, &state)?.message(&id, body).await?))
}

/// A media message's file.
pub(super) enum File {
    Bytes(Vec<u8>),
    Generated { seed: u64, size: u64 },
}

/// `data`: base64 of at least one byte.
fn decoded(data: String) -> Result<Vec<u8>, ApiError> {
    let bytes = STANDARD
        .decode(data.trim())
        .map_err(|_| ApiError::bad_request("data must be base64"))?;
    if bytes.is_empty() {
        return Err(ApiError::bad_request("data must not be empty"));
    }
    Ok(bytes)
}

/// `generate`: a size of 1 byte to 4 GiB, and a seed (default 0).
fn generated(g: &GeneratedFile) -> Result<File, ApiError> {
    match g.size {
        Some(size @ 1..=MAX_LEN) => Ok(File::Generated {
            seed: g.seed.unwrap_or(0),
            size,
        }),
        _ => Err(ApiError::bad_request(
            "generate.size is required: 1 byte to 4 GiB (4294967296)",
        )),
    }
}

/// A media message's file and type, checked.
pub(super) struct Media {
    pub(super) file: File,
    pub(super) mime_type: String,
}

/// A message's content as the contract checks it, its file not yet stored.
pub(super) enum Checked {
    Media(Media),
    Other(InjectedContent),
}

/// Checks `b` as `/sandbox/messages` does (besides `clientId` and `from`):
/// the contract's field rules per `type`, for every network the route drives.
pub fn check(b: &SandboxMessage) -> Result<(), ApiError> {
    checked(b).map(drop)
}

pub(super) fn checked(b: &SandboxMessage) -> Result<Checked, ApiError> {
    let kind = b.kind.as_str();
    if MEDIA_TYPES.contains(&kind) {
        let file = match (&b.data, &b.generate) {
            (Some(_), Some(_)) => {
                return Err(ApiError::bad_request("give data or generate, not both"));
            }
            (None, Some(generate)) => generated(generate)?,
            (_, None) => File::Bytes(decoded(required(&b.data, "data")?)?),
        };
        let mime_type = required(&b.mime_type, "mimeType")?;
        return Ok(Checked::Media(Media { file, mime_type }));
    }
    Ok(Checked::Other(match kind {
        "text" => InjectedContent::Text {
            body: required(&b.body, "body")?,
        },
        "location" => {
            let (Some(latitude), Some(longitude)) = (b.latitude, b.longitude) else {
                return Err(ApiError::bad_request("latitude and longitude are required"));
            };
            if !(-90.0..=90.0).contains(&latitude) || !(-180.0..=180.0).contains(&longitude) {
                return Err(ApiError::bad_request("latitude or longitude out of range"));
            }
            InjectedContent::Location {
                latitude,
                longitude,
                name: b.name.clone().unwrap_or_default(),
                address: b.address.clone().unwrap_or_default(),
                live: b.live.unwrap_or(false),
            }
        }
        "contact" => InjectedContent::Contact {
            display_name: required(&b.display_name, "displayName")?,
            vcard: required(&b.vcard, "vcard")?,
        },
        "poll_creation" => {
            let options = b.poll_options.clone().unwrap_or_default();
            if options.len() < 2 {
                return Err(ApiError::bad_request(
                    "pollOptions needs at least 2 options",
                ));
            }
            InjectedContent::PollCreation {
                name: required(&b.poll_name, "pollName")?,
                selectable_count: b.selectable_count.unwrap_or(1),
                options,
            }
        }
        "vote_update" => {
            let selected_options = b.selected_options.clone().unwrap_or_default();
            InjectedContent::VoteUpdate {
                poll_message_id: required_id(&b.poll_message_id, "pollMessageId")?,
                selected_options,
            }
        }
        "interactive_reply" => InjectedContent::InteractiveReply {
            target_id: required_id(&b.target_id, "targetId")?,
            button_id: required(&b.button_id, "buttonId")?,
            display_text: b.display_text.clone().unwrap_or_default(),
        },
        "reaction" => InjectedContent::Reaction {
            target_id: required_id(&b.target_id, "targetId")?,
            emoji: b
                .emoji
                .clone()
                .ok_or_else(|| ApiError::bad_request("emoji is required (empty removes it)"))?,
        },
        "edit" => InjectedContent::Edit {
            target_id: required_id(&b.target_id, "targetId")?,
            body: required(&b.body, "body")?,
        },
        "revoke" => InjectedContent::Revoke {
            target_id: required_id(&b.target_id, "targetId")?,
        },
        "" => return Err(ApiError::bad_request("type is required")),
        other => {
            return Err(ApiError::bad_request(format!(
                "unknown type {other:?}: one of text, image, video, audio, document, sticker, \
                 location, contact, poll_creation, vote_update, interactive_reply, reaction, edit, revoke"
            )));
        }
    }))
}

fn required(value: &Option<String>, field: &str) -> Result<String, ApiError> {
    match value.as_deref().map(str::trim) {
        Some(v) if !v.is_empty() => Ok(v.to_string()),
        _ => Err(ApiError::bad_request(format!("{field} is required"))),
    }
}

/// A message id the body names in `field` (any non-empty string: the sandbox
/// plays the network, whose ids are opaque).
fn required_id(value: &Option<String>, field: &str) -> Result<MessageId, ApiError> {
    required(value, field).and_then(|v| {
        MessageId::new(v).ok_or_else(|| ApiError::bad_request(format!("{field} is required")))
    })
}
