//! Outbound pacing of one session: how many messages a minute it may send, and
//! how many may leave back to back after a quiet spell. Linked numbers that
//! send in bursts get banned; the limit is the customer's to set, off unless set.
use std::time::Duration;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::error::ApiError;

/// Highest `messagesPerMinute` accepted (100 a second).
pub const MAX_PER_MINUTE: i64 = 6_000;
/// Highest `burst` accepted.
pub const MAX_BURST: i64 = 1_000;

/// A session's send limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Pacing {
    /// Sustained rate: messages per minute, spaced evenly.
    pub messages_per_minute: u32,
    /// How many messages may go at once before the spacing applies.
    pub burst: u32,
}

impl Pacing {
    /// Checks a requested limit. `messagesPerMinute: 0` turns pacing off
    /// (`None`); `burst` defaults to 1 (every message spaced).
    pub fn from_request(
        per_minute: Option<i64>,
        burst: Option<i64>,
    ) -> Result<Option<Pacing>, ApiError> {
        let per_minute = per_minute.ok_or_else(|| {
            ApiError::bad_request("messagesPerMinute is required (0 turns pacing off)")
        })?;
        if !(0..=MAX_PER_MINUTE).contains(&per_minute) {
            return Err(ApiError::bad_request(format!(
                "messagesPerMinute must be between 0 (off) and {MAX_PER_MINUTE}"
            )));
        }
        let burst = burst.unwrap_or(1);
        if !(1..=MAX_BURST).contains(&burst) {
            return Err(ApiError::bad_request(format!(
                "burst must be between 1 and {MAX_BURST}"
            )));
        }
        if per_minute == 0 {
            return Ok(None);
        }
        // Both ranges fit in u32.
        Ok(Some(Pacing {
            messages_per_minute: per_minute as u32,
            burst: burst as u32,
        }))
    }

    /// The time between two messages at the sustained rate.
    pub fn interval(&self) -> Duration {
        Duration::from_secs(60) / self.messages_per_minute.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_turns_pacing_off_and_burst_defaults_to_one() {
        assert_eq!(Pacing::from_request(Some(0), None), Ok(None));
        assert_eq!(
            Pacing::from_request(Some(30), None),
            Ok(Some(Pacing {
                messages_per_minute: 30,
                burst: 1
            }))
        );
    }

    #[test]
    fn out_of_range_values_are_refused_with_400() {
        for (rate, burst) in [
            (None, None),
            (Some(-1), None),
            (Some(MAX_PER_MINUTE + 1), None),
            (Some(10), Some(0)),
            (Some(10), Some(MAX_BURST + 1)),
        ] {
            let e = Pacing::from_request(rate, burst).unwrap_err();
            assert_eq!(e.status, 400, "{rate:?} {burst:?}: {e}");
        }
    }

    #[test]
    fn the_interval_spreads_a_minute_evenly() {
        let p = Pacing {
            messages_per_minute: 120,
            burst: 1,
        };
        assert_eq!(p.interval(), Duration::from_millis(500));
    }
}
