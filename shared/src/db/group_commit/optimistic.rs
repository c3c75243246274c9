//! An optimistic batch on PostgreSQL: when the writer knows each session's
//! last `seq` (it wrote the session's last batch, and a session's requests
//! always go to the same writer), it allocates the new `seq`s itself,
//! publishes the bodies (in the cluster), and writes everything in one
//! statement with no transaction around it: no locking read, no `BEGIN` and
//! `COMMIT`, one round trip. The statement is atomic and checks, for each
//! session, what the locking read would have: that the session's `seq` is
//! still the one the writer knows (no one else appended since), that its
//! fence admits the appends, and that the window from its oldest
//! undelivered event is not full. A session that fails a check gets no row
//! and takes no `seq`; its appends go through a locked transaction, which
//! answers each as it always did (fenced out, full, or written). An event
//! logged already makes the statement fail as a conflict, as in a locked
//! transaction (the caller then writes the batch request by request).
use std::collections::{BTreeMap, HashSet};

use super::batch::{self, Outcome};
use super::postgres::{self, Move};
use super::records::{self, Known};
use super::{Append, Record};
use crate::db::entities::events::{self as rows, Model};
use crate::db::logged_events::{Appended, DeliveryState};
use crate::db::{Db, DbError};

/// A session's part of the batch, as planned from what the writer knows.
struct Plan {
    expected: i64,
    last: i64,
    fence: i64,
    bound: i64,
    first_pending: Option<i64>,
    trim_at: Option<i64>,
    cap: i64,
    /// Whether its appends fit the window by themselves (else: locked).
    fits: bool,
}

/// Writes `appends` (every session known) and `records`; see the module.
pub(super) async fn write(
    db: &Db,
    mut appends: Vec<&mut Append>,
    records: &[Record],
    known: &mut Known,
) -> Result<Vec<Outcome>, DbError> {
    let (plans, seqs) = plan(&appends, known)?;
    let seqs: Vec<Option<i64>> = appends
        .iter()
        .zip(seqs)
        .map(|(a, seq)| plans[a.client_id.as_str()].fits.then_some(seq))
        .collect();
    let mut plains: Vec<Option<Vec<u8>>> = appends
        .iter_mut()
        .zip(&seqs)
        .map(|(a, seq)| seq.map(|s| (a.body)(u64::try_from(s).unwrap_or_default())))
        .collect();
    let stream_seqs = batch::publish(db, &appends, &seqs, &plains).await?;
    let models = batch::new_rows(db, &appends, &seqs, &plains, &stream_seqs);
    let moves: Vec<Move<'_>> = plans
        .iter()
        .filter(|(_, p)| p.fits)
        .map(|(client_id, p)| Move {
            client_id: client_id.as_str(),
            expected: p.expected,
            last: p.last,
            fence: p.fence,
            bound: p.bound,
        })
        .collect();
    let recorded = records::fold(records)?;
    let new: Vec<&Model> = models.iter().map(|(_, m)| m).collect();
    let moved: HashSet<String> = postgres::write_optimistic(db.conn(), &moves, &recorded, &new)
        .await?
        .into_iter()
        .collect();

    let mut outcomes: Vec<Option<Outcome>> = Vec::with_capacity(appends.len());
    outcomes.resize_with(appends.len(), || None);
    for (i, model) in models {
        if moved.contains(&model.client_id) {
            let plain = plains[i].take().unwrap_or_default();
            outcomes[i] = Some(Ok(Appended::Logged(rows::with_body(model, plain))));
        }
    }
    for (client_id, p) in plans.iter().filter(|(c, _)| moved.contains(*c)) {
        records::remember(known, client_id, p.last);
        if let Some(at) = p.trim_at {
            // Written already: a trim that fails waits for the next turn.
            if let Err(e) = batch::trim_rows(db.conn(), client_id, at, p.cap).await {
                tracing::warn!(client_id, error = %e, "the event log was not trimmed");
            }
            batch::trim_stream(db, client_id, p.cap).await;
        }
    }

    // What someone else changed meanwhile (or did not fit): locked, as ever.
    let mut positions = Vec::new();
    let mut again = Vec::new();
    for (i, a) in appends.into_iter().enumerate() {
        if outcomes[i].is_none() {
            positions.push(i);
            again.push(a);
        }
    }
    if !again.is_empty() {
        let answers = batch::locked(db, &mut again, &[], &[], known).await?;
        for (i, answer) in positions.into_iter().zip(answers) {
            outcomes[i] = Some(answer);
        }
    }
    Ok(outcomes
        .into_iter()
        .map(|o| o.unwrap_or_else(batch::not_written))
        .collect())
}

/// The sessions' plans, and each append's `seq` by position.
type Planned = (BTreeMap<String, Plan>, Vec<i64>);

/// Each session's plan and each append's `seq`, in arrival order, from the
/// `seq`s the writer knows.
fn plan(appends: &[&mut Append], known: &Known) -> Result<Planned, DbError> {
    let mut plans: BTreeMap<String, Plan> = BTreeMap::new();
    let mut seqs = Vec::with_capacity(appends.len());
    for a in appends {
        let expected = known.get(&a.client_id).copied().unwrap_or_default();
        let plan = plans.entry(a.client_id.clone()).or_insert(Plan {
            expected,
            last: expected,
            fence: i64::MAX,
            bound: -1,
            first_pending: None,
            trim_at: None,
            cap: 1,
            fits: true,
        });
        let seq = plan.last + 1;
        plan.last = seq;
        plan.fence = plan.fence.min(records::bigint(a.fence)?);
        let cap = records::bigint(Ord::max(a.cap, 1))?;
        plan.cap = cap;
        if a.state == DeliveryState::Pending {
            let first = *plan.first_pending.get_or_insert(seq);
            // More undelivered events than the window holds in this batch
            // alone: the locked path refuses the ones past it.
            plan.fits &= seq - first < cap;
            plan.bound = plan.bound.max(seq - cap);
        }
        if seq % rows::TRIM_EVERY == 0 {
            plan.trim_at = Some(seq);
        }
        seqs.push(seq);
    }
    Ok((plans, seqs))
}
