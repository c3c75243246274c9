//! Validation of the URLs customers give (webhooks, poll lookups).
use crate::error::ApiError;

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

/// A phone number: 8 to 15 digits with country code (a leading `+` is accepted).
pub fn phone(field: &str, raw: &str) -> Result<String, ApiError> {
    let digits = raw.trim().trim_start_matches('+');
    if (8..=15).contains(&digits.len()) && digits.chars().all(|c| c.is_ascii_digit()) {
        Ok(digits.to_string())
    } else {
        Err(ApiError::bad_request(format!(
            "{field} must be 8 to 15 digits with country code"
        )))
    }
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

    #[test]
    fn phones() {
        assert_eq!(phone("phone", "+4915112345678").unwrap(), "4915112345678");
        for bad in ["123", "49151abc45678", "1234567890123456"] {
            assert!(phone("phone", bad).is_err(), "{bad}");
        }
    }
}
