//! What the console's overview routes read: sessions searched and paged,
//! the open events (pending, dead letters) of a page of sessions and of the
//! cluster, each session's state history, and recent disconnects.
use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::{ExprTrait, Func, LikeExpr};
use sea_orm::{Condition, QueryOrder, QuerySelect};

use super::entities::{events, session_states, sessions};
use super::events::DeliveryState;
use super::sessions::{SessionRow, StateChange};
use super::{Db, DbError};

/// One page of sessions and how many match in all.
#[derive(Debug, Clone)]
pub struct SessionPage {
    /// Rows without their webhook tokens (never needed here).
    pub rows: Vec<SessionRow>,
    pub total: u64,
}

/// Sessions counted by how they stand, in all and per owning pod.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionTotals {
    pub total: u64,
    pub connected: u64,
    /// Down (linked, meant to run, offline) or terminal (logged out).
    pub failed: u64,
    /// Never linked yet.
    pub pairing: u64,
    /// Reconnects over every session's life.
    pub reconnects: u64,
    /// Per owning pod (non-empty names): sessions, and of those connected.
    pub by_pod: HashMap<String, (u64, u64)>,
}

/// A session's (or the cluster's) events that still need something.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenEvents {
    pub pending: u64,
    pub dead_letters: u64,
    /// The newest `seq` logged (0 when none).
    pub last_seq: u64,
}

/// `%text%` for LIKE, with LIKE's own characters escaped.
fn contains_pattern(text: &str) -> LikeExpr {
    let mut pattern = String::from("%");
    for c in text.to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    LikeExpr::new(pattern).escape('\\')
}

/// The predicate of the partial index `events_open` (migration m0017).
const OPEN_PREDICATE: &str = "state IN ('pending', 'rejected', 'dead')";

/// The states [`OPEN_PREDICATE`] names.
fn open_states() -> [&'static str; 3] {
    [
        DeliveryState::Pending.as_str(),
        DeliveryState::Rejected.as_str(),
        DeliveryState::Dead.as_str(),
    ]
}

impl Db {
    /// Sessions whose clientId, JID or orgId contains `query` (any case),
    /// ordered by clientId; `only` limits the search to one session.
    pub async fn session_page(
        &self,
        query: &str,
        only: Option<&str>,
        page: u64,
        limit: u64,
    ) -> Result<SessionPage, DbError> {
        use sessions::{Column, Entity};
        let mut find = Entity::find();
        if let Some(id) = only {
            find = find.filter(Column::ClientId.eq(id));
        }
        if !query.is_empty() {
            let lower = |c: Column| Expr::expr(Func::lower(Expr::col((Entity, c))));
            find = find.filter(
                Condition::any()
                    .add(lower(Column::ClientId).like(contains_pattern(query)))
                    .add(lower(Column::Jid).like(contains_pattern(query)))
                    .add(lower(Column::OrgId).like(contains_pattern(query))),
            );
        }
        let total = find.clone().count(self.conn()).await?;
        let rows = find
            .order_by_asc(Column::ClientId)
            .offset(page.saturating_sub(1).saturating_mul(limit))
            .limit(limit)
            .all(self.conn())
            .await?
            .into_iter()
            .map(|mut m| {
                m.webhook_token.clear();
                // Its proxy is shown (without credentials): opened; one that
                // does not open is shown as none, and said.
                m.proxy_url = sessions::open_proxy(self, &m).unwrap_or_else(|e| {
                    tracing::warn!(error = %e, "a session's proxy URL does not open");
                    String::new()
                });
                SessionRow::from(m)
            })
            .collect();
        Ok(SessionPage { rows, total })
    }

    /// Every session counted by health and owner, in one grouped query
    /// (no row is read out, no token opened).
    pub async fn session_totals(&self) -> Result<SessionTotals, DbError> {
        use sessions::{Column, Entity};
        // Literal: PostgreSQL matches a grouped expression to the selected one
        // by its text, and two bound parameters would differ.
        let unlinked = Expr::cust("jid = ''");
        let groups: Vec<(String, bool, bool, bool, i64, Option<i64>)> = Entity::find()
            .select_only()
            .column(Column::PodName)
            .column(Column::Desired)
            .column(Column::Connected)
            .column_as(unlinked.clone(), "unlinked")
            .column_as(Expr::from(Func::count(Expr::col(Column::ClientId))), "n")
            // PostgreSQL sums bigints as numeric.
            .column_as(Expr::cust("CAST(SUM(reconnects) AS BIGINT)"), "reconnects")
            .group_by(Column::PodName)
            .group_by(Column::Desired)
            .group_by(Column::Connected)
            .group_by(unlinked)
            .into_tuple()
            .all(self.conn())
            .await?;
        let mut t = SessionTotals::default();
        for (pod, desired, connected, unlinked, n, reconnects) in groups {
            let n = u64::try_from(n).unwrap_or_default();
            t.total += n;
            t.reconnects += reconnects
                .and_then(|r| u64::try_from(r).ok())
                .unwrap_or_default();
            match (desired, connected, unlinked) {
                (false, _, _) => t.failed += n,
                (true, true, _) => t.connected += n,
                (true, false, false) => t.failed += n,
                (true, false, true) => t.pairing += n,
            }
            if !pod.is_empty() {
                let p = t.by_pod.entry(pod).or_default();
                p.0 += n;
                if connected {
                    p.1 += n;
                }
            }
        }
        Ok(t)
    }

    /// The open events and newest `seq` of each of `client_ids` (absent: none).
    pub async fn open_events(
        &self,
        client_ids: &[String],
    ) -> Result<HashMap<String, OpenEvents>, DbError> {
        use events::{Column, Entity};
        let mut out: HashMap<String, OpenEvents> = HashMap::new();
        if client_ids.is_empty() {
            return Ok(out);
        }
        let counts: Vec<(String, String, i64)> = Entity::find()
            .select_only()
            .column(Column::ClientId)
            .column(Column::State)
            .column_as(Expr::from(Func::count(Expr::col(Column::Seq))), "n")
            .filter(Column::ClientId.is_in(client_ids.iter().cloned()))
            .filter(Column::State.is_in(open_states()))
            .group_by(Column::ClientId)
            .group_by(Column::State)
            .into_tuple()
            .all(self.conn())
            .await?;
        for (id, state, n) in counts {
            let e = out.entry(id).or_default();
            let n = u64::try_from(n).unwrap_or_default();
            match DeliveryState::parse(&state) {
                Some(DeliveryState::Pending) => e.pending += n,
                Some(s) if s.is_dead_letter() => e.dead_letters += n,
                _ => {}
            }
        }
        let last: Vec<(String, Option<i64>)> = Entity::find()
            .select_only()
            .column(Column::ClientId)
            .column_as(Expr::from(Func::max(Expr::col(Column::Seq))), "last")
            .filter(Column::ClientId.is_in(client_ids.iter().cloned()))
            .group_by(Column::ClientId)
            .into_tuple()
            .all(self.conn())
            .await?;
        for (id, seq) in last {
            out.entry(id).or_default().last_seq =
                seq.and_then(|s| u64::try_from(s).ok()).unwrap_or_default();
        }
        Ok(out)
    }

    /// The open events of the whole deployment (read through the partial
    /// index `events_open`, so delivered events cost nothing).
    pub async fn open_events_total(&self) -> Result<OpenEvents, DbError> {
        use events::{Column, Entity};
        let counts: Vec<(String, i64)> = Entity::find()
            .select_only()
            .column(Column::State)
            .column_as(Expr::from(Func::count(Expr::col(Column::State))), "n")
            // Literal, not bound: a partial index is used only for a query
            // whose condition names its predicate's constants.
            .filter(Expr::cust(OPEN_PREDICATE))
            .group_by(Column::State)
            .into_tuple()
            .all(self.conn())
            .await?;
        let mut total = OpenEvents::default();
        for (state, n) in counts {
            let n = u64::try_from(n).unwrap_or_default();
            match DeliveryState::parse(&state) {
                Some(DeliveryState::Pending) => total.pending += n,
                Some(s) if s.is_dead_letter() => total.dead_letters += n,
                _ => {}
            }
        }
        Ok(total)
    }

    /// The session's recent state changes, newest first (at most 50).
    pub async fn state_changes(&self, client_id: &str) -> Result<Vec<StateChange>, DbError> {
        session_states::recent(self, client_id).await
    }

    /// Disconnects across the deployment since `since`.
    pub async fn disconnects_since(&self, since: DateTime<Utc>) -> Result<u64, DbError> {
        session_states::disconnects_since(self, since).await
    }
}
