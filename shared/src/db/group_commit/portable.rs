//! The batch's statements elsewhere than on PostgreSQL (SQLite, whose
//! statements run in the process): an `IN` list, a `CASE` and a `VALUES` row
//! per request, one statement per kind of delivery outcome.
use std::collections::BTreeMap;

use sea_orm::sea_query::{
    Alias, CaseStatement, Expr, ExprTrait, Func, Order, Query, SelectStatement, UpdateStatement,
};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseTransaction, EntityTrait, QueryFilter,
    QueryResult, QuerySelect,
};

use super::records::Recorded;
use crate::db::DbError;
use crate::db::entities::events::{ActiveModel, Column, Entity, Model};
use crate::db::logged_events::DeliveryState;

/// Which of `ids` are logged already, then the sessions' rows (locked by the
/// write transaction) with their oldest undelivered events.
pub(super) async fn lock(
    txn: &DatabaseTransaction,
    clients: &[&str],
    ids: &[&str],
) -> Result<(Vec<QueryResult>, Vec<String>), DbError> {
    let known = Entity::find()
        .select_only()
        .column(Column::EventId)
        .filter(Column::EventId.is_in(ids.iter().copied()))
        .into_tuple::<String>()
        .all(txn)
        .await?;
    let rows = txn.query_all(&locking_read(clients)).await?;
    Ok((rows, known))
}

fn locking_read(clients: &[&str]) -> SelectStatement {
    // Each session's oldest undelivered event, by the index on
    // (client_id, state, seq): a lookup per session, however many wait.
    let oldest = Query::select()
        .expr(Func::min(Expr::col((Alias::new("e"), Alias::new("seq")))))
        .from_as(Alias::new("events"), Alias::new("e"))
        .and_where(
            Expr::col((Alias::new("e"), Alias::new("client_id")))
                .equals((Alias::new("sessions"), Alias::new("client_id"))),
        )
        .and_where(
            Expr::col((Alias::new("e"), Alias::new("state"))).eq(DeliveryState::Pending.as_str()),
        )
        .to_owned();
    Query::select()
        .columns([
            Alias::new("client_id"),
            Alias::new("event_seq"),
            Alias::new("fence"),
        ])
        .expr_as(oldest, Alias::new("oldest"))
        .from(Alias::new("sessions"))
        .and_where(Expr::col(Alias::new("client_id")).is_in(clients.iter().copied()))
        .order_by(Alias::new("client_id"), Order::Asc)
        .lock_exclusive()
        .to_owned()
}

/// The counters, the delivery records and the new rows.
pub(super) async fn write(
    txn: &DatabaseTransaction,
    moved: &[(&str, i64)],
    records: &[Recorded<'_>],
    rows: &[&Model],
) -> Result<(), DbError> {
    if !moved.is_empty() {
        txn.execute(&counters(moved)).await?;
    }
    record(txn, records).await?;
    if !rows.is_empty() {
        Entity::insert_many(rows.iter().map(|m| ActiveModel::from((*m).clone())))
            .exec_without_returning(txn)
            .await?;
    }
    Ok(())
}

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
async fn record(txn: &DatabaseTransaction, records: &[Recorded<'_>]) -> Result<(), DbError> {
    let mut kinds: BTreeMap<(&str, i32, i32), Condition> = BTreeMap::new();
    for r in records {
        let event = Condition::all()
            .add(Column::ClientId.eq(r.client_id))
            .add(Column::Seq.eq(r.seq));
        let events = kinds
            .entry((r.state.as_str(), r.attempts, r.status))
            .or_insert_with(Condition::any);
        *events = std::mem::replace(events, Condition::any()).add(event);
    }
    let now = chrono::Utc::now();
    for ((state, attempts, status), events) in kinds {
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
        update.exec(txn).await?;
    }
    Ok(())
}
