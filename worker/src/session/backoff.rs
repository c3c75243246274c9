//! Reconnect delays: exponential from a floor to a ceiling, with jitter.
use std::time::Duration;

use rand::Rng;

/// Exponential backoff; [`Backoff::reset`] after a stable connection.
#[derive(Debug, Clone)]
pub struct Backoff {
    min: Duration,
    max: Duration,
    next: Duration,
}

impl Backoff {
    pub fn new(min: Duration, max: Duration) -> Self {
        let max = max.max(min);
        Self {
            min,
            max,
            next: min,
        }
    }

    /// The delay before the next attempt: the current step with up to half of it
    /// taken off at random (so sessions dropped together do not retry together).
    pub fn next_delay(&mut self) -> Duration {
        let step = self.next;
        self.next = (self.next * 2).min(self.max);
        let half = step / 2;
        let jitter = rand::thread_rng().gen_range(Duration::ZERO..=half);
        step - jitter
    }

    /// Starts again from the floor.
    pub fn reset(&mut self) {
        self.next = self.min;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_up_to_the_ceiling_with_jitter_and_resets() {
        let min = Duration::from_millis(200);
        let max = Duration::from_secs(30);
        let mut b = Backoff::new(min, max);
        let mut step = min;
        for _ in 0..20 {
            let d = b.next_delay();
            assert!(d <= step && d >= step / 2, "{d:?} for step {step:?}");
            step = (step * 2).min(max);
        }
        assert!(b.next_delay() >= max / 2);
        b.reset();
        assert!(b.next_delay() <= min);
    }
}
