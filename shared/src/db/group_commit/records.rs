//! What a batch's parts share: the delivery records folded per event, and
//! each session's `seq` as the writer last wrote it.
use std::collections::HashMap;

use super::Record;
use crate::db::DbError;
use crate::db::logged_events::DeliveryState;

/// Each session's `seq` as this writer last wrote it: while no one else
/// writes the session, its next batch needs no locking read.
pub(super) type Known = HashMap<String, i64>;

/// The most sessions a writer remembers (it forgets them all past this).
const KNOWN_MOST: usize = 100_000;

/// Remembers `client_id`'s `seq` after a batch.
pub(super) fn remember(known: &mut Known, client_id: &str, seq: i64) {
    if known.len() >= KNOWN_MOST && !known.contains_key(client_id) {
        known.clear();
    }
    known.insert(client_id.to_string(), seq);
}

/// One event's delivery records of a batch, as one.
pub(super) struct Recorded<'a> {
    pub client_id: &'a str,
    pub seq: i64,
    /// The last record's state.
    pub state: DeliveryState,
    /// The attempts the records counted.
    pub attempts: i32,
    /// The last attempt's HTTP status (0: none, or no attempt).
    pub status: i32,
    /// The event's requeues the last record read.
    pub requeues: i32,
}

/// Folds each event's records, in the order queued, into one.
pub(super) fn fold(records: &[Record]) -> Result<Vec<Recorded<'_>>, DbError> {
    let mut folded: Vec<Recorded<'_>> = Vec::with_capacity(records.len());
    let mut at: HashMap<(&str, u64), usize> = HashMap::with_capacity(records.len());
    for r in records {
        let seq = bigint(r.seq)?;
        let i = *at.entry((r.client_id.as_str(), r.seq)).or_insert_with(|| {
            folded.push(Recorded {
                client_id: &r.client_id,
                seq,
                state: r.state,
                attempts: 0,
                status: 0,
                requeues: 0,
            });
            folded.len() - 1
        });
        let event = &mut folded[i];
        event.state = r.state;
        event.requeues = i32::try_from(r.requeues).unwrap_or(i32::MAX);
        if let Some(status) = r.attempt {
            event.attempts += 1;
            event.status = status.map_or(0, i32::from);
        }
    }
    Ok(folded)
}

/// `n` as PostgreSQL's and SQLite's 64-bit integer.
pub(super) fn bigint(n: u64) -> Result<i64, DbError> {
    i64::try_from(n).map_err(|_| DbError::Unavailable(format!("{n} does not fit a bigint")))
}
