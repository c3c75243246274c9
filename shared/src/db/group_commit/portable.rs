//! The batch's statements on SQLite, whose statements run in the process,
//! each call a hand-off to the connection's own thread and back: the
//! transaction's `BEGIN IMMEDIATE` and the reads as one call, the writes
//! and the `COMMIT` as another, on the writer's own connection (a pool of
//! one, so the second call continues the first one's transaction). A batch
//! is two hand-offs however many requests it holds (one for delivery
//! records alone; a trim, at every 256th `seq` of a session, adds one).
//! The statements of the batch's rides (`rides`) go with its writes.
use std::collections::BTreeMap;

use sea_orm::sea_query::{Alias, CaseStatement, Expr, ExprTrait, Query, UpdateStatement};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, DbBackend, EntityTrait,
    QueryFilter, QueryResult, QueryTrait, Statement, Value,
};

use super::records::Recorded;
use crate::db::DbError;
use crate::db::entities::events::{ActiveModel, Column, Entity, Model};
use crate::db::joined::joined;
use crate::db::logged_events::DeliveryState;

/// Begins the transaction on `conn` (the writer's own connection) and reads
/// the sessions' rows with their oldest undelivered events, then which of
/// `ids` are logged already: one call (the transaction holds SQLite's one
/// write lock from its start, so nothing is locked row by row).
pub(super) async fn lock(
    conn: &DatabaseConnection,
    clients: &[&str],
    ids: &[&str],
) -> Result<(Vec<QueryResult>, Vec<String>), DbError> {
    let mut read = reads(clients, ids);
    read.sql = format!("{BEGIN};\n{}", read.sql);
    let rows = conn.query_all_raw(read).await?;
    let mut owners = Vec::with_capacity(clients.len());
    let mut known = Vec::new();
    for row in rows {
        match row.try_get::<Option<String>>("", "event_id")? {
            Some(id) => known.push(id),
            None => owners.push(row),
        }
    }
    Ok((owners, known))
}

/// Each session's oldest undelivered event comes by the index on
/// (client_id, state, seq): a lookup per session, however many wait. The
/// second arm names the logged ids, by the unique index on `event_id`.
fn reads(clients: &[&str], ids: &[&str]) -> Statement {
    let marks = |n: usize| vec!["?"; n].join(", ");
    let sql = format!(
        "SELECT client_id, event_seq, fence, \
           (SELECT MIN(e.seq) FROM events e \
             WHERE e.client_id = sessions.client_id AND e.state = ?) AS oldest, \
           NULL AS event_id \
         FROM sessions WHERE client_id IN ({}) \
         UNION ALL \
         SELECT NULL, NULL, NULL, NULL, event_id FROM events WHERE event_id IN ({})",
        marks(clients.len()),
        marks(ids.len()),
    );
    let values = std::iter::once(Value::from(DeliveryState::Pending.as_str()))
        .chain(clients.iter().map(|c| Value::from(*c)))
        .chain(ids.iter().map(|i| Value::from(*i)));
    Statement::from_sql_and_values(DbBackend::Sqlite, sql, values)
}

/// What a batch writes: the sessions' counters, the delivery records, the
/// new rows, and its rides' statements.
pub(super) struct Writes<'a> {
    pub moved: &'a [(&'a str, i64)],
    pub records: &'a [Recorded<'a>],
    pub rows: &'a [&'a Model],
    pub ridden: Vec<Statement>,
}

/// The batch's `writes` and the commit, sent as one call on `conn` (with
/// the transaction's `BEGIN` unless `begun`). On an error the transaction
/// may still be open: the caller rolls it back.
pub(super) async fn write_and_commit(
    conn: &DatabaseConnection,
    begun: bool,
    writes: Writes<'_>,
) -> Result<(), DbError> {
    let backend = DbBackend::Sqlite;
    let mut statements = Vec::new();
    if !begun {
        statements.push(Statement::from_string(backend, BEGIN));
    }
    if !writes.moved.is_empty() {
        statements.push(backend.build(&counters(writes.moved)));
    }
    statements.extend(record(writes.records).iter().map(|u| u.build(backend)));
    if !writes.rows.is_empty() {
        let rows = writes.rows.iter().map(|m| ActiveModel::from((*m).clone()));
        statements.push(Entity::insert_many(rows).build(backend));
    }
    statements.extend(writes.ridden);
    statements.push(Statement::from_string(backend, "COMMIT"));
    if let Some(all) = joined(statements) {
        conn.execute_raw(all).await?;
    }
    Ok(())
}

/// The write transaction's start: it takes SQLite's write lock at once.
const BEGIN: &str = "BEGIN IMMEDIATE";

/// One `CASE` over the sessions.
fn counters(moved: &[(&str, i64)]) -> UpdateStatement {
    let client = || Expr::col(Alias::new("client_id"));
    let mut case: Option<CaseStatement> = None;
    for &(client_id, last) in moved {
        let when = client().eq(client_id);
        case = Some(match case {
            None => Expr::case(when, last),
            Some(case) => case.case(when, last),
        });
    }
    let mut update = Query::update();
    update.table(Alias::new("sessions"));
    if let Some(case) = case {
        update.value(
            Alias::new("event_seq"),
            case.finally(Expr::col(Alias::new("event_seq"))),
        );
    }
    update
        .and_where(client().is_in(moved.iter().map(|(c, _)| *c)))
        .to_owned()
}

/// One statement per kind of outcome (usually one for the batch).
fn record(records: &[Recorded<'_>]) -> Vec<sea_orm::UpdateMany<Entity>> {
    let mut kinds: BTreeMap<(&str, i32, i32), Condition> = BTreeMap::new();
    for r in records {
        let event = Condition::all()
            .add(Column::ClientId.eq(r.client_id))
            .add(Column::Seq.eq(r.seq))
            .add(Column::Requeues.eq(r.requeues));
        let events = kinds
            .entry((r.state.as_str(), r.attempts, r.status))
            .or_insert_with(Condition::any);
        *events = std::mem::replace(events, Condition::any()).add(event);
    }
    let now = chrono::Utc::now();
    kinds
        .into_iter()
        .map(|((state, attempts, status), events)| {
            let mut update = Entity::update_many()
                .col_expr(Column::State, Expr::value(state))
                .filter(events);
            if attempts > 0 {
                update = update
                    .col_expr(Column::Attempts, Expr::col(Column::Attempts).add(attempts))
                    .col_expr(
                        Column::LastStatus,
                        Expr::value((status != 0).then_some(status)),
                    )
                    .col_expr(Column::LastAttemptAt, Expr::value(now));
            }
            update
        })
        .collect()
}
