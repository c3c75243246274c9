//! The sandbox's picture CDN: the signed profile-picture links of
//! `/profile-picture` (`url`) served without the account token, as the
//! network's own links are, until they expire. Served by API pods, `serve` and
//! workers alike, so a link made with any of their public URLs works.
use actix_web::http::header::{CACHE_CONTROL, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS};
use actix_web::{HttpResponse, get, web};
use parley_contract::error::ApiError;
use parley_shared::picture_links::{PictureLinks, Refused};
use serde::Deserialize;
use utoipa::IntoParams;

use parley_api::{AppState, HttpError};

#[derive(Debug, Deserialize, IntoParams)]
pub struct LinkQuery {
    /// `preview` or `image`.
    #[serde(rename = "type", default)]
    pub kind: String,
    /// Expiry, hex Unix seconds.
    #[serde(default)]
    pub oe: String,
    /// Signature.
    #[serde(default)]
    pub oh: String,
}

#[utoipa::path(tag = "sandbox", path = "/sandbox/cdn/pictures/{lid}/{file}",
    params(("lid" = String, Path, description = "The contact's LID user-part"),
        ("file" = String, Path, description = "`<pictureId>.jpg`"), LinkQuery),
    responses((status = 200, description = "The picture (image/png or image/jpeg)"),
        (status = 403, description = "A forged or expired link"),
        (status = 404, description = "The picture is no longer the contact's")),
    security(()))]
#[get("/sandbox/cdn/pictures/{lid}/{file}")]
pub async fn picture(
    state: web::Data<AppState>,
    path: web::Path<(String, String)>,
    query: web::Query<LinkQuery>,
) -> Result<HttpResponse, HttpError> {
    let (lid, file) = path.into_inner();
    let q = query.into_inner();
    let db = super::store(&state);
    let links = PictureLinks::new(&db.picture_link_key().await?);
    let now = chrono::Utc::now().timestamp();
    let picture = links
        .verify(&lid, &file, &q.kind, &q.oe, &q.oh, now)
        .map_err(|refused| match refused {
            Refused::Forged => ApiError::new(403, "the link's signature is not valid"),
            Refused::Expired => ApiError::new(403, "the link has expired"),
        })?;
    let gone = || ApiError::not_found("the picture is no longer available");
    let phone = db
        .phone_by_lid(&picture.lid)
        .await?
        .filter(|p| p.picture_id == picture.picture_id)
        .ok_or_else(gone)?;
    let (content_type, bytes) = phone.picture().ok_or_else(gone)?;
    Ok(HttpResponse::Ok()
        .insert_header((CONTENT_TYPE, content_type))
        .insert_header((X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((CACHE_CONTROL, "private, max-age=3600"))
        .body(bytes))
}
