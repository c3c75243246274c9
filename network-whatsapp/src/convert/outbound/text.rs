//! Text: a bare `conversation`, or an `extendedTextMessage` once it quotes or
//! mentions (as WhatsApp Web sends them).
use whatsapp_rust::wacore::proto_helpers::MessageBuilderExt;
use whatsapp_rust::waproto::whatsapp as wa;

use super::TextRequest;
use super::context::context_info;
use crate::convert::ConvertError;

pub fn text(req: &TextRequest) -> Result<wa::Message, ConvertError> {
    if req.body.trim().is_empty() {
        return Err(ConvertError::invalid("body", "empty"));
    }
    Ok(match context_info(&req.context) {
        Some(ctx) => wa::Message::text_with_context(req.body.clone(), ctx),
        None => wa::Message::text(req.body.clone()),
    })
}
