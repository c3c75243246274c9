//! Validation of the URLs customers give (webhooks, poll lookups).
use parley_contract::error::ApiError;

/// An absolute `https://` URL (or `http://` when allowed) with a host.
/// Empty input is returned as is (it means "unset").
pub fn callback_url(field: &str, raw: &str, allow_http: bool) -> Result<String, ApiError> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(String::new());
    }
    let url = url::Url::parse(raw)
        .map_err(|_| ApiError::bad_request(format!("{field} must be an absolute URL")))?;
    let scheme_ok = url.scheme() == "https" || (allow_http && url.scheme() == "http");
    if !scheme_ok {
        let allowed = if allow_http { "http(s)" } else { "https" };
        return Err(ApiError::bad_request(format!(
            "{field} must be an absolute {allowed} URL"
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(ApiError::bad_request(format!("{field} must name a host")));
    }
    Ok(raw.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callback_urls() {
        assert!(callback_url("webhookUrl", "https://example.com/hook", false).is_ok());
        assert_eq!(callback_url("webhookUrl", "", false).unwrap(), "");
        for bad in [
            "/relative",
            "ftp://x",
            "http://example.com",
            "https://",
            "not a url",
        ] {
            assert_eq!(
                callback_url("webhookUrl", bad, false).unwrap_err().status,
                400,
                "{bad}"
            );
        }
        assert!(callback_url("webhookUrl", "http://example.com", true).is_ok());
    }
}
