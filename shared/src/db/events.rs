//! The event log's rows as the rest of the gateway sees them: an event of a
//! session with its `seq`, `eventId`, body (the envelope as delivered) and how
//! its delivery stands.
use chrono::{DateTime, Utc};

use super::entities::events;
use super::{Db, DbError, Queued};

pub use super::logged_events::{
    Appended, Delivery, DeliveryState, LoggedEvent, NewEvent, Redeliver,
};

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
    /// (committed with the log's other writes, see [`Db::append_event`]),
    /// unless the event was queued again since its delivery read it with
    /// `requeues` (then the redelivery stands).
    pub async fn record_attempt(
        &self,
        client_id: &str,
        seq: u64,
        requeues: u32,
        state: DeliveryState,
        status: Option<u16>,
    ) -> Result<(), DbError> {
        self.appender()
            .record(client_id, seq, requeues, state, Some(status))
            .await
    }

    /// Sets an event's state without counting an attempt (its webhook was
    /// removed before it could be tried).
    pub async fn set_event_state(
        &self,
        client_id: &str,
        seq: u64,
        requeues: u32,
        state: DeliveryState,
    ) -> Result<(), DbError> {
        self.appender()
            .record(client_id, seq, requeues, state, None)
            .await
    }

    /// Makes the chosen events pending again with no attempts counted, one
    /// more requeue each (a record of an earlier delivery of them then
    /// changes nothing); returns them.
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
