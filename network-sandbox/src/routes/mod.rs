//! The sandbox's own HTTP routes (`/sandbox/*`), mounted into the API by the
//! binary when `PARLEY_NETWORK=sandbox` (feature `routes`): the simulated
//! phone's controls, inbound messages, the outbox, and the picture CDN.
mod cdn;
pub mod checks;
mod controls;
mod messages;
mod network;

use controls::Controlled;
pub use network::SandboxNetwork;

use parley_api::AppState;
use parley_api::RouteSet;
use parley_api::extension::rules::{
    FieldRule, GROUP_JID, LABEL_ID, PHONE, ParameterRule, RECIPIENT, apply_fields,
    apply_parameters, label_color, label_name, pattern, text,
};
use serde_json::{Value, json};
use utoipa_actix_web::service_config::ServiceConfig;

use crate::store::Store;
use parley_network::test_network::{CALL_END_REASONS, TestNetwork};

/// The sandbox's routes, for [`parley_api::Application::build`].
pub const ROUTES: RouteSet = RouteSet {
    everywhere,
    gateway,
    rules,
    local_only,
    lenient: &["/sandbox/link"],
};

/// The picture links work on every server of a deployment, whichever public
/// URL made them.
fn everywhere(cfg: &mut ServiceConfig) {
    cfg.service(cdn::picture);
}

fn gateway(cfg: &mut ServiceConfig) {
    control_routes(cfg, SandboxNetwork::boxed);
}

/// The control routes (every `/sandbox/*` route but the picture CDN), asking
/// the test network `network` makes from the app's state: the simulated
/// network's ([`SandboxNetwork::boxed`]), or another that serves the same
/// control API.
pub fn control_routes(
    cfg: &mut ServiceConfig,
    network: fn(actix_web::web::Data<AppState>) -> Box<dyn TestNetwork>,
) {
    cfg.app_data(Controlled(network))
        .service(controls::link)
        .service(controls::enter_code)
        .service(controls::unlink)
        .service(controls::faults)
        .service(controls::contacts)
        .service(controls::history)
        .service(controls::outbox)
        .service(messages::messages)
        .service(controls::groups)
        .service(controls::group_subject)
        .service(controls::group_settings)
        .service(controls::group_members)
        .service(controls::receipts)
        .service(controls::typing)
        .service(controls::presence)
        .service(controls::calls)
        .service(controls::end_call)
        .service(controls::labels);
}

/// The CDN and the outbox answer from the database, never asking a worker.
fn local_only(path: &str) -> bool {
    path.starts_with("/sandbox/cdn/") || path == "/sandbox/outbox" || path == "/sandbox/history"
}

fn store(state: &AppState) -> Store {
    Store::new(state.ports.db.clone())
}

/// The handlers' field rules, written into the OpenAPI document.
fn rules(doc: &mut Value) -> Vec<String> {
    let mut missing = apply_parameters(doc, parameter_rules());
    // `/sandbox/link` takes `clientId` or `qr`, and always a phone.
    if let Some(link) =
        doc.pointer_mut("/paths/~1sandbox~1link/post/requestBody/content/application~1json/schema")
    {
        link["properties"]["clientId"] =
            json!({"type": ["string", "null"], "pattern": "^[A-Za-z0-9]{1,64}$"});
        link["properties"]["phone"] = pattern(PHONE);
        link["required"] = json!(["phone"]);
    }
    missing.extend(apply_fields(doc, field_rules()));
    missing
}

fn field_rules() -> Vec<FieldRule> {
    let subject = || text(100);
    let phones = json!({"type": "array", "minItems": 0, "maxItems": 1024, "items": pattern(PHONE)});
    vec![
        ("SandboxContact", "phone", pattern(PHONE), true),
        (
            "SandboxContact",
            "avatar",
            json!({"type": ["string", "null"], "enum": ["none", "hidden", null],
            "description": "`none`, `hidden`, or a PNG or JPEG in base64 (not described by the pattern)"}),
            false,
        ),
        (
            "SandboxContact",
            "avatarPrivacy",
            json!({"type": ["string", "null"], "enum": ["everyone", "contacts", null]}),
            false,
        ),
        (
            "SandboxContact",
            "callPrivacy",
            json!({"type": ["string", "null"], "enum": ["everyone", "contacts", null]}),
            false,
        ),
        ("SandboxEnterCode", "code", text(64), true),
        (
            "SandboxFault",
            "op",
            json!({"type": "string", "enum": checks::FAULT_OPS}),
            true,
        ),
        (
            "SandboxFault",
            "count",
            json!({"type": ["integer", "null"], "minimum": 1, "maximum": 10_000}),
            false,
        ),
        ("SandboxGroupRequest", "subject", subject(), true),
        ("SandboxGroupRequest", "participants", phones.clone(), true),
        ("SandboxGroupRequest", "admins", phones, false),
        ("SandboxGroupSubject", "jid", pattern(GROUP_JID), true),
        ("SandboxGroupSubject", "subject", subject(), true),
        ("SandboxGroupSubject", "by", pattern(PHONE), false),
        ("SandboxGroupSettings", "jid", pattern(GROUP_JID), true),
        ("SandboxGroupSettings", "by", pattern(PHONE), false),
        (
            "SandboxGroupSettings",
            "description",
            json!({"type": ["string", "null"], "maxLength": checks::DESCRIPTION_MAX}),
            false,
        ),
        (
            "SandboxGroupSettings",
            "ephemeralSeconds",
            json!({"type": ["integer", "null"], "enum": std::iter::once(Value::Null)
                .chain(checks::EPHEMERAL_SECONDS.map(Value::from))
                .collect::<Vec<_>>()}),
            false,
        ),
        ("SandboxReceipt", "from", pattern(PHONE), true),
        (
            "SandboxReceipt",
            "status",
            json!({"type": "string", "enum": ["delivered", "read", "played"]}),
            true,
        ),
        (
            "SandboxReceipt",
            "messageIds",
            json!({"type": "array", "minItems": 1, "maxItems": checks::RECEIPT_IDS_MAX,
                "items": {"type": "string", "pattern": r"^\s*[A-Za-z0-9._:-]{1,128}\s*$"}}),
            true,
        ),
        ("SandboxReceipt", "group", pattern(GROUP_JID), false),
        ("SandboxPresence", "from", pattern(PHONE), true),
        (
            "SandboxPresence",
            "state",
            json!({"type": "string", "enum": ["available", "unavailable"]}),
            true,
        ),
        ("SandboxTyping", "from", pattern(PHONE), true),
        (
            "SandboxTyping",
            "state",
            json!({"type": "string", "enum": ["composing", "recording", "paused"]}),
            true,
        ),
        ("SandboxTyping", "group", pattern(GROUP_JID), false),
        ("SandboxCall", "from", pattern(PHONE), true),
        ("SandboxCall", "group", pattern(GROUP_JID), false),
        ("SandboxLabel", "labelId", pattern(LABEL_ID), true),
        ("SandboxLabel", "name", label_name(), false),
        ("SandboxLabel", "color", label_color(true), false),
        (
            "SandboxLabel",
            "chat",
            json!({"type": ["string", "null"], "pattern": RECIPIENT}),
            false,
        ),
        ("SandboxCallEnd", "from", pattern(PHONE), true),
        (
            "SandboxCallEnd",
            "callId",
            json!({"type": "string", "pattern": r"^\s*[A-Za-z0-9._:-]{1,128}\s*$"}),
            true,
        ),
        (
            "SandboxCallEnd",
            "reason",
            json!({"type": ["string", "null"], "enum": CALL_END_REASONS.iter().copied()
                .map(Value::from).chain([Value::Null]).collect::<Vec<_>>()}),
            false,
        ),
        ("SandboxGroupMembers", "jid", pattern(GROUP_JID), true),
        ("SandboxGroupMembers", "by", pattern(PHONE), true),
        (
            "SandboxGroupMembers",
            "action",
            json!({"type": "string", "enum": ["add", "remove", "promote", "demote"]}),
            true,
        ),
        (
            "SandboxGroupMembers",
            "participants",
            json!({"type": "array", "minItems": 1, "maxItems": checks::GROUP_PARTICIPANTS_MAX, "items": pattern(PHONE)}),
            true,
        ),
        ("SandboxHistory", "phone", pattern(PHONE), true),
        ("SandboxPastLabel", "labelId", pattern(LABEL_ID), true),
        (
            "SandboxPastLabel",
            "name",
            text(parley_model::outgoing::LABEL_NAME_MAX),
            true,
        ),
        ("SandboxPastLabel", "color", label_color(false), false),
        (
            "SandboxPastLabel",
            "chats",
            json!({"type": "array", "maxItems": checks::HISTORY_LABEL_CHATS_MAX,
                "items": {"type": "string", "anyOf": [pattern(PHONE), pattern(GROUP_JID)]}}),
            false,
        ),
        // A text's body must not be blank; a file's (its caption) may be
        // empty or left out: a rule of two fields, said in words.
        (
            "SandboxPastMessage",
            "body",
            json!({"type": "string", "maxLength": checks::HISTORY_BODY_MAX}),
            false,
        ),
        (
            "SandboxPastMessage",
            "chat",
            json!({"type": "string", "anyOf": [pattern(PHONE), pattern(GROUP_JID)]}),
            true,
        ),
        (
            "SandboxPastMessage",
            "type",
            json!({"type": ["string", "null"],
                "enum": ["text", "image", "video", "audio", "document", "sticker", null]}),
            false,
        ),
    ]
}

fn parameter_rules() -> Vec<ParameterRule> {
    vec![
        (
            "/sandbox/outbox",
            "get",
            "to",
            json!({"type": "string", "anyOf": [{"pattern": RECIPIENT}, {"pattern": r"^\s*$"}]}),
            false,
        ),
        (
            "/sandbox/outbox",
            "get",
            "since",
            json!({"type": "string", "anyOf": [{"format": "date-time"}, {"pattern": r"^\s*$"}]}),
            false,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::ROUTES;

    #[test]
    fn every_rule_finds_its_field_in_the_document() {
        let mut doc = parley_api::openapi(&ROUTES);
        assert_eq!((ROUTES.rules)(&mut doc), Vec::<String>::new());
    }

    #[test]
    fn the_documents_rules_are_the_handlers() {
        let doc = parley_api::openapi(&ROUTES);
        let schemas = &doc["components"]["schemas"];
        assert_eq!(
            schemas["SandboxGroupSubject"]["properties"]["jid"]["pattern"],
            parley_api::extension::rules::GROUP_JID
        );
        assert_eq!(
            schemas["SandboxFault"]["properties"]["op"]["enum"],
            serde_json::json!([
                "send",
                "pair-code",
                "logout",
                "lookup",
                "receipt",
                "privacy-token",
                "drop"
            ])
        );
        let link = &doc["paths"]["/sandbox/link"]["post"]["requestBody"]["content"]["application/json"]
            ["schema"];
        assert_eq!(link["required"], serde_json::json!(["phone"]));
        // The link takes `clientId` or `qr`: not required, unlike elsewhere.
        assert!(link.get("$ref").is_none(), "{link}");
        // The outbox and the CDN never ask a worker: no 503.
        let outbox = &doc["paths"]["/sandbox/outbox"]["get"]["responses"];
        assert!(outbox.get("503").is_none(), "{outbox}");
        let faults = &doc["paths"]["/sandbox/faults"]["post"]["responses"];
        assert!(faults.get("503").is_some(), "{faults}");
        // And the API's own routes are all there beside them.
        assert!(doc["paths"]["/send-message"]["post"].is_object());
    }
}
