//! A poll: `pollCreationMessageV3` for a single choice, `pollCreationMessage`
//! for several (as WhatsApp Web does), with a fresh random 32-byte message secret
//! in `messageContextInfo` — voters encrypt their votes under it, so the caller
//! keeps it (the library's `MsgSecretStore`) to decrypt the votes.
use std::collections::HashSet;

use rand::RngCore;
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use super::PollRequest;
use super::context::field;
use crate::convert::ConvertError;

/// The poll message and its message secret (from the OS random source).
pub fn poll(req: &PollRequest) -> Result<(wa::Message, [u8; 32]), ConvertError> {
    let mut secret = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut secret);
    Ok((poll_with_secret(req, secret)?, secret))
}

/// The poll message carrying `secret`.
pub fn poll_with_secret(req: &PollRequest, secret: [u8; 32]) -> Result<wa::Message, ConvertError> {
    if req.name.trim().is_empty() {
        return Err(ConvertError::invalid("pollName", "empty"));
    }
    if !(2..=12).contains(&req.options.len()) {
        return Err(ConvertError::invalid("pollOptions", "2 to 12 options"));
    }
    let mut seen = HashSet::new();
    for option in &req.options {
        if option.trim().is_empty() {
            return Err(ConvertError::invalid("pollOptions", "an option is empty"));
        }
        // Votes name options by the SHA-256 of their text: duplicates are ambiguous.
        if !seen.insert(option.as_str()) {
            return Err(ConvertError::invalid(
                "pollOptions",
                format!("{option:?} twice"),
            ));
        }
    }
    let count = req.selectable_count;
    if count < 1 || count as usize > req.options.len() {
        return Err(ConvertError::invalid(
            "selectableCount",
            format!("1 to {} expected", req.options.len()),
        ));
    }
    let poll = wa::message::PollCreationMessage {
        name: Some(req.name.clone()),
        options: req
            .options
            .iter()
            .map(|name| wa::message::poll_creation_message::Option {
                option_name: Some(name.clone()),
                option_hash: None,
            })
            .collect(),
        selectable_options_count: Some(count),
        poll_content_type: Some(wa::message::PollContentType::TEXT),
        context_info: field(&req.context),
        ..Default::default()
    };
    let mut msg = wa::Message {
        message_context_info: MessageField::some(wa::MessageContextInfo {
            message_secret: Some(secret.to_vec()),
            ..Default::default()
        }),
        ..Default::default()
    };
    if count == 1 {
        msg.poll_creation_message_v3 = MessageField::some(poll);
    } else {
        msg.poll_creation_message = MessageField::some(poll);
    }
    Ok(msg)
}
