//! Column value conversions: the trait's u32 ids and fixed-size keys to and from
//! BIGINT and BLOB columns, rejecting stored values that do not fit.
use whatsapp_rust::wacore::store::error::StoreError;

use super::error::invalid;

/// A u32 as a BIGINT (always fits).
pub(super) fn big(v: u32) -> i64 {
    i64::from(v)
}

/// A BIGINT column holding a u32.
pub(super) fn u32_of(what: &str, v: i64) -> Result<u32, StoreError> {
    u32::try_from(v).map_err(|_| invalid(what, format!("{v} is not a u32")))
}

/// A BIGINT column holding an i32.
pub(super) fn i32_of(what: &str, v: i64) -> Result<i32, StoreError> {
    i32::try_from(v).map_err(|_| invalid(what, format!("{v} is not an i32")))
}

/// A BIGINT column holding a u64.
pub(super) fn u64_of(what: &str, v: i64) -> Result<u64, StoreError> {
    u64::try_from(v).map_err(|_| invalid(what, format!("{v} is negative")))
}

/// A u64 as a BIGINT.
pub(super) fn big_u64(what: &str, v: u64) -> Result<i64, StoreError> {
    i64::try_from(v).map_err(|_| StoreError::Validation(format!("{what} {v} exceeds a BIGINT")))
}

/// A BLOB column holding exactly `N` bytes.
pub(super) fn array<const N: usize>(what: &str, bytes: &[u8]) -> Result<[u8; N], StoreError> {
    bytes
        .try_into()
        .map_err(|_| invalid(what, format!("{} bytes, expected {N}", bytes.len())))
}

/// Unix seconds now.
pub(super) fn now_secs() -> i64 {
    chrono::Utc::now().timestamp()
}
