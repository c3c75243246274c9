//! The `events` entity: the event log of `serve` with each event's delivery
//! state, and the per-session `seq` counter kept in `sessions.event_seq`.
use chrono::{DateTime, Utc};
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::{Alias, ExprTrait, Query};
use sea_orm::{Condition, ConnectionTrait, QueryOrder, QuerySelect};

use crate::db::events::{Appended, Delivery, DeliveryState, LoggedEvent, NewEvent, Redeliver};
use crate::db::{Db, DbError};

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
    /// Sealed under the store key (see [`body_place`]).
    pub body: Vec<u8>,
    #[sea_orm(column_type = "Text")]
    pub state: String,
    pub attempts: i32,
    pub last_status: Option<i32>,
    pub last_attempt_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

/// Every this many appends of a session, its events beyond the cap that
/// need nothing more are deleted.
const TRIM_EVERY: i64 = 256;

/// Where an event's body is sealed (the associated data): a body moved to
/// another event does not open.
fn body_place(event_id: &str) -> String {
    format!("events.body:{event_id}")
}

fn bigint(n: u64) -> Result<i64, DbError> {
    i64::try_from(n).map_err(|_| DbError::Unavailable(format!("{n} does not fit a bigint")))
}

fn logged(db: &Db, m: Model) -> Result<LoggedEvent, DbError> {
    let body = db
        .keys()
        .open(&body_place(&m.event_id), &m.body)
        .map_err(|e| DbError::Unavailable(format!("event {}: {e}", m.event_id)))?;
    Ok(with_body(m, body))
}

fn with_body(m: Model, body: Vec<u8>) -> LoggedEvent {
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
        },
        created_at: m.created_at,
    }
}

/// The events `which` names, of `client_id`.
fn chosen(client_id: &str, which: &Redeliver) -> Result<Condition, DbError> {
    let c = Condition::all().add(Column::ClientId.eq(client_id));
    Ok(match which {
        Redeliver::Ids(ids) => c.add(Column::EventId.is_in(ids.iter().cloned())),
        Redeliver::AfterSeq(after) => c.add(Column::Seq.gt(bigint(*after)?)),
    })
}

pub async fn append(
    db: &Db,
    client_id: &str,
    fence: u64,
    new: NewEvent<'_>,
    body: impl FnOnce(u64) -> Vec<u8>,
) -> Result<Appended, DbError> {
    let txn = db.begin_write().await?;
    // The session's next seq, only for an owner no newer one has fenced out.
    let next = Query::update()
        .table(Alias::new("sessions"))
        .value(
            Alias::new("event_seq"),
            Expr::col(Alias::new("event_seq")).add(1),
        )
        .and_where(Expr::col(Alias::new("client_id")).eq(client_id))
        .and_where(Expr::col(Alias::new("fence")).lte(bigint(fence)?))
        .returning_col(Alias::new("event_seq"))
        .to_owned();
    let Some(row) = txn.query_one(&next).await? else {
        txn.rollback().await?;
        return Ok(Appended::FencedOut);
    };
    let seq: i64 = row.try_get("", "event_seq")?;
    let cap = bigint(Ord::max(new.cap, 1))?;
    if new.state == DeliveryState::Pending {
        // Backpressure: the window from the oldest undelivered event is full.
        let oldest = Entity::find()
            .select_only()
            .column_as(Column::Seq.min(), "oldest")
            .filter(Column::ClientId.eq(client_id))
            .filter(Column::State.eq(DeliveryState::Pending.as_str()))
            .into_tuple::<Option<i64>>()
            .one(&txn)
            .await?
            .flatten();
        if oldest.is_some_and(|oldest| seq - oldest >= cap) {
            txn.rollback().await?;
            return Ok(Appended::Full);
        }
    }
    if seq % TRIM_EVERY == 0 {
        // Kept events beyond the cap that need nothing more go, oldest first.
        Entity::delete_many()
            .filter(Column::ClientId.eq(client_id))
            .filter(Column::Seq.lte(seq - cap))
            .filter(Column::State.ne(DeliveryState::Pending.as_str()))
            .exec(&txn)
            .await?;
    }
    let plain = body(u64::try_from(seq).unwrap_or_default());
    let now = Utc::now();
    let model = Model {
        client_id: client_id.to_string(),
        seq,
        event_id: new.event_id.to_string(),
        kind: new.kind.to_string(),
        body: db.keys().seal(&body_place(new.event_id), &plain),
        state: new.state.as_str().to_string(),
        attempts: 0,
        last_status: None,
        last_attempt_at: None,
        created_at: now,
    };
    Entity::insert(ActiveModel::from(model.clone()))
        .exec_without_returning(&txn)
        .await?;
    txn.commit().await?;
    Ok(Appended::Logged(with_body(model, plain)))
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
    rows.into_iter().map(|m| logged(db, m)).collect()
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
    let events = rows
        .into_iter()
        .map(|m| logged(db, m))
        .collect::<Result<_, _>>()?;
    Ok((events, total))
}

/// The update of one event of a session.
fn one(
    client_id: &str,
    seq: u64,
    state: DeliveryState,
) -> Result<sea_orm::UpdateMany<Entity>, DbError> {
    Ok(Entity::update_many()
        .col_expr(Column::State, Expr::value(state.as_str()))
        .filter(Column::ClientId.eq(client_id))
        .filter(Column::Seq.eq(bigint(seq)?)))
}

pub async fn record_attempt(
    db: &Db,
    client_id: &str,
    seq: u64,
    state: DeliveryState,
    status: Option<u16>,
) -> Result<(), DbError> {
    one(client_id, seq, state)?
        .col_expr(Column::Attempts, Expr::col(Column::Attempts).add(1))
        .col_expr(Column::LastStatus, Expr::value(status.map(i32::from)))
        .col_expr(Column::LastAttemptAt, Expr::value(Utc::now()))
        .exec(db.conn())
        .await?;
    Ok(())
}

pub async fn set_state(
    db: &Db,
    client_id: &str,
    seq: u64,
    state: DeliveryState,
) -> Result<(), DbError> {
    one(client_id, seq, state)?.exec(db.conn()).await?;
    Ok(())
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
        .filter(chosen(client_id, which)?)
        .exec(&txn)
        .await?;
    let q = Entity::find().filter(chosen(client_id, which)?);
    let rows = q.order_by_asc(Column::Seq).all(&txn).await?;
    txn.commit().await?;
    rows.into_iter().map(|m| logged(db, m)).collect()
}

pub async fn purge(db: &Db, client_id: &str) -> Result<u64, DbError> {
    let res = Entity::delete_many()
        .filter(Column::ClientId.eq(client_id))
        .exec(db.conn())
        .await?;
    Ok(res.rows_affected)
}

pub async fn prune(db: &Db, before: DateTime<Utc>) -> Result<u64, DbError> {
    let res = Entity::delete_many()
        .filter(Column::CreatedAt.lt(before))
        .exec(db.conn())
        .await?;
    Ok(res.rows_affected)
}
