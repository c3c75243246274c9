//! The event log's rows as the rest of the gateway sees them: an event of a
//! session with its `seq`, `eventId`, body (the envelope as delivered) and how
//! its delivery stands.
use chrono::{DateTime, Utc};

use super::entities::events;
use super::{Db, DbError, Queued};

/// How an event's delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryState {
    /// Waiting for its first or next attempt.
    Pending,
    /// A 2xx answered it.
    Delivered,
    /// A 4xx other than 429 answered it: a dead letter.
    Rejected,
    /// Its attempts ran out: a dead letter.
    Dead,
    /// The session had no webhook when it happened: kept, never pushed.
    None,
}

impl DeliveryState {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Delivered => "delivered",
            DeliveryState::Rejected => "rejected",
            DeliveryState::Dead => "dead",
            DeliveryState::None => "none",
        }
    }

    pub fn parse(s: &str) -> Option<DeliveryState> {
        Some(match s {
            "pending" => DeliveryState::Pending,
            "delivered" => DeliveryState::Delivered,
            "rejected" => DeliveryState::Rejected,
            "dead" => DeliveryState::Dead,
            "none" => DeliveryState::None,
            _ => return None,
        })
    }

    /// Rejected or out of attempts: listed in `/events/dead-letters`.
    pub fn is_dead_letter(self) -> bool {
        matches!(self, DeliveryState::Rejected | DeliveryState::Dead)
    }
}

/// How an event's delivery stands, with its attempts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub state: DeliveryState,
    pub attempts: u32,
    /// The HTTP status of the last attempt (none for a timeout or a refused connection).
    pub last_status: Option<u16>,
    pub last_attempt_at: Option<DateTime<Utc>>,
}

/// One event of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedEvent {
    pub client_id: String,
    pub seq: u64,
    pub event_id: String,
    /// The event type (`X-SN-Event`).
    pub kind: String,
    /// The envelope as delivered (JSON, `eventId` and `seq` included).
    pub body: Vec<u8>,
    pub delivery: Delivery,
    pub created_at: DateTime<Utc>,
}

/// An event to append: its body is built once its `seq` is known.
pub struct NewEvent<'a> {
    pub event_id: &'a str,
    pub kind: &'a str,
    /// `Pending` when the session has a webhook, `None` when it has not.
    pub state: DeliveryState,
    /// The session's cap: a pending event is refused when this many events
    /// follow the oldest undelivered one; events past it that need nothing
    /// more (delivered, dead, kept without a webhook) are deleted.
    pub cap: u64,
}

/// How an append went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Appended {
    Logged(LoggedEvent),
    /// The session is gone, or a newer owner has written: nothing was written.
    FencedOut,
    /// The session's cap is reached (its receiver is far behind): nothing was written.
    Full,
}

/// Which events `/events/redeliver` queues again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redeliver {
    Ids(Vec<String>),
    AfterSeq(u64),
}

/// The event log's queries, as methods of the database.
impl Db {
    /// Appends an event with the session's next `seq`, allocated under the
    /// owner's lease `fence`; `body` builds the stored body from the `seq`
    /// (perhaps more than once: the last one is stored). Appends of every
    /// session are committed together when they arrive together (group
    /// commit, see `group_commit`); the answer comes after the commit.
    pub async fn append_event(
        &self,
        client_id: &str,
        fence: u64,
        new: NewEvent<'_>,
        body: impl FnMut(u64) -> Vec<u8> + Send + Sync + 'static,
    ) -> Result<Appended, DbError> {
        self.appender()
            .append(client_id, fence, new, Box::new(body))
            .await
    }

    /// [`Self::append_event`] in two steps: queues the append behind the
    /// session's earlier ones and returns at once; the [`Queued`] answer
    /// comes after its commit. A session's appends are written in the order
    /// they were queued, so it may have many in flight.
    pub async fn enqueue_event(
        &self,
        client_id: &str,
        fence: u64,
        new: NewEvent<'_>,
        body: impl FnMut(u64) -> Vec<u8> + Send + Sync + 'static,
    ) -> Result<Queued<Appended>, DbError> {
        self.appender()
            .enqueue_append(client_id, fence, new, Box::new(body))
            .await
    }

    /// Whether the event `event_id` is in a log (its body is not read).
    pub async fn event_logged(&self, event_id: &str) -> Result<bool, DbError> {
        use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
        let found = events::Entity::find()
            .filter(events::Column::EventId.eq(event_id))
            .count(self.conn())
            .await?;
        Ok(found > 0)
    }

    /// Up to `limit` events after `after`, oldest first.
    pub async fn events_after(
        &self,
        client_id: &str,
        after: u64,
        limit: u64,
    ) -> Result<Vec<LoggedEvent>, DbError> {
        events::after(self, client_id, after, limit, None).await
    }

    /// Up to `limit` pending events after `after`, oldest first.
    pub async fn pending_events(
        &self,
        client_id: &str,
        after: u64,
        limit: u64,
    ) -> Result<Vec<LoggedEvent>, DbError> {
        events::after(self, client_id, after, limit, Some(DeliveryState::Pending)).await
    }

    /// One page (from 1) of the session's dead letters, oldest first, and how
    /// many there are.
    pub async fn dead_letters(
        &self,
        client_id: &str,
        page: u64,
        limit: u64,
    ) -> Result<(Vec<LoggedEvent>, u64), DbError> {
        events::dead_letters(self, client_id, page, limit).await
    }

    /// Records one delivery attempt: its outcome state and HTTP status
    /// (committed with the log's other writes, see [`Db::append_event`]).
    pub async fn record_attempt(
        &self,
        client_id: &str,
        seq: u64,
        state: DeliveryState,
        status: Option<u16>,
    ) -> Result<(), DbError> {
        self.appender()
            .record(client_id, seq, state, Some(status))
            .await
    }

    /// Sets an event's state without counting an attempt (its webhook was
    /// removed before it could be tried).
    pub async fn set_event_state(
        &self,
        client_id: &str,
        seq: u64,
        state: DeliveryState,
    ) -> Result<(), DbError> {
        self.appender().record(client_id, seq, state, None).await
    }

    /// Makes the chosen events pending again with no attempts counted; returns them.
    pub async fn requeue_events(
        &self,
        client_id: &str,
        which: &Redeliver,
    ) -> Result<Vec<LoggedEvent>, DbError> {
        events::requeue(self, client_id, which).await
    }

    /// Deletes every event of the session.
    pub async fn purge_events(&self, client_id: &str) -> Result<u64, DbError> {
        events::purge(self, client_id).await
    }

    /// Deletes events older than `before`, of every session.
    pub async fn prune_events(&self, before: DateTime<Utc>) -> Result<u64, DbError> {
        events::prune(self, before).await
    }
}
