//! Routes another crate adds to the API: a network adapter's own controls
//! (the sandbox's `/sandbox/*`), mounted by the binary that wires the adapter.
//! The API knows nothing of them beyond what a [`RouteSet`] declares; the
//! helpers below are what their handlers share with the API's own.
use utoipa_actix_web::service_config::ServiceConfig;

pub use crate::auth::authorized_client;
pub use crate::lookup::subject;
pub use crate::owner::send as ask_owner;
pub use crate::routes::lifecycle::{known, unexpected};

/// Routes, and what the OpenAPI document must know of them.
#[derive(Debug, Clone, Copy)]
pub struct RouteSet {
    /// Served by every gateway and probe-only server of a deployment.
    pub everywhere: fn(&mut ServiceConfig),
    /// Served with the gateway's routes.
    pub gateway: fn(&mut ServiceConfig),
    /// Writes the handlers' field rules into the document (as JSON), like the
    /// API's own (`openapi_rules`); returns the rules whose field it lacks.
    pub rules: fn(&mut serde_json::Value) -> Vec<String>,
    /// Paths whose handlers never ask a worker (no 503, no 504).
    pub local_only: fn(&str) -> bool,
    /// Paths whose body takes `clientId` without requiring it.
    pub lenient: &'static [&'static str],
}

impl RouteSet {
    /// No routes.
    pub const NONE: RouteSet = RouteSet {
        everywhere: |_| {},
        gateway: |_| {},
        rules: |_| Vec::new(),
        local_only: |_| false,
        lenient: &[],
    };
}

/// The document's field rules, for a route set's own.
pub mod rules {
    pub use crate::openapi_rules::{
        FieldRule, GROUP_JID, LABEL_ID, PHONE, ParameterRule, RECIPIENT, apply_fields,
        apply_parameters, label_color, label_name, pattern, text,
    };
}
