//! One span per HTTP request (the root of the trace that follows the command over
//! the bus into the worker, out to the network and the webhook), and the
//! request id: made here for every request, it names the request's span (so
//! every log line of the request carries it) and comes back in the answer's
//! `x-request-id`, so a caller who meets an error can quote it. (Commands on
//! the bus carry ids of their own, one per command: owners recognise a retried
//! command by it.)
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use tracing::Instrument;

pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

pub async fn span(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let route = req.match_pattern().unwrap_or_else(|| "unmatched".into());
    let id = uuid::Uuid::new_v4().to_string();
    let span = tracing::info_span!(
        "http.request",
        otel.name = %format!("{} {route}", req.method()),
        http.method = %req.method(),
        http.route = %route,
        http.status_code = tracing::field::Empty,
        request_id = %id,
    );
    let header = HeaderValue::from_str(&id).ok();
    // Handlers' and middlewares' failures arrive here as responses already
    // (they answer `{error}` themselves), so each carries the id.
    let mut res = next.call(req).instrument(span.clone()).await?;
    span.record("http.status_code", res.status().as_u16());
    if let Some(header) = header {
        res.headers_mut().insert(REQUEST_ID_HEADER, header);
    }
    Ok(res)
}
