//! `GET /metrics`: Prometheus text exposition of this process.
use actix_web::{HttpResponse, get};

#[utoipa::path(tag = "meta", responses((status = 200, description = "Prometheus text format")))]
#[get("/metrics")]
pub async fn metrics() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(parley_shared::metrics::metrics().render())
}
