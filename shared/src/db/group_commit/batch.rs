//! One transaction of the event log's writer: its appends (duplicates found,
//! sessions locked in one order, `seq`s allocated, bodies built and, in the
//! cluster, published before the rows) and its delivery records.
use std::collections::{BTreeMap, BTreeSet, HashSet};

use sea_orm::sea_query::{Alias, CaseStatement, Expr, ExprTrait, Func, Order, Query};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseTransaction, EntityTrait, QueryFilter,
    QuerySelect,
};

use super::{Append, Record};
use crate::db::entities::events::{self as rows, ActiveModel, Column, Entity, Model};
use crate::db::events::{Appended, DeliveryState};
use crate::db::{Db, DbError};
use crate::event_stream::StreamedEvent;

type Outcome = Result<Appended, DbError>;

/// A session's row as the batch found it, locked.
struct Owner {
    next_seq: i64,
    fence: i64,
    /// The oldest undelivered event (the window's start).
    oldest_pending: Option<i64>,
    /// The session's `seq` after this batch, when it appends anything.
    last: Option<i64>,
    /// The `seq` of this batch at which the session's log is trimmed.
    trim_at: Option<i64>,
    cap: i64,
}

/// Writes `appends` and `records` in one transaction: each append's outcome,
/// or why the whole batch failed (then nothing of it was written).
pub(super) async fn write(
    db: &Db,
    appends: &mut [Append],
    records: &[Record],
) -> Result<Vec<Outcome>, DbError> {
    let txn = db.begin_write().await?;
    let mut outcomes: Vec<Option<Outcome>> = Vec::with_capacity(appends.len());
    outcomes.resize_with(appends.len(), || None);
    let mut owners = BTreeMap::new();
    let mut seqs = vec![None; appends.len()];
    if !appends.is_empty() {
        duplicates(&txn, appends, &mut outcomes).await?;
        owners = lock_owners(&txn, appends, &outcomes).await?;
        seqs = allocate(appends, &mut owners, &mut outcomes)?;
        advance(&txn, &owners).await?;
    }
    if !records.is_empty() {
        recorded(&txn, records).await?;
    }
    let mut plains: Vec<Option<Vec<u8>>> = appends
        .iter_mut()
        .zip(&seqs)
        .map(|(a, seq)| seq.map(|s| (a.body)(u64::try_from(s).unwrap_or_default())))
        .collect();
    // In the cluster the bodies are in the stream before the rows commit; a
    // publish that fails writes nothing.
    let stream_seqs = match publish(db, appends, &seqs, &plains).await {
        Ok(at) => at,
        Err(e) => {
            txn.rollback().await?;
            return Err(e);
        }
    };
    let models = insert(db, &txn, appends, &seqs, &plains, &stream_seqs).await?;
    txn.commit().await?;
    trim_stream(db, &owners).await;
    for (i, model) in models {
        let plain = plains[i].take().unwrap_or_default();
        outcomes[i] = Some(Ok(Appended::Logged(rows::with_body(model, plain))));
    }
    Ok(outcomes
        .into_iter()
        .map(|o| o.unwrap_or_else(not_written))
        .collect())
}

/// The outcome of a request the batch has no answer for (never expected).
pub(super) fn not_written() -> Outcome {
    Err(DbError::Unavailable("event not written".into()))
}

/// Known events are duplicates, and so is a second copy within the batch.
async fn duplicates(
    txn: &DatabaseTransaction,
    appends: &[Append],
    outcomes: &mut [Option<Outcome>],
) -> Result<(), DbError> {
    let ids: Vec<String> = appends.iter().map(|a| a.event_id.clone()).collect();
    let known: HashSet<String> = Entity::find()
        .select_only()
        .column(Column::EventId)
        .filter(Column::EventId.is_in(ids))
        .into_tuple::<String>()
        .all(txn)
        .await?
        .into_iter()
        .collect();
    let mut seen = HashSet::new();
    for (a, outcome) in appends.iter().zip(outcomes) {
        if known.contains(&a.event_id) || !seen.insert(a.event_id.as_str()) {
            *outcome = Some(Err(DbError::Conflict(format!(
                "event {} is logged",
                a.event_id
            ))));
        }
    }
    Ok(())
}

/// The rows of the sessions still appending, locked in one order (writers
/// never deadlock on them), with their oldest undelivered events.
async fn lock_owners(
    txn: &DatabaseTransaction,
    appends: &[Append],
    outcomes: &[Option<Outcome>],
) -> Result<BTreeMap<String, Owner>, DbError> {
    let clients: Vec<String> = appends
        .iter()
        .zip(outcomes)
        .filter(|(_, o)| o.is_none())
        .map(|(a, _)| a.client_id.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut owners = BTreeMap::new();
    if clients.is_empty() {
        return Ok(owners);
    }
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
    let locked = Query::select()
        .columns([
            Alias::new("client_id"),
            Alias::new("event_seq"),
            Alias::new("fence"),
        ])
        .expr_as(oldest, Alias::new("oldest"))
        .from(Alias::new("sessions"))
        .and_where(Expr::col(Alias::new("client_id")).is_in(clients))
        .order_by(Alias::new("client_id"), Order::Asc)
        .lock_exclusive()
        .to_owned();
    for row in txn.query_all(&locked).await? {
        let client_id: String = row.try_get("", "client_id")?;
        let owner = Owner {
            next_seq: row.try_get::<i64>("", "event_seq")? + 1,
            fence: row.try_get("", "fence")?,
            oldest_pending: row.try_get("", "oldest")?,
            last: None,
            trim_at: None,
            cap: 1,
        };
        owners.insert(client_id, owner);
    }
    Ok(owners)
}

/// Each event's `seq`, in arrival order; a refused one takes none.
fn allocate(
    appends: &[Append],
    owners: &mut BTreeMap<String, Owner>,
    outcomes: &mut [Option<Outcome>],
) -> Result<Vec<Option<i64>>, DbError> {
    let mut seqs = vec![None; appends.len()];
    for (i, a) in appends.iter().enumerate() {
        if outcomes[i].is_some() {
            continue;
        }
        let fence = bigint(a.fence)?;
        let Some(owner) = owners.get_mut(&a.client_id).filter(|o| o.fence <= fence) else {
            outcomes[i] = Some(Ok(Appended::FencedOut));
            continue;
        };
        let cap = bigint(Ord::max(a.cap, 1))?;
        let seq = owner.next_seq;
        if a.state == DeliveryState::Pending {
            // Backpressure: the window from the oldest undelivered event is full.
            if owner
                .oldest_pending
                .is_some_and(|oldest| seq - oldest >= cap)
            {
                outcomes[i] = Some(Ok(Appended::Full));
                continue;
            }
            owner.oldest_pending.get_or_insert(seq);
        }
        owner.next_seq += 1;
        owner.last = Some(seq);
        owner.cap = cap;
        if seq % rows::TRIM_EVERY == 0 {
            owner.trim_at = Some(seq);
        }
        seqs[i] = Some(seq);
    }
    Ok(seqs)
}

/// Moves the appending sessions' counters past their new events (one
/// statement for all), and trims the logs whose turn it is.
async fn advance(
    txn: &DatabaseTransaction,
    owners: &BTreeMap<String, Owner>,
) -> Result<(), DbError> {
    let client = || Expr::col(Alias::new("client_id"));
    let moved: Vec<(&str, i64)> = owners
        .iter()
        .filter_map(|(client_id, o)| Some((client_id.as_str(), o.last?)))
        .collect();
    let mut case: Option<CaseStatement> = None;
    for &(client_id, last) in &moved {
        let when = client().eq(client_id);
        case = Some(match case {
            None => Expr::case(when, last),
            Some(case) => case.case(when, last),
        });
    }
    if let Some(case) = case {
        let advance = Query::update()
            .table(Alias::new("sessions"))
            .value(
                Alias::new("event_seq"),
                case.finally(Expr::col(Alias::new("event_seq"))),
            )
            .and_where(client().is_in(moved.iter().map(|(c, _)| *c)))
            .to_owned();
        txn.execute(&advance).await?;
    }
    for (client_id, owner) in owners {
        if let Some(at) = owner.trim_at {
            // Kept events beyond the cap that need nothing more go, oldest first.
            Entity::delete_many()
                .filter(Column::ClientId.eq(client_id.as_str()))
                .filter(Column::Seq.lte(at - owner.cap))
                .filter(Column::State.ne(DeliveryState::Pending.as_str()))
                .exec(txn)
                .await?;
        }
    }
    Ok(())
}

/// The deliveries' outcomes on their events' rows: one statement per kind
/// of outcome (state, attempt and status), usually one for the batch.
async fn recorded(txn: &DatabaseTransaction, records: &[Record]) -> Result<(), DbError> {
    let mut kinds: BTreeMap<(&str, Option<Option<u16>>), Condition> = BTreeMap::new();
    for r in records {
        let event = Condition::all()
            .add(Column::ClientId.eq(r.client_id.as_str()))
            .add(Column::Seq.eq(bigint(r.seq)?));
        let events = kinds
            .entry((r.state.as_str(), r.attempt))
            .or_insert_with(Condition::any);
        *events = std::mem::replace(events, Condition::any()).add(event);
    }
    let now = chrono::Utc::now();
    for ((state, attempt), events) in kinds {
        let mut update = Entity::update_many()
            .col_expr(Column::State, Expr::value(state))
            .filter(events);
        if let Some(status) = attempt {
            update = update
                .col_expr(Column::Attempts, Expr::col(Column::Attempts).add(1))
                .col_expr(Column::LastStatus, Expr::value(status.map(i32::from)))
                .col_expr(Column::LastAttemptAt, Expr::value(now));
        }
        update.exec(txn).await?;
    }
    Ok(())
}

/// Publishes the new events' bodies to the cluster's stream (all sent, then
/// every acknowledgement awaited): their stream sequences, by position.
async fn publish(
    db: &Db,
    appends: &[Append],
    seqs: &[Option<i64>],
    plains: &[Option<Vec<u8>>],
) -> Result<Vec<Option<i64>>, DbError> {
    let mut at = vec![None; appends.len()];
    let Some(stream) = db.event_stream() else {
        return Ok(at);
    };
    let (positions, events): (Vec<usize>, Vec<StreamedEvent<'_>>) = appends
        .iter()
        .enumerate()
        .filter_map(|(i, a)| {
            let (seq, body) = (seqs[i]?, plains[i].as_deref()?);
            let event = StreamedEvent {
                client_id: &a.client_id,
                seq: u64::try_from(seq).unwrap_or_default(),
                event_id: &a.event_id,
                kind: &a.kind,
                body,
            };
            Some((i, event))
        })
        .unzip();
    if events.is_empty() {
        return Ok(at);
    }
    let sequences = stream
        .publish_all(&events)
        .await
        .map_err(|e| DbError::Unavailable(e.to_string()))?;
    for (i, s) in positions.into_iter().zip(sequences) {
        at[i] = Some(bigint(s)?);
    }
    Ok(at)
}

/// The new events' rows, in one statement; answers them by position.
async fn insert(
    db: &Db,
    txn: &DatabaseTransaction,
    appends: &[Append],
    seqs: &[Option<i64>],
    plains: &[Option<Vec<u8>>],
    stream_seqs: &[Option<i64>],
) -> Result<Vec<(usize, Model)>, DbError> {
    let now = chrono::Utc::now();
    let mut models = Vec::new();
    for (i, a) in appends.iter().enumerate() {
        let (Some(seq), Some(plain)) = (seqs[i], plains[i].as_ref()) else {
            continue;
        };
        let body = match stream_seqs[i] {
            Some(_) => Vec::new(),
            None => db.keys().seal(&rows::body_place(&a.event_id), plain),
        };
        let model = Model {
            client_id: a.client_id.clone(),
            seq,
            event_id: a.event_id.clone(),
            kind: a.kind.clone(),
            body,
            state: a.state.as_str().to_string(),
            attempts: 0,
            last_status: None,
            last_attempt_at: None,
            created_at: now,
            stream_seq: stream_seqs[i],
        };
        models.push((i, model));
    }
    if !models.is_empty() {
        Entity::insert_many(models.iter().map(|(_, m)| ActiveModel::from(m.clone())))
            .exec_without_returning(txn)
            .await?;
    }
    Ok(models)
}

/// The trimmed rows' bodies leave the stream too: every event older than the
/// cap needs nothing more (a pending one would have been refused), so each
/// session's last `cap` bodies are the ones kept.
async fn trim_stream(db: &Db, owners: &BTreeMap<String, Owner>) {
    let Some(stream) = db.event_stream() else {
        return;
    };
    for (client_id, owner) in owners.iter().filter(|(_, o)| o.trim_at.is_some()) {
        let keep = u64::try_from(owner.cap).unwrap_or(1);
        if let Err(e) = stream.trim(client_id, keep).await {
            tracing::warn!(client_id, error = %e,
                "trimmed events' bodies stay in the stream until they age out");
        }
    }
}

fn bigint(n: u64) -> Result<i64, DbError> {
    i64::try_from(n).map_err(|_| DbError::Unavailable(format!("{n} does not fit a bigint")))
}
