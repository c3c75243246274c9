//! The batch's statements on PostgreSQL: two per transaction whatever its
//! size (one, without a transaction, for an optimistic batch), each one
//! text (the requests' values go as arrays, `= ANY` and `unnest`), so a
//! connection prepares each once and the server can keep its plan. The
//! locking read also finds the duplicates; one statement then moves the
//! counters, records the deliveries and inserts the new rows.
use sea_orm::sea_query::ArrayType;
use sea_orm::{ConnectionTrait, DatabaseTransaction, DbBackend, QueryResult, Statement, Value};

use super::records::Recorded;
use crate::db::entities::events::Model;
use crate::db::logged_events::DeliveryState;
use crate::db::{DbError, pg_array as array};

/// Locks in `client_id` order (the sort is below the lock), and reads which
/// of the batch's event ids are logged already.
const LOCK: &str = "SELECT s.client_id, s.event_seq, s.fence, \
       (SELECT min(e.seq) FROM events e WHERE e.client_id = s.client_id AND e.state = $2) \
         AS oldest, \
       ARRAY(SELECT event_id FROM events WHERE event_id = ANY($3)) AS known \
     FROM sessions s WHERE s.client_id = ANY($1) ORDER BY s.client_id FOR UPDATE";

const KNOWN: &str = "SELECT event_id FROM events WHERE event_id = ANY($1)";

/// The delivery records (`$1` to `$6`: five arrays and the attempts' time;
/// `$15`: their requeues, which the row must still have): a record's status
/// of 0 is "no answer" (no HTTP status is 0).
macro_rules! recorded {
    () => {
        "recorded AS ( \
           UPDATE events AS e SET state = r.state, \
             attempts = e.attempts + r.attempts, \
             last_status = CASE WHEN r.attempts > 0 THEN NULLIF(r.status, 0) ELSE e.last_status END, \
             last_attempt_at = CASE WHEN r.attempts > 0 THEN $6::timestamptz ELSE e.last_attempt_at END \
           FROM unnest($1::text[], $2::bigint[], $3::text[], $4::int[], $5::int[], $15::int[]) \
             AS r(client_id, seq, state, attempts, status, requeues) \
           WHERE e.client_id = r.client_id AND e.seq = r.seq AND e.requeues = r.requeues \
         )"
    };
}

/// The new rows (`$7`: their time; `$8` to `$14`: seven arrays): a stream
/// sequence of 0 is "body in the row" (the stream's start at 1).
macro_rules! new_rows {
    () => {
        "INSERT INTO events (client_id, seq, event_id, kind, body, state, created_at, stream_seq) \
         SELECT n.client_id, n.seq, n.event_id, n.kind, n.body, n.state, $7::timestamptz, \
           NULLIF(n.stream_seq, 0) \
         FROM unnest($8::text[], $9::bigint[], $10::text[], $11::text[], $12::bytea[], \
           $13::text[], $14::bigint[]) AS n(client_id, seq, event_id, kind, body, state, stream_seq)"
    };
}

/// Counters (`$16`, `$17`), delivery records and new rows, in a locked
/// transaction.
const WRITE: &str = concat!(
    "WITH advanced AS ( \
       UPDATE sessions AS s SET event_seq = a.last \
       FROM unnest($16::text[], $17::bigint[]) AS a(client_id, last) \
       WHERE s.client_id = a.client_id \
     ), ",
    recorded!(),
    " ",
    new_rows!()
);

/// A batch without a transaction around it (`optimistic`): one statement,
/// atomic by itself. Each session (`$16` to `$20`) moves from the `seq` this
/// writer last wrote to its new last one only if no one else moved it
/// since, its fence still admits the appends, and no event of it still
/// undelivered (`$21`) is so old that the window from it would be full
/// (`bound`: the highest `seq` such an event may not reach; -1, none of the
/// batch's events is undelivered). Only sessions that moved get their rows;
/// the statement answers which. The delivery records are written in any
/// case.
const OPTIMISTIC: &str = concat!(
    "WITH advanced AS ( \
       UPDATE sessions AS s SET event_seq = a.last \
       FROM unnest($16::text[], $17::bigint[], $18::bigint[], $19::bigint[], $20::bigint[]) \
         AS a(client_id, expected, last, fence, bound) \
       WHERE s.client_id = a.client_id AND s.event_seq = a.expected AND s.fence <= a.fence \
         AND NOT EXISTS (SELECT 1 FROM events e \
           WHERE e.client_id = a.client_id AND e.state = $21 AND e.seq <= a.bound) \
       RETURNING s.client_id \
     ), ",
    recorded!(),
    ", inserted AS ( ",
    new_rows!(),
    " WHERE n.client_id IN (SELECT client_id FROM advanced) \
     ) \
     SELECT client_id FROM advanced"
);

/// A session's move in an optimistic batch.
pub(super) struct Move<'a> {
    pub client_id: &'a str,
    /// Its `seq` as this writer last wrote it.
    pub expected: i64,
    pub last: i64,
    /// The lowest fence of its appends.
    pub fence: i64,
    /// The highest `seq` an undelivered event of it may not reach (-1: none).
    pub bound: i64,
}

/// Writes an optimistic batch in one statement: the sessions that moved
/// (the others got no rows).
pub(super) async fn write_optimistic(
    conn: &impl ConnectionTrait,
    moves: &[Move<'_>],
    records: &[Recorded<'_>],
    rows: &[&Model],
) -> Result<Vec<String>, DbError> {
    let mut values = common_values(records, rows);
    values.extend([
        texts(moves.iter().map(|m| m.client_id)),
        array(ArrayType::BigInt, moves.iter().map(|m| m.expected)),
        array(ArrayType::BigInt, moves.iter().map(|m| m.last)),
        array(ArrayType::BigInt, moves.iter().map(|m| m.fence)),
        array(ArrayType::BigInt, moves.iter().map(|m| m.bound)),
        DeliveryState::Pending.as_str().into(),
    ]);
    let moved = conn
        .query_all_raw(statement(OPTIMISTIC, values))
        .await?
        .iter()
        .map(|row| row.try_get::<String>("", "client_id"))
        .collect::<Result<_, _>>()?;
    Ok(moved)
}

/// `$1` to `$15`: the delivery records' five arrays and the attempts' time,
/// the new rows' time and their seven arrays, and the records' requeues.
fn common_values(records: &[Recorded<'_>], rows: &[&Model]) -> Vec<Value> {
    let now = chrono::Utc::now();
    let created_at = rows.first().map_or(now, |m| m.created_at);
    vec![
        texts(records.iter().map(|r| r.client_id)),
        array(ArrayType::BigInt, records.iter().map(|r| r.seq)),
        texts(records.iter().map(|r| r.state.as_str())),
        array(ArrayType::Int, records.iter().map(|r| r.attempts)),
        array(ArrayType::Int, records.iter().map(|r| r.status)),
        now.into(),
        created_at.into(),
        texts(rows.iter().map(|m| m.client_id.as_str())),
        array(ArrayType::BigInt, rows.iter().map(|m| m.seq)),
        texts(rows.iter().map(|m| m.event_id.as_str())),
        texts(rows.iter().map(|m| m.kind.as_str())),
        array(ArrayType::Bytes, rows.iter().map(|m| m.body.clone())),
        texts(rows.iter().map(|m| m.state.as_str())),
        array(
            ArrayType::BigInt,
            rows.iter().map(|m| m.stream_seq.unwrap_or(0)),
        ),
        array(ArrayType::Int, records.iter().map(|r| r.requeues)),
    ]
}

fn statement(sql: &str, values: Vec<Value>) -> Statement {
    Statement::from_sql_and_values(DbBackend::Postgres, sql, values)
}

fn texts<'a>(items: impl IntoIterator<Item = &'a str>) -> Value {
    array(ArrayType::String, items.into_iter().map(str::to_string))
}

/// The sessions' rows, locked, with their oldest undelivered events; and
/// which of `ids` are logged already.
pub(super) async fn lock(
    txn: &DatabaseTransaction,
    clients: &[&str],
    ids: &[&str],
) -> Result<(Vec<QueryResult>, Vec<String>), DbError> {
    let values = vec![
        texts(clients.iter().copied()),
        DeliveryState::Pending.as_str().into(),
        texts(ids.iter().copied()),
    ];
    let rows = txn.query_all_raw(statement(LOCK, values)).await?;
    let known = match rows.first() {
        Some(row) => row.try_get::<Vec<String>>("", "known")?,
        // No session to lock: the ids are looked up alone.
        None => txn
            .query_all_raw(statement(KNOWN, vec![texts(ids.iter().copied())]))
            .await?
            .iter()
            .map(|row| row.try_get::<String>("", "event_id"))
            .collect::<Result<_, _>>()?,
    };
    Ok((rows, known))
}

/// Sets each session's `event_seq` to its last new `seq`, writes the
/// delivery records (one per event) and inserts the new rows (all of one
/// `created_at`).
pub(super) async fn write(
    txn: &DatabaseTransaction,
    moved: &[(&str, i64)],
    records: &[Recorded<'_>],
    rows: &[&Model],
) -> Result<(), DbError> {
    let mut values = common_values(records, rows);
    values.extend([
        texts(moved.iter().map(|&(c, _)| c)),
        array(ArrayType::BigInt, moved.iter().map(|&(_, last)| last)),
    ]);
    txn.execute_raw(statement(WRITE, values)).await?;
    Ok(())
}
