//! Permanent public media links: the stored bytes, streamed from the store,
//! never as active content of the gateway's origin (see
//! `parley_shared::media::safety`).
use actix_web::http::header::{
    CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_SECURITY_POLICY, CONTENT_TYPE,
    X_CONTENT_TYPE_OPTIONS,
};
use actix_web::{HttpResponse, get, web};
use parley_contract::error::ApiError;
use parley_shared::media::{MediaError, safety, valid_key};

use crate::{AppState, HttpError};

#[utoipa::path(tag = "media", path = "/media/{key}",
    params(("key" = String, Path, description = "Storage key")),
    responses((status = 200, description = "The file"), (status = 404, description = "No such file")))]
#[get("/media/{key:.*}")]
pub async fn public_file(
    state: web::Data<AppState>,
    key: web::Path<String>,
) -> Result<HttpResponse, HttpError> {
    let key = key.into_inner();
    if !valid_key(&key) {
        return Err(ApiError::not_found("no such file").into());
    }
    match state.ports.media.get_stream(&key).await {
        Ok(Some(object)) => {
            let content_type = &object.content_type;
            let mut res = HttpResponse::Ok();
            res.insert_header((CONTENT_TYPE, safety::served_type(content_type)))
                .insert_header((CONTENT_DISPOSITION, safety::disposition(content_type)))
                .insert_header((X_CONTENT_TYPE_OPTIONS, "nosniff"))
                .insert_header((CONTENT_SECURITY_POLICY, safety::CONTENT_SECURITY_POLICY))
                .insert_header((CACHE_CONTROL, "public, max-age=31536000, immutable"));
            if let Some(size) = object.size {
                res.no_chunking(size);
            }
            Ok(res.streaming(object.chunks))
        }
        Ok(None) | Err(MediaError::InvalidKey) => Err(ApiError::not_found("no such file").into()),
        Err(MediaError::Unavailable(e)) => {
            tracing::error!(error = %e, key = %key, "media store");
            Err(ApiError::unavailable("media store unavailable").into())
        }
    }
}
