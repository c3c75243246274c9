//! The event log's types: an event as logged, how its delivery stands, an
//! event to append and how the append went, and which events to deliver
//! again. `db::events` has the queries.
use chrono::{DateTime, Utc};

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
    /// The session's webhook does not take its type (`/set-webhook-types`):
    /// kept, never pushed, never counted as undelivered.
    NotSelected,
}

impl DeliveryState {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Delivered => "delivered",
            DeliveryState::Rejected => "rejected",
            DeliveryState::Dead => "dead",
            DeliveryState::None => "none",
            DeliveryState::NotSelected => "not_selected",
        }
    }

    pub fn parse(s: &str) -> Option<DeliveryState> {
        Some(match s {
            "pending" => DeliveryState::Pending,
            "delivered" => DeliveryState::Delivered,
            "rejected" => DeliveryState::Rejected,
            "dead" => DeliveryState::Dead,
            "none" => DeliveryState::None,
            "not_selected" => DeliveryState::NotSelected,
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
    /// How many times `/events/redeliver` queued it again; a delivery's
    /// records name it, and one of an earlier round changes nothing.
    pub requeues: u32,
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
    /// `Pending` when the session's webhook takes it, `NotSelected` when
    /// the webhook does not take its type, `None` without a webhook.
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
    /// These events, whatever their state.
    Ids(Vec<String>),
    /// Every event after this `seq` but those the webhook did not select.
    AfterSeq(u64),
}
