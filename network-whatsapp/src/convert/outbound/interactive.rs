//! An interactive message with native-flow buttons: `quick_reply` (tapping it
//! sends a reply carrying its id), `cta_url`, `cta_call`, `cta_copy`. Each
//! button's parameters travel as the JSON text `buttonParamsJson`. The message
//! is top-level (not wrapped), so the library's send path adds the `<biz>` node
//! the server needs for it.
use serde_json::{Value, json};
use wa::message::interactive_message::{
    self as im, Body, Footer, NativeFlowMessage, native_flow_message::NativeFlowButton,
};
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use super::context::field;
use super::{Button, ButtonKind, InteractiveRequest};
use crate::convert::ConvertError;

/// Buttons one message may carry.
const MAX_BUTTONS: usize = 10;

pub fn interactive(req: &InteractiveRequest) -> Result<wa::Message, ConvertError> {
    if req.body_text.trim().is_empty() {
        return Err(ConvertError::invalid("bodyText", "empty"));
    }
    if !(1..=MAX_BUTTONS).contains(&req.buttons.len()) {
        return Err(ConvertError::invalid(
            "buttons",
            format!("1 to {MAX_BUTTONS} buttons"),
        ));
    }
    let buttons = req
        .buttons
        .iter()
        .map(native_flow_button)
        .collect::<Result<Vec<_>, _>>()?;
    let footer = req
        .footer_text
        .clone()
        .filter(|f| !f.is_empty())
        .map(|text| Footer {
            text: Some(text),
            ..Default::default()
        });
    Ok(wa::Message {
        interactive_message: MessageField::some(wa::message::InteractiveMessage {
            body: MessageField::some(Body {
                text: Some(req.body_text.clone()),
            }),
            footer: footer.map_or_else(MessageField::none, MessageField::some),
            context_info: field(&req.context),
            interactive_message: Some(im::InteractiveMessage::NativeFlowMessage(Box::new(
                NativeFlowMessage {
                    buttons,
                    message_version: Some(1),
                    ..Default::default()
                },
            ))),
            ..Default::default()
        }),
        ..Default::default()
    })
}

fn native_flow_button(b: &Button) -> Result<NativeFlowButton, ConvertError> {
    if b.display_text.trim().is_empty() {
        return Err(ConvertError::invalid("buttons.displayText", "empty"));
    }
    let params = match b.kind {
        ButtonKind::QuickReply => json!({
            "display_text": b.display_text,
            "id": required("buttons.id", &b.id)?,
        }),
        ButtonKind::CtaUrl => {
            let url = required("buttons.url", &b.url)?;
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                return Err(ConvertError::invalid(
                    "buttons.url",
                    "an http(s) URL expected",
                ));
            }
            json!({"display_text": b.display_text, "url": url, "merchant_url": url})
        }
        ButtonKind::CtaCall => json!({
            "display_text": b.display_text,
            "phone_number": required("buttons.phoneNumber", &b.phone_number)?,
        }),
        ButtonKind::CtaCopy => {
            let code = required("buttons.copyCode", &b.copy_code)?;
            let id =
                b.id.clone()
                    .filter(|id| !id.is_empty())
                    .unwrap_or_else(|| code.clone());
            json!({"display_text": b.display_text, "id": id, "copy_code": code})
        }
    };
    Ok(NativeFlowButton {
        name: Some(b.kind.as_str().into()),
        button_params_json: Some(Value::to_string(&params)),
    })
}

fn required(field: &'static str, value: &Option<String>) -> Result<String, ConvertError> {
    value
        .clone()
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| ConvertError::invalid(field, "required for this button type"))
}
