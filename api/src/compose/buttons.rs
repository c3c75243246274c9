//! Interactive buttons checked per type: `displayText` always; `quick_reply`
//! needs `id`; `cta_url` an absolute http(s) `url`; `cta_call` a `phoneNumber`;
//! `cta_copy` an `id` and a `copyCode`. One to ten buttons, ids distinct.
use parley_contract::error::ApiError;
use parley_contract::wire::messages::ButtonBody;
use parley_model::outgoing::Button;

use super::{SHORT_MAX, text};

/// Buttons allowed on one message.
pub const BUTTONS: std::ops::RangeInclusive<usize> = 1..=10;

/// The known button types.
const TYPES: &str = "quick_reply, cta_url, cta_call or cta_copy";

/// Validates the buttons of `/send-interactive-message`.
pub fn buttons(raw: Option<Vec<ButtonBody>>) -> Result<Vec<Button>, ApiError> {
    let raw = raw.ok_or_else(|| ApiError::bad_request("buttons is required"))?;
    if !BUTTONS.contains(&raw.len()) {
        return Err(ApiError::bad_request(format!(
            "buttons must have {} to {} items",
            BUTTONS.start(),
            BUTTONS.end()
        )));
    }
    let mut out: Vec<Button> = Vec::with_capacity(raw.len());
    for (i, b) in raw.into_iter().enumerate() {
        let button = one(i, b)?;
        if let Some(id) = id_of(&button)
            && out.iter().any(|other| id_of(other) == Some(id))
        {
            return Err(ApiError::bad_request(format!(
                "buttons[{i}].id {id:?} is used by another button"
            )));
        }
        out.push(button);
    }
    Ok(out)
}

fn id_of(button: &Button) -> Option<&str> {
    match button {
        Button::QuickReply { id, .. } | Button::CtaCopy { id, .. } => Some(id),
        Button::CtaUrl { .. } | Button::CtaCall { .. } => None,
    }
}

fn one(i: usize, b: ButtonBody) -> Result<Button, ApiError> {
    let field = |name: &str| format!("buttons[{i}].{name}");
    let kind = b.kind.as_deref().map(str::trim).unwrap_or_default();
    if kind.is_empty() {
        return Err(ApiError::bad_request(format!(
            "{} is required ({TYPES})",
            field("type")
        )));
    }
    let display_text = text(&field("displayText"), b.display_text, SHORT_MAX)?;
    match kind {
        "quick_reply" => Ok(Button::QuickReply {
            display_text,
            id: text(&field("id"), b.id, SHORT_MAX)?,
        }),
        "cta_url" => {
            let url = text(&field("url"), b.url, 2048)?;
            let parsed = url::Url::parse(url.trim()).ok();
            let absolute = parsed.is_some_and(|u| {
                matches!(u.scheme(), "http" | "https")
                    && u.host_str().is_some_and(|h| !h.is_empty())
            });
            if !absolute {
                return Err(ApiError::bad_request(format!(
                    "{} must be an absolute http(s) URL",
                    field("url")
                )));
            }
            Ok(Button::CtaUrl {
                display_text,
                url: url.trim().to_string(),
            })
        }
        "cta_call" => {
            let raw = text(&field("phoneNumber"), b.phone_number, SHORT_MAX)?;
            Ok(Button::CtaCall {
                display_text,
                phone_number: phone_number(&field("phoneNumber"), &raw)?,
            })
        }
        "cta_copy" => Ok(Button::CtaCopy {
            display_text,
            id: text(&field("id"), b.id, SHORT_MAX)?,
            copy_code: text(&field("copyCode"), b.copy_code, SHORT_MAX)?,
        }),
        other => Err(ApiError::bad_request(format!(
            "{} {other:?} is not one of {TYPES}",
            field("type")
        ))),
    }
}

/// A phone number to call: an optional `+`, then 3 to 15 digits; spaces,
/// dashes, dots and parentheses are dropped.
fn phone_number(field: &str, raw: &str) -> Result<String, ApiError> {
    let trimmed = raw.trim();
    let (plus, rest) = match trimmed.strip_prefix('+') {
        Some(rest) => ("+", rest),
        None => ("", trimmed),
    };
    let digits: String = rest
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '.' | '(' | ')'))
        .collect();
    if (3..=15).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) {
        Ok(format!("{plus}{digits}"))
    } else {
        Err(ApiError::bad_request(format!(
            "{field} must be a phone number: an optional + and 3 to 15 digits"
        )))
    }
}
