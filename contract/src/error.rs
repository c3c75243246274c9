//! `ApiError`: the one error type at the edge, `{error}` with a status; it crosses the bus intact.
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{status} {message}")]
pub struct ApiError {
    pub status: u16,
    pub message: String,
    /// Seconds after which a retry may succeed (429 and 503): the
    /// `Retry-After` header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
}

/// The seconds a 503's `Retry-After` asks for: dependencies that restart
/// are back within seconds, and a session's new owner takes over in under 5.
pub const UNAVAILABLE_RETRY_AFTER: u64 = 2;

impl ApiError {
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            retry_after: None,
        }
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, message)
    }
    pub fn unauthorized() -> Self {
        Self::new(401, "unauthorized")
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, message)
    }
    pub fn method_not_allowed() -> Self {
        Self::new(405, "method not allowed")
    }
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(409, message)
    }
    pub fn payload_too_large(message: impl Into<String>) -> Self {
        Self::new(413, message)
    }
    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self::new(415, message)
    }
    /// 429 with `Retry-After: retry_after_secs`.
    pub fn too_many_requests(message: impl Into<String>, retry_after_secs: u64) -> Self {
        Self {
            retry_after: Some(retry_after_secs),
            ..Self::new(429, message)
        }
    }
    pub fn bad_gateway(message: impl Into<String>) -> Self {
        Self::new(502, message)
    }
    /// 503 with `Retry-After: UNAVAILABLE_RETRY_AFTER`: a dependency is out
    /// of reach for now.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self {
            retry_after: Some(UNAVAILABLE_RETRY_AFTER),
            ..Self::new(503, message)
        }
    }
    pub fn gateway_timeout(message: impl Into<String>) -> Self {
        Self::new(504, message)
    }

    /// An unexpected failure: logged with its context, answered without internals.
    pub fn internal(context: &str, err: impl std::fmt::Display) -> Self {
        tracing::error!(error = %err, "{context}");
        Self::new(500, "internal error")
    }

    /// The `{error}` body.
    pub fn body(&self) -> serde_json::Value {
        serde_json::json!({ "error": self.message })
    }
}

/// A value that is not one of the model's: the customer's mistake.
impl From<parley_model::Invalid> for ApiError {
    fn from(e: parley_model::Invalid) -> Self {
        ApiError::bad_request(e.message)
    }
}

#[cfg(test)]
mod tests {
    use super::ApiError;
    use parley_model::ClientId;

    #[test]
    fn a_value_outside_the_model_is_a_400_with_its_message() {
        let e: ApiError = ClientId::parse("a b").unwrap_err().into();
        assert_eq!(e.status, 400);
        assert_eq!(e.message, "clientId may contain only letters and digits");
    }

    #[test]
    fn a_dependency_out_of_reach_asks_for_a_retry_after_seconds() {
        let e = ApiError::unavailable("bus unavailable");
        assert_eq!((e.status, e.retry_after), (503, Some(2)));
        let crossed: ApiError = serde_json::from_value(serde_json::to_value(&e).unwrap()).unwrap();
        assert_eq!(crossed, e, "it crosses the bus with its Retry-After");
    }
}
