//! HTTP metrics: requests by route template, method and status, and their latency.
use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use parley_shared::metrics::metrics;

pub async fn record(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    // The route template, not the path: ids must not become label values.
    let route = req.match_pattern().unwrap_or_else(|| "unmatched".into());
    let method = req.method().to_string();
    let res = next.call(req).await?;
    let status = res.status().as_u16().to_string();
    let m = metrics();
    m.http_requests
        .with_label_values(&[&route, &method, &status])
        .inc();
    m.http_duration
        .with_label_values(&[&route, &method])
        .observe(started.elapsed().as_secs_f64());
    Ok(res)
}
