//! The field rules the handlers enforce, written into the OpenAPI document so
//! that every request the document calls valid is one the handlers accept:
//! required fields, patterns, lengths, ranges, item counts and enums. Each
//! pattern accepts the canonical spellings (a subset of what the handlers take:
//! they also trim spaces, for instance). Rules that tie two fields together
//! (a poll's `selectableCount` against its options, a button's fields against
//! its `type`) cannot be said in JSON Schema; they stay in the descriptions.
use serde_json::{Value, json};

/// `to`: a LID user-part, `+phone`, or a LID, phone or group JID.
pub const RECIPIENT: &str = r"^(\+[0-9]{8,15}|[0-9]{8,20}(@lid)?|[0-9]{8,15}@s\.whatsapp\.net|[0-9]{5,30}(-[0-9]{5,20})?@g\.us)$";
/// A user (no group): a LID user-part, `+phone`, or a LID or phone JID.
pub const USER: &str = r"^(\+[0-9]{8,15}|[0-9]{8,20}(@lid)?|[0-9]{8,15}@s\.whatsapp\.net)$";
pub const GROUP_JID: &str = r"^[0-9]{5,30}(-[0-9]{5,20})?@g\.us$";
/// A phone number with country code.
pub const PHONE: &str = r"^\+?[0-9]{8,15}$";
pub const MESSAGE_ID: &str = r"^[A-Za-z0-9._:-]{1,128}$";
/// A label id: letters and digits.
pub const LABEL_ID: &str = r"^[A-Za-z0-9]{1,32}$";
/// A callback URL: `https://host[:port][/path]`, or empty to clear it.
pub const CALLBACK_URL: &str = r"^(https://[a-z][a-z0-9-]{0,62}(\.[a-z][a-z0-9-]{0,62})*(:[1-9][0-9]{0,3})?(/[A-Za-z0-9._~/-]*)?)?$";
/// Text with something in it besides spaces, as the server trims: the
/// schema's `\s` (ECMA-262) leaves out U+0085, which Rust's `trim` removes.
const NOT_BLANK: &str = r"[^\s\u0085]";

pub fn text(max: usize) -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": max, "pattern": NOT_BLANK})
}

/// A label's name, when given: 1 to `LABEL_NAME_MAX` characters, not
/// blank; `null` for none.
pub fn label_name() -> Value {
    json!({"type": ["string", "null"], "minLength": 1,
        "maxLength": parley_model::outgoing::LABEL_NAME_MAX, "pattern": NOT_BLANK})
}

/// A label's colour: an index into the palette; `null` allowed for none
/// when `nullable`.
pub fn label_color(nullable: bool) -> Value {
    let kind = if nullable {
        json!(["integer", "null"])
    } else {
        json!("integer")
    };
    json!({"type": kind, "minimum": 0, "maximum": parley_model::outgoing::LABEL_COLORS - 1})
}

pub fn pattern(p: &str) -> Value {
    json!({"type": "string", "pattern": p})
}

/// A rule of a body's field: `(schema, field, rule, required)`.
pub type FieldRule = (&'static str, &'static str, Value, bool);
/// A rule of a query or path parameter: `(path, method, parameter, rule, required)`.
pub type ParameterRule = (&'static str, &'static str, &'static str, Value, bool);

fn rules() -> Vec<FieldRule> {
    let to = || pattern(RECIPIENT);
    let message_id = || pattern(MESSAGE_ID);
    let label_id = || pattern(LABEL_ID);
    let group = || pattern(GROUP_JID);
    let subject = || text(100);
    let users = |max: usize| json!({"type": "array", "minItems": 1, "maxItems": max, "items": pattern(USER)});
    let mut all = vec![
        // The sends' common envelope.
        (
            "Envelope",
            "quotedMessageId",
            pattern(r"^[A-Za-z0-9._:-]{0,128}$"),
            false,
        ),
        (
            "Envelope",
            "mentions",
            json!({"type": ["array", "null"], "items": pattern(r"^\+?[0-9]{8,20}$")}),
            false,
        ),
        ("SendText", "body", text(65_536), true),
        (
            "SetEvents",
            "events",
            json!({"type": "array", "maxItems": 16,
                "items": {"type": "string", "enum": parley_contract::event::OPT_IN_EVENTS}}),
            true,
        ),
        (
            "SetWebhookTypes",
            "types",
            json!({"type": ["array", "null"], "minItems": 1, "maxItems": 32,
                "items": {"type": "string", "enum": parley_contract::event::event_types()}}),
            false,
        ),
        (
            "SetPresence",
            "presence",
            json!({"type": "string", "enum": ["available", "unavailable"]}),
            true,
        ),
        (
            "SetCallRejection",
            "reject",
            json!({"type": "boolean"}),
            true,
        ),
        (
            "SetCallRejection",
            "replyText",
            json!({"type": ["string", "null"], "maxLength": crate::compose::TEXT_MAX}),
            false,
        ),
        ("RejectCall", "callId", message_id(), true),
        ("DeleteStatus", "messageId", message_id(), true),
        ("SetLabel", "name", label_name(), false),
        ("SetLabel", "color", label_color(true), false),
        ("SetLabel", "labelId", label_id(), false),
        ("DeleteLabel", "labelId", label_id(), true),
        ("SetChatLabel", "labelId", label_id(), true),
        (
            "SetProxy",
            "proxyUrl",
            json!({"type": ["string", "null"], "maxLength": parley_network::proxy::PROXY_URL_MAX}),
            false,
        ),
        (
            "SendStatus",
            "type",
            json!({"type": ["string", "null"], "enum": ["text", "image", "video", null]}),
            false,
        ),
        (
            "SendStatus",
            "backgroundColor",
            json!({"type": ["string", "null"],
                "pattern": r"^\s*#([0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})\s*$"}),
            false,
        ),
        (
            "SendStatus",
            "font",
            json!({"type": ["string", "null"], "enum": parley_model::outgoing::STATUS_FONTS
                .iter().map(|(name, _)| Value::from(*name)).chain([Value::Null])
                .collect::<Vec<_>>()}),
            false,
        ),
        (
            "SendStatus",
            "audience",
            json!({"type": ["array", "null"], "minItems": 1,
                "maxItems": parley_model::outgoing::STATUS_AUDIENCE_MAX, "items": pattern(RECIPIENT)}),
            false,
        ),
        (
            "SetSendPacing",
            "messagesPerMinute",
            json!({"type": "integer", "minimum": 0, "maximum": parley_contract::pacing::MAX_PER_MINUTE}),
            true,
        ),
        (
            "SetSendPacing",
            "burst",
            json!({"type": ["integer", "null"], "minimum": 1, "maximum": parley_contract::pacing::MAX_BURST}),
            false,
        ),
        (
            "SendMediaUrl",
            "downloadUrl",
            json!({
                "type": "string", "maxLength": 8192,
                "pattern": r"^https?://[a-z][a-z0-9-]{0,62}(\.[a-z][a-z0-9-]{0,62})*(:[1-9][0-9]{0,3})?(/[A-Za-z0-9._~/-]*)?$"
            }),
            true,
        ),
        (
            "SendMediaUrl",
            "mimeType",
            json!({"type": ["string", "null"],
            "pattern": r"^([A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+)?$"}),
            false,
        ),
        (
            "SendMediaUrl",
            "fileName",
            json!({"type": ["string", "null"], "maxLength": 256,
            "pattern": r"^[^/\\\u0000-\u001f\u007f-\u009f]*$"}),
            false,
        ),
        (
            "SendMediaUrl",
            "caption",
            json!({"type": ["string", "null"], "maxLength": 65_536}),
            false,
        ),
        ("SendPoll", "pollName", text(255), true),
        (
            "SendPoll",
            "pollOptions",
            json!({"type": "array", "minItems": 2, "maxItems": 12,
            "uniqueItems": true,
            "items": {"type": "string", "minLength": 1, "maxLength": 100, "pattern": r"^\S([\s\S]*\S)?$"}}),
            true,
        ),
        (
            "SendPoll",
            "selectableCount",
            json!({"type": ["integer", "null"], "minimum": 1, "maximum": 12}),
            false,
        ),
        ("SendInteractive", "bodyText", text(65_536), true),
        (
            "SendInteractive",
            "footerText",
            json!({"type": ["string", "null"], "maxLength": 256}),
            false,
        ),
        (
            "SendInteractive",
            "buttons",
            json!({"type": "array", "minItems": 1, "maxItems": 10}),
            true,
        ),
        (
            "SendLocation",
            "latitude",
            json!({"type": "number", "minimum": -90, "maximum": 90}),
            true,
        ),
        (
            "SendLocation",
            "longitude",
            json!({"type": "number", "minimum": -180, "maximum": 180}),
            true,
        ),
        (
            "SendLocation",
            "name",
            json!({"type": ["string", "null"], "maxLength": 1024}),
            false,
        ),
        (
            "SendLocation",
            "address",
            json!({"type": ["string", "null"], "maxLength": 1024}),
            false,
        ),
        ("SendContact", "displayName", text(256), true),
        (
            "SendContact",
            "phone",
            json!({"type": ["string", "null"], "pattern": PHONE}),
            false,
        ),
        ("SendReaction", "messageId", message_id(), true),
        (
            "SendReaction",
            "emoji",
            json!({"type": "string", "maxLength": 32,
            "pattern": r"^[^A-Za-z\u0000-\u001f\u007f-\u009f]*$"}),
            true,
        ),
        ("EditMessage", "messageId", message_id(), true),
        ("EditMessage", "body", text(65_536), true),
        ("DeleteMessage", "messageId", message_id(), true),
        (
            "DeleteMessage",
            "mode",
            json!({"type": "string", "enum": ["everyone", "me"]}),
            true,
        ),
        ("DeleteMessage", "fromMe", json!({"type": "boolean"}), true),
        (
            "DeleteMessage",
            "chatRoomId",
            json!({"type": ["string", "null"], "maxLength": 256}),
            false,
        ),
        (
            "MarkRead",
            "messageIds",
            json!({"type": "array", "minItems": 1, "maxItems": 1000,
            "items": message_id()}),
            true,
        ),
        ("PairPhone", "phone", pattern(PHONE), true),
        ("UserInfoRequest", "jid", pattern(USER), true),
        ("SubscribePresence", "jid", pattern(USER), true),
        (
            "CheckOwnerLid",
            "number",
            json!({"type": ["string", "null"], "pattern": r"^(\+?[0-9]{8,15})?$"}),
            false,
        ),
        ("GroupRequest", "groupJid", group(), true),
        ("GroupInviteLinkRequest", "groupJid", group(), true),
        ("CreateGroup", "subject", subject(), true),
        ("CreateGroup", "participants", users(256), true),
        ("UpdateGroupMembers", "groupJid", group(), true),
        (
            "UpdateGroupMembers",
            "action",
            json!({"type": "string",
            "enum": ["add", "remove", "promote", "demote"]}),
            true,
        ),
        ("UpdateGroupMembers", "participants", users(256), true),
        (
            "RedeliverRequest",
            "eventIds",
            json!({"type": "array", "minItems": 1, "maxItems": 500,
                "items": pattern(r"^[A-Za-z0-9._:-]{1,256}$")}),
            false,
        ),
        (
            "RedeliverRequest",
            "afterSeq",
            whole(0, i64::MAX as u64),
            false,
        ),
        (
            "SetApiSecret",
            "secret",
            json!({"type": "string", "pattern": r"^(|[\s\S]{16,})$"}),
            true,
        ),
        (
            "SetOrgId",
            "orgId",
            json!({"type": "string", "maxLength": 200}),
            true,
        ),
        ("SetWebhook", "webhookUrl", pattern(CALLBACK_URL), true),
        (
            "SetWebhook",
            "pollLookupUrl",
            json!({"type": ["string", "null"], "pattern": CALLBACK_URL}),
            false,
        ),
        (
            "StartBody",
            "webhookUrl",
            json!({"type": ["string", "null"], "pattern": CALLBACK_URL}),
            false,
        ),
        (
            "StartBody",
            "pollLookupUrl",
            json!({"type": ["string", "null"], "pattern": CALLBACK_URL}),
            false,
        ),
    ];
    for schema in [
        "SendText",
        "SendMediaUrl",
        "SendPoll",
        "SendInteractive",
        "SendLocation",
        "SendContact",
        "SendReaction",
        "EditMessage",
        "DeleteMessage",
        "MarkRead",
        "MarkUnread",
        "SetChatLabel",
        "SendTyping",
    ] {
        all.push((schema, "to", to(), true));
    }
    all
}

fn parameter_rules() -> Vec<ParameterRule> {
    let client_id = || pattern("^[A-Za-z0-9]{1,64}$");
    vec![
        ("/clients", "get", "clientId", client_id(), false),
        ("/media-files", "get", "orgId", text(200), true),
        (
            "/media-files",
            "get",
            "page",
            json!({"type": "integer", "minimum": 1, "maximum": 4_294_967_295u64}),
            false,
        ),
        (
            "/media-files",
            "get",
            "limit",
            json!({"type": "integer", "minimum": 1, "maximum": u64::MAX}),
            false,
        ),
        (
            "/media-files/{messageId}/url",
            "get",
            "messageId",
            json!({"type": "string", "format": "uuid",
            "pattern": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"}),
            true,
        ),
        (
            "/media-files/{messageId}/url",
            "get",
            "clientId",
            client_id(),
            false,
        ),
        ("/profile-picture", "get", "jid", pattern(RECIPIENT), true),
        ("/events", "get", "after", whole(0, i64::MAX as u64), false),
        ("/events", "get", "limit", whole(1, 500), false),
        (
            "/events/feed",
            "get",
            "after",
            whole(0, i64::MAX as u64),
            false,
        ),
        (
            "/events/dead-letters",
            "get",
            "page",
            whole(1, 4_294_967_295),
            false,
        ),
        ("/events/dead-letters", "get", "limit", whole(1, 500), false),
        ("/sessions", "get", "clientId", client_id(), false),
        ("/labels", "get", "clientId", client_id(), true),
        ("/chatrooms", "get", "labelId", pattern(LABEL_ID), false),
        (
            "/sessions",
            "get",
            "q",
            json!({"type": "string", "maxLength": 128}),
            false,
        ),
        ("/sessions", "get", "page", whole(1, 4_294_967_295), false),
        ("/sessions", "get", "limit", whole(1, 200), false),
    ]
}

fn whole(min: u64, max: u64) -> Value {
    json!({"type": "integer", "minimum": min, "maximum": max})
}

/// Writes the rules into `doc` (the document as JSON); returns the rules
/// whose field or parameter the document lacks (most of them, on a server
/// that serves only the probes).
pub fn apply(doc: &mut Value) -> Vec<String> {
    let mut missing = apply_parameters(doc, parameter_rules());
    special_cases(doc);
    missing.extend(apply_fields(doc, rules()));
    missing
}

/// Writes parameter rules into `doc`; returns those whose operation it lacks.
pub fn apply_parameters(doc: &mut Value, rules: Vec<ParameterRule>) -> Vec<String> {
    let mut missing = Vec::new();
    for (path, method, name, rule, required) in rules {
        let Some(params) = doc
            .pointer_mut(&format!(
                "/paths/{}/{method}/parameters",
                path.replace('~', "~0").replace('/', "~1")
            ))
            .and_then(Value::as_array_mut)
        else {
            missing.push(format!("{method} {path}"));
            continue;
        };
        let Some(param) = params.iter_mut().find(|p| p["name"] == name) else {
            debug_assert!(
                false,
                "OpenAPI rules: {method} {path} has no parameter {name}"
            );
            continue;
        };
        param["schema"] = rule;
        if required {
            param["required"] = json!(true);
        }
    }
    missing
}

/// What JSON Schema cannot say by field: `/start`'s optional body, the
/// contact card's two shapes, the upload's closed form.
fn special_cases(doc: &mut Value) {
    // A redelivery names its events one way: by id or after a seq.
    if let Some(body) = doc
        .pointer_mut("/components/schemas/RedeliverRequest")
        .and_then(Value::as_object_mut)
    {
        body.insert(
            "oneOf".into(),
            json!([{"required": ["eventIds"]}, {"required": ["afterSeq"]}]),
        );
    }
    // `/start` takes no body or an object, never `null`; `/check-state`
    // answers whatever it is sent.
    if let Some(body) =
        doc.pointer_mut("/paths/~1start/post/requestBody/content/application~1json/schema")
    {
        *body = json!({"$ref": "#/components/schemas/StartBody"});
    }
    if let Some(body) =
        doc.pointer_mut("/paths/~1check-state/post/requestBody/content/application~1json/schema")
    {
        *body = json!({"type": "object", "properties": {"clientId": {
            "description": "Any value: an unknown or invalid clientId answers `status: false`"}}});
    }
    // A contact card is a vCard, or built from a phone number.
    if let Some(card) = doc
        .pointer_mut("/components/schemas/SendContact/allOf")
        .and_then(Value::as_array_mut)
        .and_then(|all| {
            all.iter_mut()
                .find(|m| m.pointer("/properties/vcard").is_some())
        })
    {
        card["anyOf"] = json!([
            {"required": ["vcard"], "properties": {"vcard": {"type": "string", "maxLength": 65_536,
                "pattern": r"^[ \t\r\n]*BEGIN:VCARD[\s\S]*END:VCARD[ \t\r\n]*$"}}},
            {"required": ["phone"], "properties": {"phone": pattern(PHONE),
                "vcard": {"type": ["string", "null"], "pattern": r"^[ \t\r\n]*$"}}}
        ]);
    }
    // The parts of a multipart upload are the documented ones.
    if let Some(form) = doc.pointer_mut("/components/schemas/SendMediaForm") {
        form["additionalProperties"] = json!(false);
    }
}

/// Writes field rules into the schemas of `doc`; returns those whose schema
/// or field it lacks.
pub fn apply_fields(doc: &mut Value, rules: Vec<FieldRule>) -> Vec<String> {
    let mut missing = Vec::new();
    let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    else {
        missing.push("components".into());
        return missing;
    };
    for (schema, field, rule, required) in rules {
        let Some(target) = schemas.get_mut(schema).and_then(|s| holder(s, field)) else {
            missing.push(format!("{schema}.{field}"));
            continue;
        };
        let property = &mut target["properties"][field];
        if let (Some(into), Some(from)) = (property.as_object_mut(), rule.as_object()) {
            // A field that must be present is no longer nullable.
            if required {
                into.remove("oneOf");
            }
            for (k, v) in from {
                into.insert(k.clone(), v.clone());
            }
        }
        if required {
            let list = target
                .as_object_mut()
                .map(|o| o.entry("required").or_insert_with(|| json!([])));
            if let Some(Value::Array(list)) = list
                && !list.iter().any(|r| r == field)
            {
                list.push(json!(field));
            }
        }
    }
    missing
}

/// The object schema (itself, or a member of its `allOf`) that declares `field`.
fn holder<'a>(schema: &'a mut Value, field: &str) -> Option<&'a mut Value> {
    if schema.pointer(&format!("/properties/{field}")).is_some() {
        return Some(schema);
    }
    schema
        .get_mut("allOf")?
        .as_array_mut()?
        .iter_mut()
        .find(|m| m.pointer(&format!("/properties/{field}")).is_some())
}
