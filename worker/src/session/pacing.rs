//! Keeps a session's sends within its pacing limit: each send reserves the
//! next free turn (a virtual schedule: `burst` turns at once, then one per
//! interval). A send whose turn is near waits for it; one whose turn is further
//! than [`MAX_WAIT`] is refused with 429 and `Retry-After`, reserving nothing.
//! The schedule lives with the session's owner: after a handover the new owner
//! starts with a full burst.
use std::time::Duration;

use parley_contract::error::ApiError;
use parley_contract::pacing::Pacing;
use tokio::time::Instant;

/// Longest a send waits for its turn: below the API's wait for an answer
/// (10 s), so the caller gets the send's own outcome.
pub const MAX_WAIT: Duration = Duration::from_secs(8);

/// The pacing schedule of one session.
#[derive(Debug, Default)]
pub(super) struct Pacer {
    limit: Option<Pacing>,
    /// When the schedule is next free at the sustained rate (the theoretical
    /// arrival time); `None` while nothing was sent under this limit.
    next_free: Option<Instant>,
}

impl Pacer {
    pub fn new(limit: Option<Pacing>) -> Self {
        Self {
            limit,
            next_free: None,
        }
    }

    /// Applies a changed limit; an unchanged one keeps the schedule.
    pub fn set(&mut self, limit: Option<Pacing>) {
        if self.limit != limit {
            *self = Self::new(limit);
        }
    }

    /// Reserves a turn for a send at `now`: the instant it may go (`now` when
    /// unpaced or within the burst), or 429 when the wait would exceed
    /// [`MAX_WAIT`].
    pub fn reserve(&mut self, now: Instant) -> Result<Instant, ApiError> {
        let Some(limit) = self.limit else {
            return Ok(now);
        };
        let interval = limit.interval();
        let tolerance = interval * (limit.burst - 1);
        let next_free = self.next_free.map_or(now, |t| t.max(now));
        let turn = next_free.checked_sub(tolerance).map_or(now, |t| t.max(now));
        let wait = turn - now;
        if wait > MAX_WAIT {
            let retry = (wait - MAX_WAIT).as_secs_f64().ceil().max(1.0) as u64;
            return Err(ApiError::too_many_requests(
                format!(
                    "the session's send queue is full (pacing {} a minute, burst {}); retry later",
                    limit.messages_per_minute, limit.burst
                ),
                retry,
            ));
        }
        self.next_free = Some(next_free + interval);
        Ok(turn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pacer(per_minute: u32, burst: u32) -> Pacer {
        Pacer::new(Some(Pacing {
            messages_per_minute: per_minute,
            burst,
        }))
    }

    #[test]
    fn without_a_limit_every_send_goes_at_once() {
        let mut p = Pacer::default();
        let now = Instant::now();
        for _ in 0..1000 {
            assert_eq!(p.reserve(now).unwrap(), now);
        }
    }

    #[test]
    fn a_burst_goes_at_once_then_sends_are_spaced() {
        // 60 a minute: one a second; burst 3.
        let mut p = pacer(60, 3);
        let now = Instant::now();
        let turns: Vec<Duration> = (0..6).map(|_| p.reserve(now).unwrap() - now).collect();
        let s = Duration::from_secs;
        assert_eq!(turns, [s(0), s(0), s(0), s(1), s(2), s(3)]);
    }

    #[test]
    fn a_quiet_spell_refills_the_burst() {
        let mut p = pacer(60, 2);
        let start = Instant::now();
        p.reserve(start).unwrap();
        p.reserve(start).unwrap();
        assert_eq!(p.reserve(start).unwrap() - start, Duration::from_secs(1));
        let later = start + Duration::from_secs(30);
        assert_eq!(p.reserve(later).unwrap(), later);
        assert_eq!(p.reserve(later).unwrap(), later);
        assert_eq!(p.reserve(later).unwrap() - later, Duration::from_secs(1));
    }

    #[test]
    fn a_turn_beyond_the_longest_wait_is_refused_without_reserving() {
        // One every 10 s: the second send would wait 10 s > 8 s.
        let mut p = pacer(6, 1);
        let now = Instant::now();
        assert_eq!(p.reserve(now).unwrap(), now);
        let refused = p.reserve(now).unwrap_err();
        assert_eq!(refused.status, 429);
        assert_eq!(refused.retry_after, Some(2));
        // Nothing was reserved: 2 s later the turn is within the wait.
        let later = now + Duration::from_secs(2);
        assert_eq!(p.reserve(later).unwrap() - later, MAX_WAIT);
    }

    #[test]
    fn a_changed_limit_starts_a_new_schedule_an_unchanged_one_keeps_it() {
        let mut p = pacer(6, 1);
        let now = Instant::now();
        p.reserve(now).unwrap();
        p.set(Some(Pacing {
            messages_per_minute: 6,
            burst: 1,
        }));
        assert_eq!(p.reserve(now).unwrap_err().status, 429);
        p.set(None);
        assert_eq!(p.reserve(now).unwrap(), now);
    }
}
