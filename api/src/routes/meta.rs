//! Non-secret facts about this deployment, and the OpenAPI document.
use actix_web::{HttpResponse, get, web};
use parley_contract::wire::meta::ConfigFacts;
use parley_shared::config::Network;

use crate::{AppState, Inventory};

#[utoipa::path(tag = "meta", responses((status = 200, body = ConfigFacts)))]
#[get("/config")]
pub async fn config(
    state: web::Data<AppState>,
    inventory: web::Data<Inventory>,
) -> web::Json<ConfigFacts> {
    let media = &state.ports.media;
    web::Json(ConfigFacts {
        pod_name: state.pod_name.clone(),
        environment: match state.config.network {
            Network::Sandbox => "sandbox",
            Network::Whatsapp => "production",
        }
        .into(),
        storage: media.kind().into(),
        public_media: media.public_url(""),
        proxy: state.config.network_proxy.is_some(),
        alerts: false,
        version: env!("CARGO_PKG_VERSION").into(),
        routes: inventory.entries(),
    })
}

#[utoipa::path(tag = "meta", responses((status = 200, description = "This document")))]
#[get("/openapi.json")]
pub async fn openapi_json(doc: web::Data<crate::Published>) -> HttpResponse {
    HttpResponse::Ok().json(&doc.0)
}
