//! Latency figures of the load tools and benchmarks.
use std::time::Duration;

/// The `p` quantile (0.0..=1.0) of `sorted` (ascending); zero when empty.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 * p) as usize).min(sorted.len().saturating_sub(1));
    sorted.get(at).copied().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_pick_the_rank_and_stay_in_bounds() {
        let ms = |n| Duration::from_millis(n);
        let sorted: Vec<Duration> = (1..=100).map(ms).collect();
        assert_eq!(percentile(&sorted, 0.5), ms(51));
        assert_eq!(percentile(&sorted, 0.99), ms(100));
        assert_eq!(percentile(&sorted, 1.0), ms(100));
        assert_eq!(percentile(&[], 0.99), Duration::ZERO);
    }
}
