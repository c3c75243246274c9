//! Spreading sessions over live workers: the fair share, when to shed a
//! session, which one, and the hysteresis that keeps this from thrashing.
use std::time::Duration;

use tokio::time::Instant;

use crate::session::{CONNECTED, QR};

/// Sessions per worker when `total` are spread over `live` workers (rounded up).
pub fn fair_share(total: usize, live: usize) -> u64 {
    let total = u64::try_from(total).unwrap_or(u64::MAX);
    let live = u64::try_from(live.max(1)).unwrap_or(u64::MAX);
    total.div_ceil(live)
}

/// Whether this worker should hand one session over: it runs more than its fair
/// share, and the least loaded other member has at least two fewer (so a move
/// strictly narrows the spread and can never bounce back).
pub fn should_shed(load: u64, fair: u64, least_other: Option<u64>) -> bool {
    least_other.is_some_and(|least| load > fair && load >= least.saturating_add(2))
}

/// Which worker to hand a session over to, with its load: the least loaded
/// other member (by name among equals, so that workers sweeping together agree).
pub fn pick_target(others: &[(String, u64)]) -> Option<(&str, u64)> {
    others
        .iter()
        .min_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)))
        .map(|(name, load)| (name.as_str(), *load))
}

/// Which session to hand over: one not online first (nothing to interrupt),
/// then an online one; one showing a QR code last (its code would change while
/// somebody may be scanning it).
pub fn pick_to_shed<Id: Clone + Ord>(sessions: &[(Id, String)]) -> Option<Id> {
    let rank = |status: &str| match status {
        QR => 2,
        CONNECTED => 1,
        _ => 0,
    };
    sessions
        .iter()
        .min_by_key(|(id, status)| (rank(status), id.clone()))
        .map(|(id, _)| id.clone())
}

/// Remembers the member set and the last handover, so load moves only once the
/// membership has settled and one session at a time.
#[derive(Debug)]
pub struct Hysteresis {
    members: Vec<String>,
    since: Instant,
    last_shed: Option<Instant>,
    held_until: Option<Instant>,
}

impl Default for Hysteresis {
    fn default() -> Self {
        Self {
            members: Vec::new(),
            since: Instant::now(),
            last_shed: None,
            held_until: None,
        }
    }
}

impl Hysteresis {
    /// Records the current members (sorted names); a change restarts the settle time.
    pub fn observe(&mut self, members: Vec<String>) {
        if members != self.members {
            self.members = members;
            self.since = Instant::now();
        }
    }

    /// Whether the members were stable for `settle`, the last handover is `gap`
    /// old and no hold is in force.
    pub fn ready(&self, settle: Duration, gap: Duration) -> bool {
        self.since.elapsed() >= settle
            && self.last_shed.is_none_or(|at| at.elapsed() >= gap)
            && self.held_until.is_none_or(|until| Instant::now() >= until)
    }

    /// Pauses shedding for `period` (handed-over sessions were not taken up).
    pub fn hold(&mut self, period: Duration) {
        self.held_until = Some(Instant::now() + period);
    }

    pub fn shed(&mut self) {
        self.last_shed = Some(Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fair_share_rounds_up_and_survives_no_members() {
        assert_eq!(fair_share(10, 2), 5);
        assert_eq!(fair_share(11, 2), 6);
        assert_eq!(fair_share(10, 3), 4);
        assert_eq!(fair_share(3, 0), 3);
        assert_eq!(fair_share(0, 4), 0);
    }

    #[test]
    fn sheds_only_above_fair_share_towards_a_clearly_lighter_member() {
        assert!(should_shed(10, 5, Some(0)));
        assert!(!should_shed(5, 5, Some(0)), "at the fair share");
        assert!(
            !should_shed(6, 5, Some(5)),
            "the move would only swap the imbalance"
        );
        assert!(should_shed(7, 5, Some(5)));
        assert!(!should_shed(10, 5, None), "nobody to take it");
    }

    #[test]
    fn hands_over_to_the_least_loaded_member() {
        let members = |list: &[(&str, u64)]| {
            list.iter()
                .map(|(name, load)| ((*name).to_owned(), *load))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            pick_target(&members(&[("a", 3), ("b", 1), ("c", 2)])),
            Some(("b", 1))
        );
        assert_eq!(pick_target(&members(&[("c", 1), ("b", 1)])), Some(("b", 1)));
        assert_eq!(pick_target(&[]), None);
    }

    #[test]
    fn picks_a_reconnecting_session_before_an_online_one_and_a_qr_last() {
        let s = |list: &[(&str, &str)]| {
            list.iter()
                .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
                .collect::<Vec<_>>()
        };
        let all = s(&[("a", QR), ("b", CONNECTED), ("c", "initializing")]);
        assert_eq!(pick_to_shed(&all).as_deref(), Some("c"));
        assert_eq!(pick_to_shed(&all[..2]).as_deref(), Some("b"));
        assert_eq!(pick_to_shed(&all[..1]).as_deref(), Some("a"));
        assert_eq!(pick_to_shed::<String>(&[]), None);
    }

    #[tokio::test]
    async fn waits_for_settled_members_and_spaces_handovers() {
        let settle = Duration::from_millis(60);
        let gap = Duration::from_millis(30);
        let mut h = Hysteresis::default();
        h.observe(vec!["a".into(), "b".into()]);
        assert!(!h.ready(settle, gap));
        tokio::time::sleep(settle).await;
        assert!(h.ready(settle, gap));
        h.shed();
        assert!(!h.ready(settle, gap));
        tokio::time::sleep(gap).await;
        assert!(h.ready(settle, gap));
        h.observe(vec!["a".into()]);
        assert!(
            !h.ready(settle, gap),
            "a membership change restarts the settle time"
        );
    }
}
