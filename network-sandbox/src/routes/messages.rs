//! `POST /sandbox/messages` (sandbox mode only): someone on the simulated network
//! sends the session a message. Files go to the sandbox CDN here; the message,
//! carrying only where to fetch them, goes to the session's owner.
use super::wire::{GeneratedFile, SandboxMessage, SandboxMessageSent};
use crate::injected::{InjectedContent, InjectedMessage};
use crate::ops::SandboxOp;
use crate::store::generated::MAX_LEN;
use crate::store::media::generated_media;
use actix_web::{HttpRequest, post, web};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use parley_model::address::MessageId;
use parley_model::media::MediaInfo;
use parley_shared::command::Reply;
use parley_shared::error::ApiError;

use parley_api::extension::authorized_client;
use parley_api::extension::{ask_owner, known, unexpected};
use parley_api::{AppState, HttpError};

const MEDIA_TYPES: &[&str] = &["image", "video", "audio", "document", "sticker"];

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
    let content = content(&state, id.as_str(), &body).await?;
    let message = InjectedMessage {
        from: body.from.trim().trim_start_matches('+').to_string(),
        chat: body
            .chat
            .map(|c| c.trim().trim_start_matches('+').to_string())
            .filter(|c| !c.is_empty()),
        message_id: body.message_id.and_then(MessageId::new),
        quoted_message_id: body.quoted_message_id.and_then(MessageId::new),
        mentions: body.mentions.unwrap_or_default(),
        is_forwarded: body.is_forwarded.unwrap_or(false),
        content,
    };
    match ask_owner(
        &state,
        &id,
        SandboxOp::Message(Box::new(message)).command()?,
    )
    .await?
    {
        Reply::MessageId { message_id } => Ok(web::Json(SandboxMessageSent { message_id })),
        other => Err(unexpected(other).into()),
    }
}

/// A media message's file.
enum File {
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

/// The message's content, validated per `type`; a file is uploaded to the CDN.
async fn content(
    state: &AppState,
    client_id: &str,
    b: &SandboxMessage,
) -> Result<InjectedContent, ApiError> {
    let media = match checked(b)? {
        Checked::Other(content) => return Ok(content),
        Checked::Media(media) => media,
    };
    let download = match media.file {
        File::Bytes(bytes) => {
            super::store(state)
                .put_sandbox_media(client_id, &bytes)
                .await?
        }
        File::Generated { seed, size } => generated_media(seed, size),
    };
    Ok(InjectedContent::Media {
        kind: b.kind.clone(),
        info: MediaInfo {
            mime_type: media.mime_type,
            file_name: b.file_name.clone().unwrap_or_default(),
            caption: b.caption.clone().unwrap_or_default(),
            ptt: b.ptt.unwrap_or(false),
            // Only images and videos can be shown once.
            view_once: b.view_once == Some(true) && matches!(b.kind.as_str(), "image" | "video"),
        },
        download,
    })
}

/// A media message's file and type, checked.
struct Media {
    file: File,
    mime_type: String,
}

/// A message's content as the contract checks it, its file not yet stored.
enum Checked {
    Media(Media),
    Other(InjectedContent),
}

/// Checks `b` as `/sandbox/messages` does (besides `clientId` and `from`):
/// the contract's field rules per `type`, for every network the route drives.
pub fn check(b: &SandboxMessage) -> Result<(), ApiError> {
    checked(b).map(drop)
}

fn checked(b: &SandboxMessage) -> Result<Checked, ApiError> {
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
