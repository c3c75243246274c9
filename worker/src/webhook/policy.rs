//! The receiver contract: what an answer means, and when to try again.
use std::time::Duration;

/// Retry timing. Production: 4 attempts about 0.5 s, 1 s, 2 s apart, 15 s per attempt.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    pub attempts: u32,
    pub first_delay: Duration,
    /// Per attempt: the receiver acknowledges within this.
    pub timeout: Duration,
    /// The longest `Retry-After` honoured; a longer one ends the retries.
    pub max_retry_after: Duration,
    /// Events in flight per session.
    pub concurrency: usize,
    /// Events waiting per session; past it new events are dropped (and counted).
    pub queue: usize,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            attempts: 4,
            first_delay: Duration::from_millis(500),
            timeout: Duration::from_secs(15),
            max_retry_after: Duration::from_secs(4),
            concurrency: 8,
            queue: 512,
        }
    }
}

impl RetryPolicy {
    /// The wait before attempt `n + 1` (n >= 1), with ±20% jitter.
    pub fn delay(&self, n: u32) -> Duration {
        let base = self
            .first_delay
            .saturating_mul(1 << (n.saturating_sub(1)).min(16));
        let jitter = 0.8 + rand::random::<f64>() * 0.4;
        base.mul_f64(jitter)
    }
}

/// What one attempt's answer means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Delivered,
    /// 4xx except 429: the receiver refused it for good.
    Rejected,
    /// 429, 5xx or no answer: try again (after `Retry-After` when given).
    Retry(Option<Duration>),
}

pub fn classify(status: u16, retry_after: Option<&str>) -> Verdict {
    match status {
        200..=299 => Verdict::Delivered,
        429 | 500..=599 => Verdict::Retry(retry_after.and_then(parse_retry_after)),
        _ => Verdict::Rejected,
    }
}

/// `Retry-After` in seconds (the HTTP-date form is not honoured: treated as absent).
fn parse_retry_after(v: &str) -> Option<Duration> {
    v.trim().parse::<u64>().ok().map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_receiver_contract() {
        assert_eq!(classify(204, None), Verdict::Delivered);
        assert_eq!(classify(400, None), Verdict::Rejected);
        assert_eq!(classify(410, None), Verdict::Rejected);
        assert_eq!(
            classify(429, Some("2")),
            Verdict::Retry(Some(Duration::from_secs(2)))
        );
        assert_eq!(classify(503, Some("soon")), Verdict::Retry(None));
        assert_eq!(classify(302, None), Verdict::Rejected);
    }

    #[test]
    fn delays_double_with_jitter() {
        let p = RetryPolicy::default();
        for (n, base) in [(1, 500.0), (2, 1000.0), (3, 2000.0)] {
            let d = p.delay(n).as_secs_f64() * 1000.0;
            assert!(d >= base * 0.8 && d <= base * 1.2, "{n}: {d}");
        }
    }
}
