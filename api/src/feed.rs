//! The live feed: a session's event log read as Server-Sent Events, from a
//! `seq` on, by any API server of the deployment (`GET /events/feed`).
//!
//! A feed reads the log itself (the database), so it sees what a replay
//! sees: committed events only, in `seq` order, each once. The session's
//! owner announces each event it logged on the bus (`feed_subject`), which
//! wakes the feed at once; without an announcement (the bus down, or one
//! missed) the feed reads the log again every [`POLL`]. It hands events on
//! only while their `seq` follow one another, so a write still in flight is
//! never passed over; a hole that stays (events the log no longer keeps:
//! retention, or the cap's trimming) is named in a `gap` message before the
//! feed goes on past it.
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use parley_shared::bus::{Bus, Subscription, feed_subject};
use parley_shared::db::Db;
use parley_shared::db::events::LoggedEvent;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio::time::{Instant, MissedTickBehavior, interval_at};

/// The longest a feed goes without reading the log when nothing woke it;
/// also how soon it notices its session was deleted.
pub const POLL: Duration = Duration::from_secs(2);
/// Events read from the log at a time.
const PAGE: u64 = 200;
/// A hole in the `seq`s is passed over only when a read at least this much
/// later still finds it: a session's events commit in `seq` order, so a
/// hole below a committed event is one the log no longer keeps.
const GAP_CONFIRM: Duration = Duration::from_millis(500);
/// Frames waiting for a slow reader before the feed stops reading the log.
const BUFFER: usize = 64;
/// The reconnection delay the feed asks a reader for (`retry:`), in ms.
const RETRY_MS: u64 = 1_000;

/// The live feeds of one API server: how many may be open, and the signal
/// that ends them when the server stops (their readers resume elsewhere).
pub struct LiveFeeds {
    slots: Arc<Semaphore>,
    closing: watch::Sender<bool>,
    heartbeat: Duration,
}

impl LiveFeeds {
    /// At most `limit` open feeds; a comment every `heartbeat` keeps an idle
    /// one's connection open through proxies.
    pub fn new(limit: u64, heartbeat: Duration) -> LiveFeeds {
        LiveFeeds {
            slots: Arc::new(Semaphore::new(
                usize::try_from(limit)
                    .unwrap_or(usize::MAX)
                    .min(Semaphore::MAX_PERMITS),
            )),
            closing: watch::channel(false).0,
            heartbeat,
        }
    }

    /// Ends every open feed (the server is stopping) and refuses new ones.
    pub fn close(&self) {
        self.closing.send_replace(true);
    }

    /// A slot for one more feed, unless all are taken or the server stops.
    pub fn admit(&self) -> Option<OwnedSemaphorePermit> {
        if *self.closing.borrow() {
            return None;
        }
        Arc::clone(&self.slots).try_acquire_owned().ok()
    }

    /// Starts the feed of `client_id` after `after`; its frames come out of
    /// the receiver, and it stops when the receiver is dropped.
    pub fn start(
        &self,
        slot: OwnedSemaphorePermit,
        db: Db,
        bus: Arc<dyn Bus>,
        client_id: String,
        after: u64,
    ) -> mpsc::Receiver<Bytes> {
        let (tx, rx) = mpsc::channel(BUFFER);
        let feed = Feed {
            db,
            client_id,
            last: after,
            hole: None,
            out: tx,
        };
        let (closing, heartbeat) = (self.closing.subscribe(), self.heartbeat);
        tokio::spawn(async move {
            let wakes = bus.subscribe(&feed_subject(&feed.client_id), None).await;
            if let Err(e) = &wakes {
                tracing::debug!(client_id = %feed.client_id, error = %e,
                    "live feed without announcements: reading the log every two seconds");
            }
            feed.run(wakes.ok(), closing, heartbeat).await;
            drop(slot);
        });
        rx
    }
}

/// The reader went away: the feed stops.
struct Gone;

struct Feed {
    db: Db,
    client_id: String,
    /// The last `seq` handed on.
    last: u64,
    /// A hole after `last` seen by an earlier read: the next `seq` there and when.
    hole: Option<(u64, Instant)>,
    out: mpsc::Sender<Bytes>,
}

impl Feed {
    async fn run(
        mut self,
        mut wakes: Option<Subscription>,
        mut closing: watch::Receiver<bool>,
        heartbeat: Duration,
    ) {
        // Subscribed before the first read: an event logged after it wakes us.
        if self.write(format!("retry: {RETRY_MS}\n\n")).await.is_err() {
            return;
        }
        let mut poll = interval_at(Instant::now() + POLL, POLL);
        poll.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut beat = interval_at(Instant::now() + heartbeat, heartbeat);
        beat.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            match self.catch_up().await {
                Ok(true) => continue,
                Ok(false) => {}
                Err(Gone) => return,
            }
            let woken = async {
                match wakes.as_mut() {
                    Some(w) => w.next().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = self.out.closed() => return,
                () = stopping(&mut closing) => {
                    let _ = self.end("the server is stopping: resume with Last-Event-ID").await;
                    return;
                }
                message = woken => match message {
                    // Announcements pile up under load: one read serves them all.
                    Some(_) => while wakes.as_mut().and_then(Subscription::try_next).is_some() {},
                    None => wakes = None,
                },
                _ = poll.tick() => {
                    if !self.session_exists().await {
                        let _ = self.end("the session was deleted").await;
                        return;
                    }
                }
                _ = beat.tick() => {
                    if self.write(": keep-alive\n\n".to_string()).await.is_err() {
                        return;
                    }
                }
            }
        }
    }

    /// Hands on the events that follow `last`; `true` when a whole page was
    /// read (more may be waiting).
    async fn catch_up(&mut self) -> Result<bool, Gone> {
        let events = match self.db.events_after(&self.client_id, self.last, PAGE).await {
            Ok(events) => events,
            Err(e) => {
                // Tried again at the next wake or poll; the reader waits.
                tracing::debug!(client_id = %self.client_id, error = %e, "live feed: the log is out of reach");
                return Ok(false);
            }
        };
        let whole = events.len() as u64 == PAGE;
        for event in events {
            if event.seq != self.last + 1 && !self.past_hole(event.seq).await? {
                return Ok(false);
            }
            self.write(frame(&event)).await?;
            self.last = event.seq;
        }
        Ok(whole)
    }

    /// Whether the feed may go on at `next` over a hole after `last`: when an
    /// earlier read found the same hole long enough ago (then the reader is
    /// told which `seq`s it will not get).
    async fn past_hole(&mut self, next: u64) -> Result<bool, Gone> {
        let now = Instant::now();
        match self.hole {
            Some((seen, since)) if seen == next && now - since >= GAP_CONFIRM => {
                self.hole = None;
                let data = serde_json::json!({"after": self.last, "next": next});
                self.write(format!("event: gap\ndata: {data}\n\n")).await?;
                Ok(true)
            }
            Some((seen, _)) if seen == next => Ok(false),
            _ => {
                self.hole = Some((next, now));
                Ok(false)
            }
        }
    }

    async fn session_exists(&self) -> bool {
        // Unknown while the database is out of reach: the feed stays.
        !matches!(self.db.session(&self.client_id).await, Ok(None))
    }

    async fn end(&self, reason: &str) -> Result<(), Gone> {
        let data = serde_json::json!({ "reason": reason });
        self.write(format!("event: end\ndata: {data}\n\n")).await
    }

    async fn write(&self, frame: String) -> Result<(), Gone> {
        self.out.send(Bytes::from(frame)).await.map_err(|_| Gone)
    }
}

/// Resolves once the server is stopping (or its feeds are gone).
async fn stopping(closing: &mut watch::Receiver<bool>) {
    let _ = closing.wait_for(|c| *c).await;
}

/// An event as a Server-Sent Events message: its `seq` as the id (what a
/// reader sends back in `Last-Event-ID`), the envelope as delivered as data.
fn frame(event: &LoggedEvent) -> String {
    // The envelope is compact JSON: no line break ends the data early.
    let body = String::from_utf8_lossy(&event.body);
    format!("id: {}\ndata: {}\n\n", event.seq, body.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_one_message_with_its_seq_as_id() {
        let event = LoggedEvent {
            client_id: "c".into(),
            seq: 7,
            event_id: "msg_c_1".into(),
            kind: "message".into(),
            body: br#"{"eventId":"msg_c_1","seq":7}"#.to_vec(),
            delivery: parley_shared::db::events::Delivery {
                state: parley_shared::db::events::DeliveryState::Delivered,
                attempts: 1,
                last_status: Some(200),
                last_attempt_at: None,
                requeues: 0,
            },
            created_at: chrono::Utc::now(),
        };
        assert_eq!(
            frame(&event),
            "id: 7\ndata: {\"eventId\":\"msg_c_1\",\"seq\":7}\n\n"
        );
    }
}
