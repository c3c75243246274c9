//! Waiting for company: a writer whose every batch costs the database one
//! statement and one commit takes what is queued when it looks. At low rates
//! that is one request, written at once. Under load the next request is
//! about to arrive, and holding a lone one a moment lets the two share a
//! statement (on PostgreSQL a statement costs the server about 0.14 ms of
//! CPU beyond its own work, whatever its size): while requests have been
//! arriving faster than its longest wait, a writer that took a lone request
//! waits for the next two, up to two and a half of their average gaps and
//! never longer than the longest wait. A batch that has company already
//! goes at once.
use tokio::sync::mpsc;
use tokio::time::{Duration, Instant, timeout_at};

/// The weight of the newest gap in the running average (1/8).
const NEWEST: u32 = 8;

/// One writer's sense of how fast its requests arrive.
#[derive(Debug)]
pub struct Company {
    /// The longest wait for company.
    most: Duration,
    /// The running average of the time between two requests.
    gap: Duration,
    /// When the writer last took requests.
    last: Option<Instant>,
}

impl Company {
    /// A writer that waits at most `most` for company.
    pub fn new(most: Duration) -> Company {
        Company {
            most,
            gap: Duration::MAX,
            last: None,
        }
    }

    /// Adds to a lone request in `batch` (just taken from `rx`) what arrives
    /// until two more have come or the wait is over, when requests have
    /// been arriving faster than the wait, up to `max` in all.
    pub async fn gather<T>(&mut self, rx: &mut mpsc::Receiver<T>, batch: &mut Vec<T>, max: usize) {
        self.gather_by(rx, batch, max, |_| true).await;
    }

    /// [`Company::gather`] where only the requests that `counts` are company
    /// (and timed): the others ride along, and a batch of them alone is not
    /// timed.
    pub async fn gather_by<T>(
        &mut self,
        rx: &mut mpsc::Receiver<T>,
        batch: &mut Vec<T>,
        max: usize,
        counts: impl Fn(&T) -> bool,
    ) {
        let now = Instant::now();
        let counted = |batch: &[T]| batch.iter().filter(|r| counts(r)).count();
        if counted(batch) == 1 && self.gap <= self.most {
            // Long enough for the next two requests, with some slack.
            let deadline = now + self.most.min(self.gap * 5 / 2);
            while batch.len() < max && counted(batch) < 3 {
                let room = max - batch.len();
                match timeout_at(deadline, rx.recv_many(batch, room)).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        }
        let taken = counted(batch);
        if taken > 0 {
            self.note(now, taken);
        }
    }

    /// While the counted requests have been coming at least every `often`,
    /// the last of them within twice that: how long to wait for the next
    /// (twice their average gap, at most `often`). Else none.
    pub fn due(&self, now: Instant, often: Duration) -> Option<Duration> {
        let lately = now.saturating_duration_since(self.last?) <= often * 2;
        (self.gap <= often && lately).then(|| often.min(self.gap * 2))
    }

    /// Notes `taken` requests taken at `now`.
    fn note(&mut self, now: Instant, taken: usize) {
        if let Some(last) = self.last {
            let taken = u32::try_from(taken.max(1)).unwrap_or(u32::MAX);
            let sample = now.saturating_duration_since(last) / taken;
            self.gap = if self.gap == Duration::MAX {
                sample
            } else {
                (self.gap * (NEWEST - 1) + sample) / NEWEST
            };
        }
        self.last = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_lone_request_waits_for_nothing_at_low_rates() {
        let (tx, mut rx) = mpsc::channel(8);
        let mut company = Company::new(Duration::from_millis(2));
        for _ in 0..3 {
            tx.send(1).await.unwrap();
            let mut batch = Vec::new();
            rx.recv_many(&mut batch, 8).await;
            let start = Instant::now();
            company.gather(&mut rx, &mut batch, 8).await;
            assert_eq!(start.elapsed(), Duration::ZERO);
            assert_eq!(batch.len(), 1);
            tokio::time::advance(Duration::from_millis(100)).await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn under_load_a_lone_request_waits_for_the_next_two() {
        let (tx, mut rx) = mpsc::channel(64);
        let mut company = Company::new(Duration::from_millis(4));
        // Requests every millisecond (the timers' tick), each taken alone.
        let sender = tokio::spawn(async move {
            for i in 0..40 {
                tx.send(i).await.unwrap();
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        });
        let mut sizes = Vec::new();
        let mut batch = Vec::new();
        while rx.recv_many(&mut batch, 1).await > 0 {
            company.gather(&mut rx, &mut batch, 4).await;
            sizes.push(batch.len());
            batch.clear();
        }
        sender.await.unwrap();
        // The first two go alone (the gap is not known yet), the rest in
        // threes at most: the wait ends with the second request after it.
        assert_eq!(sizes[..2], [1, 1], "{sizes:?}");
        assert!(sizes.iter().all(|&n| n <= 3), "{sizes:?}");
        assert!(sizes.len() <= 16, "{sizes:?}");
        assert_eq!(sizes.iter().sum::<usize>(), 40);
    }

    async fn waited(gap: Duration, taken: &[u8]) -> (Duration, usize) {
        let (tx, mut rx) = mpsc::channel(8);
        let mut company = Company::new(Duration::from_millis(2));
        company.gap = gap;
        company.last = Some(Instant::now());
        for &t in taken {
            tx.send(t).await.unwrap();
        }
        let mut batch = Vec::new();
        rx.recv_many(&mut batch, 8).await;
        let start = Instant::now();
        company.gather(&mut rx, &mut batch, 8).await;
        (start.elapsed(), batch.len())
    }

    #[tokio::test(start_paused = true)]
    async fn the_wait_is_two_and_a_half_gaps_within_its_bound() {
        // Tokio's timers tick in milliseconds: 250 us is one tick at most.
        let (short, taken) = waited(Duration::from_micros(100), &[1]).await;
        assert!(short >= Duration::from_micros(250) && short <= Duration::from_millis(1));
        assert_eq!(taken, 1);
        assert_eq!(
            waited(Duration::from_micros(1_900), &[1]).await,
            (Duration::from_millis(2), 1)
        );
        assert_eq!(
            waited(Duration::from_micros(2_100), &[1]).await,
            (Duration::ZERO, 1)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_next_is_due_only_while_requests_come_often() {
        let ms = Duration::from_millis;
        let (tx, mut rx) = mpsc::channel(8);
        let mut company = Company::new(ms(1));
        let start = Instant::now();
        assert_eq!(company.due(start, ms(8)), None, "none yet");
        let mut take = async |company: &mut Company, at: Duration, item: u8| {
            tokio::time::advance(at.saturating_sub(start.elapsed())).await;
            tx.send(item).await.unwrap();
            let mut batch = Vec::new();
            rx.recv_many(&mut batch, 8).await;
            company.gather_by(&mut rx, &mut batch, 8, |&i| i == 1).await;
        };
        take(&mut company, ms(0), 1).await;
        assert_eq!(company.due(Instant::now(), ms(8)), None, "one: no gap yet");
        for i in 1..=8 {
            take(&mut company, ms(2 * i), 1).await;
            // Others in between are not timed.
            take(&mut company, ms(2 * i) + ms(1), 0).await;
        }
        assert_eq!(
            company.due(start + ms(17), ms(8)),
            Some(ms(4)),
            "every 2 ms"
        );
        assert_eq!(company.due(start + ms(40), ms(8)), None, "none lately");
        let mut slow = Company::new(ms(1));
        for i in 0..8 {
            take(&mut slow, ms(50 * i + 100), 1).await;
        }
        assert_eq!(
            slow.due(start + ms(451), ms(8)),
            None,
            "every 50 ms: too rare"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_batch_with_company_goes_at_once() {
        assert_eq!(
            waited(Duration::from_micros(100), &[1, 2]).await,
            (Duration::ZERO, 2)
        );
    }
}
