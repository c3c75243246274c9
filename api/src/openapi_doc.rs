//! Completes the generated OpenAPI document with what every route shares, so
//! it declares every status a route can answer: every error is
//! `{error: string}`; routes behind the token answer 401; routes with
//! parameters or a body 400; routes with a body 413 and 415; routes that ask a
//! session's owner over the bus 503 (no worker runs) and 504 (the owner did
//! not answer). And `clientId`, which every route naming a session checks the
//! same way (letters and digits, 1 to 64), is required with that pattern
//! wherever the handler requires it.
use std::collections::BTreeSet;

use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, RefOr, Required, Response, ResponseBuilder};

use crate::RouteSet;

/// The component every error body refers to.
const ERROR_SCHEMA: &str = "Error";

/// The security scheme of every route behind the token (what `/docs`'
/// "Authorize" asks for).
const SECURITY_SCHEME: &str = "token";

/// Paths whose handlers never ask a worker (health, facts, documents, stored
/// files and the hosted inbox, answered from the database and the store).
fn local_only(path: &str) -> bool {
    path.starts_with("/health")
        || path.starts_with("/media")
        || path.starts_with("/chatrooms")
        || matches!(
            path,
            "/config"
                | "/openapi.json"
                | "/metrics"
                | "/clients"
                | "/sessions"
                | "/session-history"
                | "/cluster"
        )
}

/// Routes that put a message on the network: they keep the session's pace
/// (`/set-send-pacing`) and answer 429 when its queue is full.
const PACED: &[&str] = &[
    "/send-message",
    "/send-media-message",
    "/send-poll-message",
    "/send-interactive-message",
    "/send-location",
    "/send-contact",
    "/send-reaction",
    "/edit-message",
];

/// What `ClientId::parse` accepts.
const CLIENT_ID_PATTERN: &str = "^[A-Za-z0-9]{1,64}$";

/// Operations that take `clientId` without requiring it: `/check-state`
/// answers any value with 200.
const LENIENT: &[&str] = &["/check-state"];

/// Completes `doc`; `public` tells the paths that need no token.
/// `extra`: an adapter's routes in the document.
pub fn complete(doc: &mut OpenApi, public: impl Fn(&str) -> bool, extra: &RouteSet) {
    require_client_ids(doc, extra);
    let error = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property(
            "error",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .description(Some("What went wrong")),
        )
        .required("error")
        .build();
    let components = doc.components.get_or_insert_with(Default::default);
    components
        .schemas
        .insert(ERROR_SCHEMA.into(), RefOr::T(error.into()));
    components.security_schemes.insert(
        SECURITY_SCHEME.into(),
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .description(Some(
                    "The account token (PARLEY_ACCOUNT_TOKEN), or a session's secret \
                     (/set-api-secret) for that session's routes; a session's secret is \
                     also accepted in the x-v3-secret header",
                ))
                .build(),
        ),
    );
    for (path, item) in doc.paths.paths.iter_mut() {
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.options,
            &mut item.head,
            &mut item.patch,
            &mut item.trace,
        ];
        for op in operations.into_iter().flatten() {
            complete_operation(
                op,
                public(path),
                local_only(path) || (extra.local_only)(path),
            );
            if PACED.contains(&path.as_str()) {
                paced(op);
            }
        }
    }
}

/// Marks `clientId` required with its pattern in the request bodies and
/// query strings of the routes whose handlers require it.
fn require_client_ids(doc: &mut OpenApi, extra: &RouteSet) {
    let originals = doc
        .components
        .as_ref()
        .map(|c| c.schemas.clone())
        .unwrap_or_default();
    let mut strict = BTreeSet::new();
    for (path, item) in doc.paths.paths.iter_mut() {
        let lenient = LENIENT.contains(&path.as_str()) || extra.lenient.contains(&path.as_str());
        for op in [&mut item.get, &mut item.post].into_iter().flatten() {
            for param in op.parameters.iter_mut().flatten() {
                let named = param.name == "clientId" && param.parameter_in == ParameterIn::Query;
                // A multipart upload names its session in the query string.
                let upload = path == "/send-media-message";
                if named && (matches!(param.required, Required::True) || upload) {
                    param.required = Required::True;
                    if let Some(RefOr::T(Schema::Object(o))) = param.schema.as_mut() {
                        constrain(o);
                    }
                }
            }
            let Some(body) = op.request_body.as_mut() else {
                continue;
            };
            for content in body.content.values_mut() {
                match content.schema.as_mut() {
                    Some(RefOr::Ref(r)) if lenient => {
                        // Its own unconstrained copy, the shared one gets stricter.
                        if let Some(copy) = originals.get(schema_name(r)).cloned() {
                            content.schema = Some(copy);
                        }
                    }
                    Some(RefOr::Ref(r)) => {
                        strict.insert(schema_name(r).to_string());
                    }
                    _ => {}
                }
            }
        }
    }
    let Some(components) = doc.components.as_mut() else {
        return;
    };
    let mut pending: Vec<String> = strict.into_iter().collect();
    let mut seen = BTreeSet::new();
    while let Some(name) = pending.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        match components.schemas.get_mut(&name) {
            Some(RefOr::T(Schema::Object(o))) => require_in(o),
            Some(RefOr::T(Schema::AllOf(all))) => {
                for member in all.items.iter_mut() {
                    match member {
                        RefOr::T(Schema::Object(o)) => require_in(o),
                        RefOr::Ref(r) => pending.push(schema_name(r).to_string()),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}

/// The document as served: [`complete`]d, with the handlers' field rules
/// written in (see `openapi_rules`), the API's and `extra`'s.
pub fn published(doc: &OpenApi, extra: &RouteSet) -> serde_json::Value {
    let mut json = serde_json::to_value(doc).unwrap_or_default();
    // The operations surface and probe-only servers serve few routes: their
    // rules find nothing.
    let _ = crate::openapi_rules::apply(&mut json);
    let _ = (extra.rules)(&mut json);
    json
}

fn schema_name(r: &Ref) -> &str {
    r.ref_location.rsplit('/').next().unwrap_or_default()
}

fn require_in(o: &mut utoipa::openapi::schema::Object) {
    if let Some(RefOr::T(Schema::Object(id))) = o.properties.get_mut("clientId") {
        constrain(id);
        if !o.required.iter().any(|r| r == "clientId") {
            o.required.push("clientId".into());
        }
    }
}

fn constrain(o: &mut utoipa::openapi::schema::Object) {
    o.pattern = Some(CLIENT_ID_PATTERN.into());
    o.min_length = Some(1);
    o.max_length = Some(64);
}

fn complete_operation(op: &mut Operation, public: bool, local: bool) {
    let has_body = op.request_body.is_some();
    let has_params = op.parameters.as_ref().is_some_and(|p| !p.is_empty());
    let mut shared: Vec<(&str, &str)> = Vec::new();
    if has_body || has_params {
        shared.push((
            "400",
            "Invalid fields, malformed JSON or an invalid query string",
        ));
    }
    if !public {
        shared.push(("401", "Missing or wrong token"));
        op.security = Some(vec![SecurityRequirement::new(
            SECURITY_SCHEME,
            Vec::<String>::new(),
        )]);
    }
    if has_body {
        shared.push(("413", "Body over the limit (1 MiB JSON, 128 MiB upload)"));
        shared.push(("415", "Not sent with the body's content type"));
    }
    if !public && !local {
        shared.push(("503", "No worker runs, or a dependency is unavailable"));
        shared.push(("504", "The session's owner did not answer"));
    }
    let responses = &mut op.responses.responses;
    for (status, description) in shared {
        responses.entry(status.to_string()).or_insert_with(|| {
            let mut response = ResponseBuilder::new().description(description);
            if status == "503" {
                response = response.header(
                    "Retry-After",
                    seconds_header("Seconds after which the dependency may be back"),
                );
            }
            RefOr::T(response.build())
        });
    }
    for (status, response) in responses.iter_mut() {
        if (status.starts_with('4') || status.starts_with('5'))
            && let RefOr::T(response) = response
        {
            with_error_body(response);
        }
    }
}

/// A paced send's 429, with its `Retry-After` header.
fn paced(op: &mut Operation) {
    let retry_after = seconds_header("Seconds after which a send can find room");
    let mut response = ResponseBuilder::new()
        .description(
            "The session's send queue is full (its pacing limit); retry after Retry-After seconds",
        )
        .header("Retry-After", retry_after)
        .build();
    with_error_body(&mut response);
    op.responses
        .responses
        .insert("429".to_string(), RefOr::T(response));
}

/// A `Retry-After` header in seconds.
fn seconds_header(description: &str) -> utoipa::openapi::header::Header {
    utoipa::openapi::header::HeaderBuilder::new()
        .schema(ObjectBuilder::new().schema_type(Type::Integer))
        .description(Some(description))
        .build()
}

/// An error response without a body gets the `{error}` one.
fn with_error_body(response: &mut Response) {
    if response.content.is_empty() {
        let content = ContentBuilder::new()
            .schema(Some(Ref::from_schema_name(ERROR_SCHEMA)))
            .build();
        response.content.insert("application/json".into(), content);
    }
}

#[cfg(test)]
mod tests {
    use super::CLIENT_ID_PATTERN;

    #[test]
    fn every_route_declares_its_shared_statuses_with_error_bodies() {
        let json = crate::openapi(&crate::RouteSet::NONE);
        let send = &json["paths"]["/send-message"]["post"]["responses"];
        for status in [
            "200", "400", "401", "404", "413", "415", "502", "503", "504",
        ] {
            assert!(send.get(status).is_some(), "/send-message lacks {status}");
        }
        let retry_after = &send["503"]["headers"]["Retry-After"]["schema"]["type"];
        assert_eq!(retry_after, "integer", "{send}");
        let ready = &json["paths"]["/health/ready"]["get"]["responses"];
        assert!(ready.get("401").is_none());
        let not_found = &json["paths"]["/send-message"]["post"]["responses"]["404"];
        assert_eq!(
            not_found["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/Error"
        );
        assert_eq!(
            json["components"]["schemas"]["Error"]["required"],
            serde_json::json!(["error"])
        );
    }

    #[test]
    fn client_ids_are_required_where_the_handlers_require_them() {
        let json = crate::openapi(&crate::RouteSet::NONE);
        let schemas = &json["components"]["schemas"];
        let only = &schemas["ClientOnly"];
        assert_eq!(only["required"], serde_json::json!(["clientId"]));
        assert_eq!(only["properties"]["clientId"]["pattern"], CLIENT_ID_PATTERN);
        // /check-state answers any clientId: its own unconstrained copy.
        let check = &json["paths"]["/check-state"]["post"]["requestBody"]["content"]["application/json"]
            ["schema"];
        assert!(check.get("$ref").is_none(), "{check}");
        assert!(check.get("required").is_none(), "{check}");
        let qr = json["paths"]["/qr"]["get"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "clientId")
            .unwrap()
            .clone();
        assert_eq!(qr["schema"]["pattern"], CLIENT_ID_PATTERN);
        let clients = &json["paths"]["/clients"]["get"]["parameters"][0];
        assert_eq!(clients["required"], false, "{clients}");
    }
}

#[cfg(test)]
mod rules_tests {
    use crate::openapi_rules::{CALLBACK_URL, GROUP_JID, RECIPIENT};

    #[test]
    fn every_rule_finds_its_field_when_every_route_is_served() {
        let mut doc = crate::openapi(&crate::RouteSet::NONE);
        assert_eq!(crate::openapi_rules::apply(&mut doc), Vec::<String>::new());
    }

    #[test]
    fn the_handlers_rules_are_in_the_document() {
        let json = crate::openapi(&crate::RouteSet::NONE);
        let schemas = &json["components"]["schemas"];
        let text = &schemas["SendText"];
        let to = text["allOf"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["properties"]["to"].is_object())
            .unwrap();
        assert_eq!(to["properties"]["to"]["pattern"], RECIPIENT);
        assert!(
            to["required"].as_array().unwrap().contains(&"to".into()),
            "{to}"
        );
        assert_eq!(
            schemas["SetWebhook"]["properties"]["webhookUrl"]["pattern"],
            CALLBACK_URL
        );
        assert_eq!(
            schemas["GroupRequest"]["properties"]["groupJid"]["pattern"],
            GROUP_JID
        );
        assert_eq!(
            schemas["UpdateGroupMembers"]["properties"]["action"]["enum"],
            serde_json::json!(["add", "remove", "promote", "demote"])
        );
        let start = &json["paths"]["/start"]["post"]["requestBody"]["content"]["application/json"]
            ["schema"];
        assert_eq!(start["$ref"], "#/components/schemas/StartBody");
    }

    #[test]
    fn the_patterns_accept_what_the_handlers_accept() {
        use parley_model::recipients::Recipient;
        let re = |p: &str| regex::Regex::new(p).unwrap();
        let to = re(RECIPIENT);
        for ok in [
            "+4915112345678",
            "123456789012345",
            "123456789012345@lid",
            "4915112345678@s.whatsapp.net",
            "120363012345678901@g.us",
            "4915112345678-1600000000@g.us",
        ] {
            assert!(to.is_match(ok), "{ok}");
            assert!(Recipient::parse("to", ok).is_ok(), "{ok}");
        }
        for bad in ["", "abc", "+12", "1@example.com"] {
            assert!(!to.is_match(bad), "{bad}");
        }
        let url = re(CALLBACK_URL);
        assert!(url.is_match("https://hooks.example.com/parley"));
        assert!(url.is_match(""));
        assert!(!url.is_match("http://hooks.example.com/"));
        assert!(
            parley_shared::urls::callback_url("webhookUrl", "https://a.b:8443/x", false).is_ok()
        );
        assert!(url.is_match("https://a.b:8443/x"));
    }
}
