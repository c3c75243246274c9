//! Send bodies validated into typed commands: every rule of the spec's Messages
//! part that holds before the network is asked (a broken one is a 400 naming
//! the field): required fields, recipients, message ids, the envelope, polls,
//! coordinates, contact cards, buttons (`buttons.rs`), vCards (`vcard.rs`).
mod buttons;
mod vcard;

use parley_contract::error::ApiError;
use parley_contract::wire::messages::Envelope;
use parley_model::address::MessageId;
use parley_model::outgoing::{Content, OutgoingMessage};
use parley_model::recipients::{self, Recipient};
use serde_json::Value;

pub use buttons::buttons;
pub use vcard::contact_card;

/// Longest text, caption or edit (characters).
pub const TEXT_MAX: usize = 65_536;
/// Longest poll question.
pub const POLL_NAME_MAX: usize = 255;
/// Longest poll option.
pub const POLL_OPTION_MAX: usize = 100;
/// Poll options allowed.
pub const POLL_OPTIONS: std::ops::RangeInclusive<usize> = 2..=12;
/// Longest short field (names, labels, ids, file names).
pub const SHORT_MAX: usize = 256;
/// Longest location name or address.
pub const PLACE_MAX: usize = 1024;
/// Longest reaction emoji (characters; one emoji may be several code points).
pub const EMOJI_MAX: usize = 32;
/// Most message ids in one `/mark-read`.
pub const MARK_READ_MAX: usize = 1000;

/// A required string: present, not blank, at most `max` characters.
pub fn text(field: &str, value: Option<String>, max: usize) -> Result<String, ApiError> {
    match value {
        Some(v) if !v.trim().is_empty() => at_most(field, v, max),
        _ => Err(ApiError::bad_request(format!("{field} is required"))),
    }
}

/// An optional string: blank means absent; at most `max` characters.
pub fn optional(
    field: &str,
    value: Option<String>,
    max: usize,
) -> Result<Option<String>, ApiError> {
    value
        .filter(|v| !v.trim().is_empty())
        .map(|v| at_most(field, v, max))
        .transpose()
}

fn at_most(field: &str, value: String, max: usize) -> Result<String, ApiError> {
    if value.chars().count() > max {
        return Err(ApiError::bad_request(format!(
            "{field} is longer than {max} characters"
        )));
    }
    Ok(value)
}

/// The `to` field.
pub fn recipient(value: Option<&str>) -> Result<Recipient, ApiError> {
    Ok(Recipient::parse("to", value.unwrap_or_default())?)
}

/// A required boolean.
pub fn flag(field: &str, value: Option<bool>) -> Result<bool, ApiError> {
    value.ok_or_else(|| ApiError::bad_request(format!("{field} is required")))
}

/// The common envelope: reply target, mentions, metadata.
pub fn message(
    to: Recipient,
    content: Content,
    envelope: Envelope,
) -> Result<OutgoingMessage, ApiError> {
    let quoted_message_id = envelope
        .quoted_message_id
        .filter(|q| !q.trim().is_empty())
        .map(|q| MessageId::parse("quotedMessageId", Some(&q)))
        .transpose()?;
    let mentions = mentions(
        envelope
            .mentions
            .unwrap_or_default()
            .iter()
            .map(String::as_str),
    )?;
    let meta = meta_data(envelope.meta_data)?;
    Ok(OutgoingMessage {
        to,
        content,
        quoted_message_id,
        mentions,
        meta,
        status: None,
    })
}

/// Mentioned user-parts (digits; a leading `+` is dropped), without repeats.
pub fn mentions<'a>(raw: impl Iterator<Item = &'a str>) -> Result<Vec<String>, ApiError> {
    let mut out: Vec<String> = Vec::new();
    for user in raw {
        let user = recipients::mention("mentions", user)?;
        if !out.contains(&user) {
            out.push(user);
        }
    }
    Ok(out)
}

/// `metaData`: a JSON object (null means absent).
pub fn meta_data(value: Option<Value>) -> Result<Option<Value>, ApiError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(object @ Value::Object(_)) => Ok(Some(object)),
        Some(_) => Err(ApiError::bad_request("metaData must be a JSON object")),
    }
}

/// A poll: a question, 2 to 12 distinct non-blank options, and how many may be chosen.
pub fn poll(
    name: Option<String>,
    options: Option<Vec<String>>,
    selectable_count: Option<i64>,
) -> Result<Content, ApiError> {
    let name = text("pollName", name, POLL_NAME_MAX)?;
    let options = options.ok_or_else(|| ApiError::bad_request("pollOptions is required"))?;
    if !POLL_OPTIONS.contains(&options.len()) {
        return Err(ApiError::bad_request(format!(
            "pollOptions must have {} to {} items",
            POLL_OPTIONS.start(),
            POLL_OPTIONS.end()
        )));
    }
    let mut kept: Vec<String> = Vec::with_capacity(options.len());
    for option in options {
        let option = option.trim().to_string();
        if option.is_empty() {
            return Err(ApiError::bad_request("pollOptions must not be blank"));
        }
        let option = at_most("each of pollOptions", option, POLL_OPTION_MAX)?;
        if kept.contains(&option) {
            return Err(ApiError::bad_request(format!(
                "pollOptions must be distinct: {option:?} is repeated"
            )));
        }
        kept.push(option);
    }
    let count = selectable_count.unwrap_or(1);
    let count = u32::try_from(count)
        .ok()
        .filter(|c| (1..=kept.len()).contains(&(*c as usize)))
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "selectableCount must be 1 to {} (the number of options)",
                kept.len()
            ))
        })?;
    Ok(Content::Poll {
        name,
        options: kept,
        selectable_count: count,
    })
}

/// A location: latitude -90 to 90, longitude -180 to 180.
pub fn location(
    latitude: Option<f64>,
    longitude: Option<f64>,
    name: Option<String>,
    address: Option<String>,
) -> Result<Content, ApiError> {
    let latitude = latitude.ok_or_else(|| ApiError::bad_request("latitude is required"))?;
    let longitude = longitude.ok_or_else(|| ApiError::bad_request("longitude is required"))?;
    if !(-90.0..=90.0).contains(&latitude) {
        return Err(ApiError::bad_request("latitude must be -90 to 90"));
    }
    if !(-180.0..=180.0).contains(&longitude) {
        return Err(ApiError::bad_request("longitude must be -180 to 180"));
    }
    Ok(Content::Location {
        latitude,
        longitude,
        name: optional("name", name, PLACE_MAX)?,
        address: optional("address", address, PLACE_MAX)?,
    })
}

/// A reaction emoji: empty removes the reaction.
pub fn emoji(value: Option<String>) -> Result<String, ApiError> {
    let emoji = value.ok_or_else(|| ApiError::bad_request("emoji is required"))?;
    let emoji = emoji.trim().to_string();
    if emoji.chars().count() > EMOJI_MAX
        || emoji
            .chars()
            .any(|c| c.is_ascii_alphabetic() || c.is_control())
    {
        return Err(ApiError::bad_request(
            "emoji must be one emoji, or empty to remove the reaction",
        ));
    }
    Ok(emoji)
}

/// A file name as shown to the recipient.
pub fn file_name(value: Option<String>) -> Result<Option<String>, ApiError> {
    let name = optional("fileName", value, SHORT_MAX)?;
    if name
        .as_deref()
        .is_some_and(|n| n.contains(['/', '\\']) || n.chars().any(char::is_control))
    {
        return Err(ApiError::bad_request(
            "fileName must be a plain file name (no path, no control characters)",
        ));
    }
    Ok(name)
}

/// A media type override: `type/subtype`.
pub fn mime_type(value: Option<String>) -> Result<Option<String>, ApiError> {
    let Some(raw) = value.filter(|v| !v.trim().is_empty()) else {
        return Ok(None);
    };
    let essence = raw
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b))
    };
    match essence.split_once('/') {
        Some((kind, sub)) if token(kind) && token(sub) => Ok(Some(essence)),
        _ => Err(ApiError::bad_request(
            "mimeType must look like type/subtype",
        )),
    }
}

/// `downloadUrl`: an absolute http(s) URL with a host (the egress guard checks
/// where it leads when it is fetched).
pub fn download_url(value: Option<String>) -> Result<String, ApiError> {
    let raw = text("downloadUrl", value, 8192)?;
    let url = url::Url::parse(raw.trim())
        .map_err(|_| ApiError::bad_request("downloadUrl must be an absolute URL"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(ApiError::bad_request(
            "downloadUrl must be an absolute http(s) URL",
        ));
    }
    Ok(raw.trim().to_string())
}

#[cfg(test)]
mod tests;
