//! A contact card (`contactMessage`): the caller's full vCard, or a vCard 3.0
//! built from a display name and phone number, with the `waid` parameter that
//! makes clients offer "Message" for the number.
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use super::ContactRequest;
use super::context::field;
use crate::convert::ConvertError;

pub fn contact(req: &ContactRequest) -> Result<wa::Message, ConvertError> {
    if req.display_name.trim().is_empty() {
        return Err(ConvertError::invalid("displayName", "empty"));
    }
    let vcard = match (&req.vcard, &req.phone) {
        (Some(vcard), _) if !vcard.trim().is_empty() => {
            let upper = vcard.to_ascii_uppercase();
            if !(upper.contains("BEGIN:VCARD") && upper.contains("END:VCARD")) {
                return Err(ConvertError::invalid("vcard", "not a vCard"));
            }
            vcard.clone()
        }
        (_, Some(phone)) => vcard_for_phone(&req.display_name, phone)?,
        _ => {
            return Err(ConvertError::invalid(
                "phone",
                "a phone or a vcard is required",
            ));
        }
    };
    Ok(wa::Message {
        contact_message: MessageField::some(wa::message::ContactMessage {
            display_name: Some(req.display_name.clone()),
            vcard: Some(vcard),
            context_info: field(&req.context),
            ..Default::default()
        }),
        ..Default::default()
    })
}

/// A vCard 3.0 for `display_name` at `phone` (E.164 digits, `+` optional).
pub fn vcard_for_phone(display_name: &str, phone: &str) -> Result<String, ConvertError> {
    let digits = phone.strip_prefix('+').unwrap_or(phone);
    if !(8..=15).contains(&digits.len()) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ConvertError::invalid("phone", "8 to 15 digits expected"));
    }
    let name = escape(display_name);
    Ok(format!(
        "BEGIN:VCARD\nVERSION:3.0\nN:;{name};;;\nFN:{name}\n\
         TEL;type=CELL;type=VOICE;waid={digits}:+{digits}\nEND:VCARD"
    ))
}

/// A vCard text value (RFC 2426 §4: backslash, comma, semicolon, newline escaped).
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            ',' => out.push_str("\\,"),
            ';' => out.push_str("\\;"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            other => out.push(other),
        }
    }
    out
}
