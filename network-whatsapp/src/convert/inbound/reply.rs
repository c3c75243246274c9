//! Taps on buttons a session sent: native-flow responses (quick replies of
//! interactive messages), legacy button and template-button replies, list
//! selections. The target is the tapped message (`contextInfo.stanzaId`).
use wa::message::buttons_response_message::Response;
use wa::message::interactive_response_message::InteractiveResponseMessage as Flow;
use whatsapp_rust::waproto::whatsapp as wa;

use parley_model::inbound::Content;
use parley_network::MessageId;

pub(super) fn content(base: &wa::Message) -> Option<Content> {
    if let Some(r) = base.interactive_response_message.as_option() {
        let Some(Flow::NativeFlowResponseMessage(flow)) = r.interactive_response_message.as_ref()
        else {
            return None;
        };
        let body = r.body.as_option().and_then(|b| b.text.clone());
        return Some(reply(
            r.context_info.as_option(),
            flow_button_id(flow.params_json.as_deref()).or_else(|| flow.name.clone()),
            body,
        ));
    }
    if let Some(r) = base.buttons_response_message.as_option() {
        let text = r
            .response
            .as_ref()
            .map(|Response::SelectedDisplayText(text)| text.clone());
        return Some(reply(
            r.context_info.as_option(),
            r.selected_button_id.clone(),
            text,
        ));
    }
    if let Some(r) = base.template_button_reply_message.as_option() {
        return Some(reply(
            r.context_info.as_option(),
            r.selected_id.clone(),
            r.selected_display_text.clone(),
        ));
    }
    if let Some(r) = base.list_response_message.as_option() {
        let row = r
            .single_select_reply
            .as_option()
            .and_then(|s| s.selected_row_id.clone());
        return Some(reply(r.context_info.as_option(), row, r.title.clone()));
    }
    None
}

fn reply(
    ctx: Option<&wa::ContextInfo>,
    button_id: Option<String>,
    text: Option<String>,
) -> Content {
    Content::InteractiveReply {
        target_id: ctx
            .and_then(|c| c.stanza_id.clone())
            .and_then(MessageId::new),
        button_id: button_id.unwrap_or_default(),
        display_text: text.unwrap_or_default(),
    }
}

/// The `id` of a native-flow response's parameters (`{"id": "..."}` for a quick reply).
fn flow_button_id(params_json: Option<&str>) -> Option<String> {
    let params: serde_json::Value = serde_json::from_str(params_json?).ok()?;
    params.get("id")?.as_str().map(str::to_string)
}
