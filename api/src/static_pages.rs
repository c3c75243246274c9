//! Static pages served by the gateway's listener without authentication:
//! `/console/` (the operator console) and `/docs/` (Swagger UI over
//! `/openapi.json`). Their assets are compiled into
//! the binary; every piece of data a page shows comes from the authenticated
//! JSON routes, called by the page's own script. Strict headers: a CSP that
//! allows no inline script and no framing, `nosniff`, no referrer.
use std::sync::LazyLock;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use parley_contract::error::ApiError;
use sha2::{Digest, Sha256};

use crate::HttpError;

/// One file of a page.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($folder:literal, $path:literal, $content_type:expr) => {
        Asset {
            path: $path,
            content_type: $content_type,
            body: include_bytes!(concat!("../assets/", $folder, "/", $path)),
        }
    };
}

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// A folder of pages: `/<name>/<path>`; `index.html` answers `/<name>/` itself.
struct Folder {
    name: &'static str,
    assets: &'static [Asset],
}

static FOLDERS: &[Folder] = &[
    Folder {
        name: "console",
        assets: &[
            asset!("console", "index.html", HTML),
            asset!("console", "console.js", JS),
            asset!("console", "console.css", CSS),
            asset!("docs", "favicon.png", "image/png"),
        ],
    },
    Folder {
        name: "docs",
        assets: &[
            asset!("docs", "index.html", HTML),
            asset!("docs", "init.js", JS),
            asset!("docs", "favicon.png", "image/png"),
            asset!("docs", "vendor/swagger-ui-bundle.js", JS),
            asset!("docs", "vendor/swagger-ui.css", CSS),
        ],
    },
];

/// Scripts and styles from this server only; inline style attributes are
/// allowed (Swagger UI sets some), inline scripts never.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; \
     connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The entity tag of each asset, by folder and position.
static ETAGS: LazyLock<Vec<Vec<String>>> = LazyLock::new(|| {
    FOLDERS
        .iter()
        .map(|f| {
            f.assets
                .iter()
                .map(|a| format!("\"{}\"", hex::encode(&Sha256::digest(a.body)[..12])))
                .collect()
        })
        .collect()
});

/// Whether `path` is one of the static pages (for the authentication layer).
pub fn is_static(path: &str) -> bool {
    FOLDERS.iter().any(|f| {
        path.strip_prefix('/')
            .and_then(|p| p.strip_prefix(f.name))
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

/// Registers the pages' routes.
pub fn configure(cfg: &mut web::ServiceConfig) {
    for folder in FOLDERS {
        cfg.route(&format!("/{}", folder.name), web::get().to(to_folder))
            .route(
                &format!("/{}/{{path:.*}}", folder.name),
                web::get().to(page),
            );
    }
}

/// `/docs` → `docs/`, so the pages' relative links resolve below it (also
/// behind a path prefix).
async fn to_folder(req: HttpRequest) -> HttpResponse {
    let last = req.path().rsplit('/').next().unwrap_or_default();
    HttpResponse::PermanentRedirect()
        .insert_header((header::LOCATION, format!("{last}/")))
        .finish()
}

async fn page(req: HttpRequest, path: web::Path<String>) -> Result<HttpResponse, HttpError> {
    let wanted = match path.as_str() {
        "" => "index.html",
        other => other,
    };
    let not_found = || ApiError::not_found(format!("no page {}", req.path()));
    let name = req.path().trim_start_matches('/').split('/').next();
    let f = FOLDERS
        .iter()
        .position(|f| Some(f.name) == name)
        .ok_or_else(not_found)?;
    let at = FOLDERS[f]
        .assets
        .iter()
        .position(|a| a.path == wanted)
        .ok_or_else(not_found)?;
    Ok(serve(&req, &FOLDERS[f].assets[at], &ETAGS[f][at]))
}

fn serve(req: &HttpRequest, asset: &Asset, etag: &str) -> HttpResponse {
    let fresh = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let mut res = if fresh {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    let res = res
        .insert_header((header::CONTENT_TYPE, asset.content_type))
        .insert_header((header::ETAG, etag))
        // Revalidated on every load, so a new release's pages are used at once.
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        ))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .insert_header(("Cross-Origin-Opener-Policy", "same-origin"));
    if fresh {
        res.finish()
    } else {
        res.body(asset.body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::{HeaderMap, HeaderName};
    use actix_web::test;

    fn hv(headers: &HeaderMap, name: HeaderName) -> &str {
        headers
            .get(&name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_else(|| panic!("no {name}"))
    }

    async fn get(path: &str, etag: Option<&str>) -> actix_web::dev::ServiceResponse {
        let app = test::init_service(actix_web::App::new().configure(configure)).await;
        let mut req = test::TestRequest::get().uri(path);
        if let Some(etag) = etag {
            req = req.insert_header((header::IF_NONE_MATCH, etag));
        }
        test::call_service(&app, req.to_request()).await
    }

    #[actix_web::test]
    async fn each_folder_redirects_and_its_index_is_the_page() {
        for (folder, script) in [("docs", "init.js"), ("console", "console.js")] {
            let res = get(&format!("/{folder}"), None).await;
            assert_eq!(res.status(), 308);
            assert_eq!(hv(res.headers(), header::LOCATION), format!("{folder}/"));
            let res = get(&format!("/{folder}/"), None).await;
            assert_eq!(res.status(), 200);
            assert_eq!(hv(res.headers(), header::CONTENT_TYPE), HTML);
            let body = test::read_body(res).await;
            let html = std::str::from_utf8(&body).unwrap();
            assert!(html.contains(&format!(r#"src="{script}""#)), "{html}");
            assert!(!html.contains("<script>"), "no inline script: {html}");
            assert!(!inline_handler(html), "no inline handler: {html}");
        }
    }

    /// Whether `html` has an attribute like ` onclick=`.
    fn inline_handler(html: &str) -> bool {
        html.match_indices(" on").any(|(at, _)| {
            let rest = &html[at + 3..];
            let name_len = rest
                .find(|c: char| !c.is_ascii_lowercase())
                .unwrap_or(rest.len());
            name_len > 0 && rest[name_len..].trim_start().starts_with('=')
        })
    }

    #[actix_web::test]
    async fn only_the_folders_are_static() {
        assert!(inline_handler(r#"<a onclick="x()">"#));
        assert!(!inline_handler("sign in on this page"));
        for path in ["/docs", "/docs/", "/docs/init.js", "/console", "/console/x"] {
            assert!(is_static(path), "{path}");
        }
        for path in ["/docsx", "/consoles/", "/", "/sessions", "/doc"] {
            assert!(!is_static(path), "{path}");
        }
    }

    #[actix_web::test]
    async fn every_asset_has_its_type_and_the_strict_headers() {
        for (folder, asset) in FOLDERS
            .iter()
            .flat_map(|f| f.assets.iter().map(move |a| (f.name, a)))
        {
            let res = get(&format!("/{folder}/{}", asset.path), None).await;
            assert_eq!(res.status(), 200, "{}", asset.path);
            let h = res.headers();
            assert_eq!(hv(h, header::CONTENT_TYPE), asset.content_type);
            assert_eq!(hv(h, header::X_CONTENT_TYPE_OPTIONS), "nosniff");
            assert_eq!(hv(h, header::X_FRAME_OPTIONS), "DENY");
            let csp = hv(h, header::CONTENT_SECURITY_POLICY);
            assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
            assert!(csp.contains("script-src 'self';"), "{csp}");
            assert_eq!(test::read_body(res).await.len(), asset.body.len());
        }
    }

    #[actix_web::test]
    async fn a_known_version_is_not_sent_again() {
        let res = get("/docs/init.js", None).await;
        let etag = hv(res.headers(), header::ETAG).to_string();
        let again = get("/docs/init.js", Some(&etag)).await;
        assert_eq!(again.status(), 304);
        assert!(test::read_body(again).await.is_empty());
        let other = get("/docs/init.js", Some("\"stale\"")).await;
        assert_eq!(other.status(), 200);
    }

    #[actix_web::test]
    async fn anything_else_under_the_folder_is_not_found_as_json() {
        for path in [
            "/docs/nope.js",
            "/docs/../Cargo.toml",
            "/docs/vendor/",
            "/console/init.js",
            "/console/%2e%2e/docs/init.js",
        ] {
            let res = get(path, None).await;
            assert_eq!(res.status(), 404, "{path}");
            assert_eq!(hv(res.headers(), header::CONTENT_TYPE), "application/json");
        }
    }
}
