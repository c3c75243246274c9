//! Writes of other stores that ride in the event log's transactions on
//! SQLite: a database with one write lock and a flush to disk at each
//! commit, where the device store's writes (a received message's Signal
//! session, its message secret) followed each of the event log's commits
//! with a commit of their own, the two writers taking turns at the lock.
//! A ride is fenced as an append is: its statements are made under the
//! write lock, from the session's stored fence, and commit with the
//! batch's appends and delivery records, or not at all.
//!
//! A batch of rides without appends waits for one (up to twice their usual
//! gap) only while appends come at least every [`RIDES_LINGER`] (a
//! received message's keys are saved just after its event is logged, and
//! the next message's event is due within milliseconds), never at low
//! rates: a login's many writes go at once. With delivery records it waits
//! as they do. A batch that fails is written again without its rides, and
//! then each ride alone, so that only a failing write fails.
use sea_orm::Statement;
use tokio::sync::oneshot;
use tokio::time::{Duration, Instant};

use crate::db::DbError;

/// The longest a batch without appends but with rides waits for one: the
/// appends must have been arriving at least this often.
pub(super) const RIDES_LINGER: Duration = Duration::from_millis(8);

/// A ride's statements, made under the database's write lock from its
/// session's stored fence (`None`: the session has no row); none when the
/// write is refused (the rider notes why). Made again when the ride is
/// tried alone after its batch failed.
pub type RideWork = Box<dyn Fn(Option<i64>) -> Vec<Statement> + Send + Sync>;

/// A write riding in the next batch.
pub(super) struct Ride {
    pub client_id: String,
    pub work: RideWork,
    pub reply: oneshot::Sender<Result<(), DbError>>,
}

/// The statements of `rides`, in the order queued, under their sessions'
/// fences as the batch read them (`fence_of`).
pub(super) fn statements(rides: &[Ride], fence_of: impl Fn(&str) -> Option<i64>) -> Vec<Statement> {
    rides
        .iter()
        .flat_map(|ride| (ride.work)(fence_of(&ride.client_id)))
        .collect()
}

/// How often the writer takes appends: a batch of rides waits for the next
/// one only while they come at least every [`RIDES_LINGER`].
#[derive(Debug, Default)]
pub(super) struct Pace {
    /// The running average of the time between two batches with appends.
    gap: Option<Duration>,
    last: Option<Instant>,
}

impl Pace {
    /// Notes a batch with appends taken at `now`.
    pub fn appended(&mut self, now: Instant) {
        if let Some(last) = self.last {
            let sample = now.saturating_duration_since(last);
            self.gap = Some(self.gap.map_or(sample, |gap| (gap * 7 + sample) / 8));
        }
        self.last = Some(now);
    }

    /// How long a batch of rides taken at `now` waits for an append: up to
    /// twice the usual gap while appends come often and lately, else none.
    pub fn wait(&self, now: Instant) -> Option<Duration> {
        let (gap, last) = (self.gap?, self.last?);
        let lately = now.saturating_duration_since(last) <= RIDES_LINGER * 2;
        (gap <= RIDES_LINGER && lately).then(|| RIDES_LINGER.min(gap * 2))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rides_wait_only_while_appends_come_often() {
        let start = Instant::now();
        let ms = Duration::from_millis;
        let mut pace = Pace::default();
        assert_eq!(pace.wait(start), None, "no append yet");
        pace.appended(start);
        assert_eq!(pace.wait(start), None, "one append: no pace yet");
        for i in 1..=8 {
            pace.appended(start + ms(2 * i));
        }
        assert_eq!(pace.wait(start + ms(17)), Some(ms(4)), "every 2 ms");
        assert_eq!(pace.wait(start + ms(40)), None, "none lately");
        let mut slow = Pace::default();
        for i in 0..8 {
            slow.appended(start + ms(50 * i));
        }
        assert_eq!(slow.wait(start + ms(351)), None, "every 50 ms: too rare");
    }
}
