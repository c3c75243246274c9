//! The `events` entity: the event log with each event's delivery state, and
//! the per-session `seq` counter kept in `sessions.event_seq`. A body is kept
//! in its row (`serve`), or in the cluster's JetStream stream with the row
//! naming its stream sequence. Appends are written by `db::group_commit`.
use chrono::{DateTime, Utc};
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::ExprTrait;
use sea_orm::{Condition, QueryOrder, QuerySelect};

use crate::db::logged_events::{Delivery, DeliveryState, LoggedEvent, Redeliver};
use crate::db::{Db, DbError};
use crate::event_stream::StreamError;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "events")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub client_id: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub seq: i64,
    #[sea_orm(column_type = "Text")]
    pub event_id: String,
    #[sea_orm(column_type = "Text")]
    pub kind: String,
    /// Sealed under the store key (see [`body_place`]); empty when the body
    /// is in the stream.
    pub body: Vec<u8>,
    #[sea_orm(column_type = "Text")]
    pub state: String,
    pub attempts: i32,
    pub last_status: Option<i32>,
    pub last_attempt_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    /// The stream sequence of the body, when it is in the stream.
    pub stream_seq: Option<i64>,
    /// How many times it was queued again: a delivery record applies only
    /// to the row as its delivery read it.
    pub requeues: i32,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

/// Every this many appends of a session, its events beyond the cap that
/// need nothing more are deleted.
pub(crate) const TRIM_EVERY: i64 = 256;

/// Where an event's body is sealed (the associated data): a body moved to
/// another event does not open.
pub(crate) fn body_place(event_id: &str) -> String {
    format!("events.body:{event_id}")
}

fn bigint(n: u64) -> Result<i64, DbError> {
    i64::try_from(n).map_err(|_| DbError::Unavailable(format!("{n} does not fit a bigint")))
}

/// The rows as events with their bodies, in order. An event whose body the
/// stream no longer has (aged out or purged after the row was read) is left out.
async fn logged(db: &Db, rows: Vec<Model>) -> Result<Vec<LoggedEvent>, DbError> {
    let mut events = Vec::with_capacity(rows.len());
    for m in rows {
        let body = match (m.stream_seq, db.event_stream()) {
            (Some(at), Some(stream)) => {
                let at = u64::try_from(at).unwrap_or_default();
                match stream.body(at, &m.event_id).await.map_err(unavailable)? {
                    Some(body) => body,
                    None => {
                        tracing::warn!(client_id = %m.client_id, seq = m.seq,
                            "an event's body is gone from the stream");
                        continue;
                    }
                }
            }
            (Some(_), None) => {
                return Err(DbError::Unavailable(format!(
                    "event {} is in the event stream, and no stream is configured",
                    m.event_id
                )));
            }
            (None, _) => db
                .keys()
                .open(&body_place(&m.event_id), &m.body)
                .map_err(|e| DbError::Unavailable(format!("event {}: {e}", m.event_id)))?,
        };
        events.push(with_body(m, body));
    }
    Ok(events)
}

fn unavailable(e: StreamError) -> DbError {
    DbError::Unavailable(e.to_string())
}

pub(crate) fn with_body(m: Model, body: Vec<u8>) -> LoggedEvent {
    LoggedEvent {
        client_id: m.client_id,
        seq: u64::try_from(m.seq).unwrap_or_default(),
        event_id: m.event_id,
        kind: m.kind,
        body,
        delivery: Delivery {
            state: DeliveryState::parse(&m.state).unwrap_or(DeliveryState::Pending),
            attempts: u32::try_from(m.attempts).unwrap_or_default(),
            last_status: m.last_status.and_then(|s| u16::try_from(s).ok()),
            last_attempt_at: m.last_attempt_at,
            requeues: u32::try_from(m.requeues).unwrap_or_default(),
        },
        created_at: m.created_at,
    }
}

/// The events `which` names, of `client_id`.
fn chosen(client_id: &str, which: &Redeliver) -> Result<Condition, DbError> {
    let c = Condition::all().add(Column::ClientId.eq(client_id));
    Ok(match which {
        Redeliver::Ids(ids) => c.add(Column::EventId.is_in(ids.iter().cloned())),
        Redeliver::AfterSeq(after) => c
            .add(Column::Seq.gt(bigint(*after)?))
            .add(Column::State.ne(DeliveryState::NotSelected.as_str())),
    })
}

pub async fn after(
    db: &Db,
    client_id: &str,
    after: u64,
    limit: u64,
    state: Option<DeliveryState>,
) -> Result<Vec<LoggedEvent>, DbError> {
    let mut q = Entity::find()
        .filter(Column::ClientId.eq(client_id))
        .filter(Column::Seq.gt(bigint(after)?));
    if let Some(state) = state {
        q = q.filter(Column::State.eq(state.as_str()));
    }
    let rows = q
        .order_by_asc(Column::Seq)
        .limit(limit)
        .all(db.conn())
        .await?;
    logged(db, rows).await
}

fn dead_states() -> [&'static str; 2] {
    [
        DeliveryState::Rejected.as_str(),
        DeliveryState::Dead.as_str(),
    ]
}

pub async fn dead_letters(
    db: &Db,
    client_id: &str,
    page: u64,
    limit: u64,
) -> Result<(Vec<LoggedEvent>, u64), DbError> {
    let q = Entity::find()
        .filter(Column::ClientId.eq(client_id))
        .filter(Column::State.is_in(dead_states()));
    let total = q.clone().count(db.conn()).await?;
    let rows = q
        .order_by_asc(Column::Seq)
        .offset(page.saturating_sub(1).saturating_mul(limit))
        .limit(limit)
        .all(db.conn())
        .await?;
    Ok((logged(db, rows).await?, total))
}

pub async fn requeue(
    db: &Db,
    client_id: &str,
    which: &Redeliver,
) -> Result<Vec<LoggedEvent>, DbError> {
    let txn = db.begin_write().await?;
    Entity::update_many()
        .col_expr(Column::State, Expr::value(DeliveryState::Pending.as_str()))
        .col_expr(Column::Attempts, Expr::value(0))
        .col_expr(Column::Requeues, Expr::col(Column::Requeues).add(1))
        .filter(chosen(client_id, which)?)
        .exec(&txn)
        .await?;
    let q = Entity::find().filter(chosen(client_id, which)?);
    let rows = q.order_by_asc(Column::Seq).all(&txn).await?;
    txn.commit().await?;
    logged(db, rows).await
}

pub async fn purge(db: &Db, client_id: &str) -> Result<u64, DbError> {
    let res = Entity::delete_many()
        .filter(Column::ClientId.eq(client_id))
        .exec(db.conn())
        .await?;
    purge_stream(db, client_id).await;
    Ok(res.rows_affected)
}

/// Deletes the session's bodies from the stream once its rows are gone. A
/// failure leaves bodies no row names; the stream's age limit removes them.
pub(crate) async fn purge_stream(db: &Db, client_id: &str) {
    if let Some(stream) = db.event_stream()
        && let Err(e) = stream.purge(client_id).await
    {
        tracing::warn!(client_id, error = %e,
            "the session's event bodies stay in the stream until they age out");
    }
}

pub async fn prune(db: &Db, before: DateTime<Utc>) -> Result<u64, DbError> {
    let res = Entity::delete_many()
        .filter(Column::CreatedAt.lt(before))
        .exec(db.conn())
        .await?;
    Ok(res.rows_affected)
}
