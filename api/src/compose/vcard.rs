//! Contact cards: a given vCard 3.0 is checked for its frame; otherwise one is
//! built from `displayName` and `phone` (FN and TEL;type=CELL;waid=…).
use parley_contract::error::ApiError;
use parley_model::address::PhoneNumber;
use parley_model::outgoing::Content;

use super::{SHORT_MAX, text};

/// Longest vCard accepted.
const VCARD_MAX: usize = 64 * 1024;

/// The content of `/send-contact`: `vcard` wins over `phone`; one is required.
pub fn contact_card(
    display_name: Option<String>,
    phone: Option<String>,
    vcard: Option<String>,
) -> Result<Content, ApiError> {
    let display_name = text("displayName", display_name, SHORT_MAX)?;
    let vcard = match (vcard.filter(|v| !v.trim().is_empty()), phone) {
        (Some(card), _) => checked(card)?,
        (None, Some(phone)) if !phone.trim().is_empty() => {
            build(&display_name, PhoneNumber::parse("phone", &phone)?.as_str())
        }
        _ => return Err(ApiError::bad_request("phone or vcard is required")),
    };
    Ok(Content::Contact {
        display_name,
        vcard,
    })
}

fn checked(card: String) -> Result<String, ApiError> {
    let upper = card.trim().to_ascii_uppercase();
    if card.len() > VCARD_MAX || !upper.starts_with("BEGIN:VCARD") || !upper.ends_with("END:VCARD")
    {
        return Err(ApiError::bad_request(
            "vcard must be a vCard: BEGIN:VCARD ... END:VCARD, at most 64 KiB",
        ));
    }
    Ok(card.trim().to_string())
}

/// A vCard 3.0 with the name and the phone as a network-linked mobile number.
pub fn build(display_name: &str, digits: &str) -> String {
    format!(
        "BEGIN:VCARD\nVERSION:3.0\nFN:{}\nTEL;type=CELL;waid={digits}:+{digits}\nEND:VCARD",
        escape(display_name)
    )
}

/// vCard text escaping: backslash, comma, semicolon, newlines.
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            ',' => out.push_str("\\,"),
            ';' => out.push_str("\\;"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}
