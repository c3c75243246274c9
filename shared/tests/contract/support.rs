//! Where the real services of the contract tests are, and unique names per test.
//!
//! The project's test script starts the services and exports these variables;
//! a developer's machine with the services on their default ports works as is.
//! A missing service fails the test: it never passes silently.

pub fn nats_url() -> String {
    std::env::var("PARLEY_TEST_NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".into())
}

pub fn redis_url() -> String {
    std::env::var("PARLEY_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

/// The S3-compatible endpoint (path style) and its credentials.
pub fn s3_endpoint() -> String {
    std::env::var("PARLEY_TEST_S3_ENDPOINT").unwrap_or_else(|_| "http://127.0.0.1:9000".into())
}

/// A name no other test (or test run) uses: for subject prefixes, key prefixes,
/// database names and buckets.
pub fn unique(prefix: &str) -> String {
    format!("{prefix}{}", uuid::Uuid::new_v4().simple())
}
