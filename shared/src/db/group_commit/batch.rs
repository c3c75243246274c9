//! A locked batch of the event log's writer: its appends and its delivery
//! records in one transaction (sessions locked in one order, duplicates
//! found, `seq`s allocated, bodies built and, in the cluster, published
//! before the rows), whose statements are PostgreSQL's (`postgres`: two per
//! transaction) or SQLite's (`portable`: two calls, with the transaction's
//! `BEGIN` and `COMMIT` riding in them). What the optimistic
//! statement (`optimistic`) could not write comes here too.
use std::collections::{BTreeMap, BTreeSet, HashSet};

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

use super::records::{Known, bigint, remember};
use super::rides::{self, Ride};
use super::txn::Txn;
use super::{Append, Record};
use crate::db::entities::events::{self as rows, Column, Entity, Model};
use crate::db::logged_events::{Appended, DeliveryState};
use crate::db::{Db, DbError};
use crate::event_stream::StreamedEvent;

pub(super) type Outcome = Result<Appended, DbError>;

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

/// Writes `appends`, `records` and `rides` in one transaction with the
/// sessions' rows locked: each append's outcome, or why the whole batch
/// failed (then nothing of it was written).
pub(super) async fn locked(
    db: &Db,
    appends: &mut [&mut Append],
    records: &[Record],
    rides: &[Ride],
    known: &mut Known,
) -> Result<Vec<Outcome>, DbError> {
    for a in appends.iter() {
        known.remove(&a.client_id);
    }
    let mut txn = Txn::begin(db).await?;
    let written = match fill(db, &mut txn, appends, records, rides).await {
        Ok(written) => written,
        Err(e) => {
            txn.abort().await;
            return Err(e);
        }
    };
    let Written {
        owners,
        models,
        mut plains,
        mut outcomes,
    } = written;
    for (client_id, owner) in &owners {
        remember(known, client_id, owner.next_seq - 1);
        if owner.trim_at.is_some() {
            trim_stream(db, client_id, owner.cap).await;
        }
    }
    for (i, model) in models {
        let plain = plains[i].take().unwrap_or_default();
        outcomes[i] = Some(Ok(Appended::Logged(rows::with_body(model, plain))));
    }
    Ok(outcomes
        .into_iter()
        .map(|o| o.unwrap_or_else(not_written))
        .collect())
}

/// What a committed batch wrote.
struct Written {
    owners: BTreeMap<String, Owner>,
    models: Vec<(usize, Model)>,
    plains: Vec<Option<Vec<u8>>>,
    outcomes: Vec<Option<Outcome>>,
}

/// The batch's work in `txn`, up to its commit; on an error the caller
/// rolls it back.
async fn fill(
    db: &Db,
    txn: &mut Txn<'_>,
    appends: &mut [&mut Append],
    records: &[Record],
    rides: &[Ride],
) -> Result<Written, DbError> {
    let mut outcomes: Vec<Option<Outcome>> = Vec::with_capacity(appends.len());
    outcomes.resize_with(appends.len(), || None);
    let mut owners = BTreeMap::new();
    let mut seqs = vec![None; appends.len()];
    if !appends.is_empty() || !rides.is_empty() {
        owners = lock_owners(txn, appends, rides, &mut outcomes).await?;
        seqs = allocate(appends, &mut owners, &mut outcomes)?;
        trim(txn, &owners).await?;
    }
    let plains: Vec<Option<Vec<u8>>> = appends
        .iter_mut()
        .zip(&seqs)
        .map(|(a, seq)| seq.map(|s| (a.body)(u64::try_from(s).unwrap_or_default())))
        .collect();
    // In the cluster the bodies are in the stream before the rows commit; a
    // publish that fails writes nothing.
    let stream_seqs = publish(db, appends, &seqs, &plains).await?;
    let models = new_rows(db, appends, &seqs, &plains, &stream_seqs);
    let moved: Vec<(&str, i64)> = owners
        .iter()
        .filter_map(|(client_id, o)| Some((client_id.as_str(), o.last?)))
        .collect();
    let recorded = super::records::fold(records)?;
    let new: Vec<&Model> = models.iter().map(|(_, m)| m).collect();
    let ridden = rides::statements(rides, |client_id| owners.get(client_id).map(|o| o.fence));
    txn.write_and_commit(&moved, &recorded, &new, ridden)
        .await?;
    Ok(Written {
        owners,
        models,
        plains,
        outcomes,
    })
}

/// The outcome of a request the batch has no answer for (never expected).
pub(super) fn not_written() -> Outcome {
    Err(DbError::Unavailable("event not written".into()))
}

/// The rows of the batch's sessions (its appends' and its rides'), locked
/// in one order (writers never deadlock on them), with their oldest
/// undelivered events; appends of events logged already, or twice in the
/// batch, are duplicates.
async fn lock_owners(
    txn: &mut Txn<'_>,
    appends: &[&mut Append],
    rides: &[Ride],
    outcomes: &mut [Option<Outcome>],
) -> Result<BTreeMap<String, Owner>, DbError> {
    let clients: Vec<&str> = appends
        .iter()
        .map(|a| a.client_id.as_str())
        .chain(rides.iter().map(|r| r.client_id.as_str()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let ids: Vec<&str> = appends.iter().map(|a| a.event_id.as_str()).collect();
    let (rows, known) = txn.lock(&clients, &ids).await?;
    let known: HashSet<String> = known.into_iter().collect();
    let mut seen = HashSet::new();
    for (a, outcome) in appends.iter().zip(outcomes) {
        if known.contains(&a.event_id) || !seen.insert(a.event_id.as_str()) {
            *outcome = Some(Err(DbError::Conflict(format!(
                "event {} is logged",
                a.event_id
            ))));
        }
    }
    let mut owners = BTreeMap::new();
    for row in rows {
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
    appends: &[&mut Append],
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

/// Trims the logs whose turn it is: kept events beyond the cap that need
/// nothing more go, oldest first.
async fn trim(txn: &Txn<'_>, owners: &BTreeMap<String, Owner>) -> Result<(), DbError> {
    for (client_id, owner) in owners {
        if let Some(at) = owner.trim_at {
            txn.trim_rows(client_id, at, owner.cap).await?;
        }
    }
    Ok(())
}

/// Deletes `client_id`'s events at least `cap` before `at` that need
/// nothing more.
pub(super) async fn trim_rows(
    conn: &impl ConnectionTrait,
    client_id: &str,
    at: i64,
    cap: i64,
) -> Result<(), DbError> {
    Entity::delete_many()
        .filter(Column::ClientId.eq(client_id))
        .filter(Column::Seq.lte(at - cap))
        .filter(Column::State.ne(DeliveryState::Pending.as_str()))
        .exec(conn)
        .await?;
    Ok(())
}

/// Publishes the new events' bodies to the cluster's stream (all sent, then
/// every acknowledgement awaited): their stream sequences, by position.
pub(super) async fn publish(
    db: &Db,
    appends: &[&mut Append],
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

/// The new events' rows, by their requests' positions.
pub(super) fn new_rows(
    db: &Db,
    appends: &[&mut Append],
    seqs: &[Option<i64>],
    plains: &[Option<Vec<u8>>],
    stream_seqs: &[Option<i64>],
) -> Vec<(usize, Model)> {
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
            requeues: 0,
        };
        models.push((i, model));
    }
    models
}

/// The trimmed rows' bodies leave the stream too: every event older than the
/// cap needs nothing more (a pending one would have been refused), so the
/// session's last `cap` bodies are the ones kept.
pub(super) async fn trim_stream(db: &Db, client_id: &str, cap: i64) {
    let Some(stream) = db.event_stream() else {
        return;
    };
    let keep = u64::try_from(cap).unwrap_or(1);
    if let Err(e) = stream.trim(client_id, keep).await {
        tracing::warn!(client_id, error = %e,
            "trimmed events' bodies stay in the stream until they age out");
    }
}
