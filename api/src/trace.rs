//! One span per HTTP request (the root of the trace that follows the command over
//! the bus into the worker, out to the network and the webhook).
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use tracing::Instrument;

pub async fn span(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let route = req.match_pattern().unwrap_or_else(|| "unmatched".into());
    let span = tracing::info_span!(
        "http.request",
        otel.name = %format!("{} {route}", req.method()),
        http.method = %req.method(),
        http.route = %route,
        http.status_code = tracing::field::Empty,
    );
    let res = next.call(req).instrument(span.clone()).await?;
    span.record("http.status_code", res.status().as_u16());
    Ok(res)
}
