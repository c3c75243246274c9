//! The `sessions` entity and its queries (behind the `Db` session methods).
use chrono::Utc;
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::ExprTrait;
use sea_orm::{ActiveValue::Set, QueryOrder, QuerySelect, TryInsertResult};

use crate::db::sessions::{
    NewSession, SessionRow, SessionsRekeyed, SettingsPatch, StateChange, StatePatch,
};
use crate::db::{Db, DbError};
use parley_contract::pacing::Pacing;

/// The status of a session nobody has started yet (see the spec's States).
const INITIAL_STATUS: &str = "initializing";

#[derive(Clone, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sessions")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub client_id: String,
    #[sea_orm(column_type = "Text")]
    pub status: String,
    #[sea_orm(column_type = "Text")]
    pub pod_name: String,
    #[sea_orm(column_type = "Text")]
    pub jid: String,
    #[sea_orm(column_type = "Text")]
    pub lid: String,
    #[sea_orm(column_type = "Text")]
    pub webhook_url: String,
    #[sea_orm(column_type = "Text")]
    pub webhook_token: String,
    #[sea_orm(column_type = "Text")]
    pub poll_lookup_url: String,
    #[sea_orm(column_type = "Text")]
    pub org_id: String,
    #[sea_orm(column_type = "Text", nullable)]
    pub secret_hash: Option<String>,
    pub enable_group_ai: bool,
    /// The events turned on beside messages, comma-separated.
    #[sea_orm(column_type = "Text")]
    pub events: String,
    /// The event types the webhook takes, comma-separated; empty: every type.
    #[sea_orm(column_type = "Text")]
    pub webhook_types: String,
    /// The presence the session set: `available`, `unavailable` or empty.
    #[sea_orm(column_type = "Text")]
    pub presence: String,
    /// Whether the calls that ring the session are rejected as they come.
    pub reject_calls: bool,
    /// The text sent to a rejected call's caller; empty: none.
    #[sea_orm(column_type = "Text")]
    pub call_reply: String,
    /// The session's own proxy URL, sealed (see [`proxy_place`]); empty: none.
    #[sea_orm(column_type = "Text")]
    pub proxy_url: String,
    /// Pacing: messages per minute and burst, both set or both null.
    pub pace_per_minute: Option<i32>,
    pub pace_burst: Option<i32>,
    pub connected: bool,
    pub logged_in: bool,
    pub reconnects: i64,
    pub connected_at: Option<DateTimeUtc>,
    #[sea_orm(column_type = "Text")]
    pub last_disconnect: String,
    pub desired: bool,
    pub fence: i64,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}
parley_contract::debug_redacted!(Model { client_id, status, pod_name, jid, lid, webhook_url, poll_lookup_url, org_id, enable_group_ai, events, webhook_types, presence, reject_calls, call_reply, pace_per_minute, pace_burst, connected, logged_in, reconnects, connected_at, last_disconnect, desired, fence, created_at, updated_at; webhook_token, secret_hash, proxy_url });

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

/// Where a session's webhook token is sealed (the associated data).
fn token_place(client_id: &str) -> String {
    format!("sessions.webhook_token:{client_id}")
}

/// Where a session's own proxy URL is sealed (the associated data).
fn proxy_place(client_id: &str) -> String {
    format!("sessions.proxy_url:{client_id}")
}

/// A stored row's proxy URL, opened.
pub(crate) fn open_proxy(db: &Db, m: &Model) -> Result<String, DbError> {
    db.keys()
        .open_text(&proxy_place(&m.client_id), &m.proxy_url)
        .map_err(|e| DbError::Unavailable(format!("session {}: {e}", m.client_id)))
}

/// A stored row, its webhook token and proxy URL opened.
fn row(db: &Db, mut m: Model) -> Result<SessionRow, DbError> {
    let open = |place: String, stored: &str| {
        db.keys()
            .open_text(&place, stored)
            .map_err(|e| DbError::Unavailable(format!("session {}: {e}", m.client_id)))
    };
    let token = open(token_place(&m.client_id), &m.webhook_token)?;
    let proxy = open(proxy_place(&m.client_id), &m.proxy_url)?;
    (m.webhook_token, m.proxy_url) = (token, proxy);
    Ok(SessionRow::from(m))
}

impl From<Model> for SessionRow {
    fn from(m: Model) -> Self {
        SessionRow {
            client_id: m.client_id,
            status: m.status,
            pod_name: m.pod_name,
            jid: m.jid,
            lid: m.lid,
            webhook_url: m.webhook_url,
            webhook_token: m.webhook_token,
            poll_lookup_url: m.poll_lookup_url,
            org_id: m.org_id,
            secret_hash: m.secret_hash,
            enable_group_ai: m.enable_group_ai,
            events: names(&m.events),
            webhook_types: names(&m.webhook_types),
            presence: m.presence,
            reject_calls: m.reject_calls,
            call_reply: m.call_reply,
            proxy_url: m.proxy_url,
            pacing: pacing_of(m.pace_per_minute, m.pace_burst),
            connected: m.connected,
            logged_in: m.logged_in,
            reconnects: m.reconnects,
            connected_at: m.connected_at,
            last_disconnect: m.last_disconnect,
            desired: m.desired,
            fence: m.fence,
            created_at: m.created_at,
            updated_at: m.updated_at,
        }
    }
}

/// A comma-separated column's names.
fn names(column: &str) -> Vec<String> {
    column
        .split(',')
        .filter(|e| !e.is_empty())
        .map(str::to_string)
        .collect()
}

/// The stored pacing columns as a limit; anything but two positive values
/// is no limit.
fn pacing_of(per_minute: Option<i32>, burst: Option<i32>) -> Option<Pacing> {
    let messages_per_minute = u32::try_from(per_minute?).ok().filter(|n| *n > 0)?;
    let burst = u32::try_from(burst?).ok().filter(|n| *n > 0)?;
    Some(Pacing {
        messages_per_minute,
        burst,
    })
}

/// A pacing value as stored (they are checked far below `i32::MAX`).
fn column(n: u32) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// `INSERT ... ON CONFLICT (client_id) DO NOTHING`, then reads the row back.
pub async fn create(db: &Db, new: NewSession) -> Result<(SessionRow, bool), DbError> {
    let now = Utc::now();
    let client_id = new.client_id.clone();
    let token = db
        .keys()
        .seal_text(&token_place(&client_id), &new.webhook_token);
    let row = ActiveModel {
        client_id: Set(new.client_id),
        status: Set(INITIAL_STATUS.to_string()),
        webhook_url: Set(new.webhook_url),
        webhook_token: Set(token),
        poll_lookup_url: Set(new.poll_lookup_url),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    };
    let inserted = match Entity::insert(row)
        .on_conflict_do_nothing()
        .exec_without_returning(db.conn())
        .await?
    {
        TryInsertResult::Inserted(rows) => rows == 1,
        TryInsertResult::Conflicted | TryInsertResult::Empty => false,
    };
    match find(db, &client_id).await? {
        Some(row) => Ok((row, inserted)),
        None => Err(DbError::Conflict(format!(
            "session {client_id} was deleted while being created"
        ))),
    }
}

pub async fn find(db: &Db, client_id: &str) -> Result<Option<SessionRow>, DbError> {
    Entity::find_by_id(client_id)
        .one(db.conn())
        .await?
        .map(|m| row(db, m))
        .transpose()
}

pub async fn all(db: &Db) -> Result<Vec<SessionRow>, DbError> {
    let rows = Entity::find()
        .order_by_asc(Column::ClientId)
        .all(db.conn())
        .await?;
    rows.into_iter().map(|m| row(db, m)).collect()
}

pub async fn desired(db: &Db) -> Result<Vec<String>, DbError> {
    Ok(Entity::find()
        .select_only()
        .column(Column::ClientId)
        .filter(Column::Desired.eq(true))
        .order_by_asc(Column::ClientId)
        .into_tuple::<String>()
        .all(db.conn())
        .await?)
}

pub async fn update_settings(
    db: &Db,
    client_id: &str,
    patch: SettingsPatch,
) -> Result<Option<SessionRow>, DbError> {
    let token = patch
        .webhook_token
        .map(|t| db.keys().seal_text(&token_place(client_id), &t));
    let proxy = patch
        .proxy_url
        .map(|p| db.keys().seal_text(&proxy_place(client_id), &p));
    let changes = ActiveModel {
        webhook_url: set_some(patch.webhook_url),
        webhook_token: set_some(token),
        poll_lookup_url: set_some(patch.poll_lookup_url),
        org_id: set_some(patch.org_id),
        secret_hash: set_some(patch.secret_hash),
        enable_group_ai: set_some(patch.enable_group_ai),
        events: set_some(patch.events.map(|e| e.join(","))),
        webhook_types: set_some(patch.webhook_types.map(|t| t.join(","))),
        presence: set_some(patch.presence),
        reject_calls: set_some(patch.reject_calls),
        call_reply: set_some(patch.call_reply),
        proxy_url: set_some(proxy),
        pace_per_minute: set_some(
            patch
                .pacing
                .map(|p| p.map(|p| column(p.messages_per_minute))),
        ),
        pace_burst: set_some(patch.pacing.map(|p| p.map(|p| column(p.burst)))),
        desired: set_some(patch.desired),
        updated_at: Set(Utc::now()),
        ..Default::default()
    };
    let res = Entity::update_many()
        .set(changes)
        .filter(Column::ClientId.eq(client_id))
        .exec(db.conn())
        .await?;
    if res.rows_affected == 0 {
        return Ok(None);
    }
    find(db, client_id).await
}

/// One `UPDATE ... WHERE client_id = ? AND fence <= ?` that also stores `fence`,
/// and, when the status, the connection, the owner or a disconnect reason
/// changes, a line in the session's state history (same transaction).
pub async fn fenced_update(
    db: &Db,
    client_id: &str,
    fence: u64,
    patch: StatePatch,
) -> Result<bool, DbError> {
    let fence = i64::try_from(fence)
        .map_err(|_| DbError::Unavailable(format!("fence {fence} does not fit a bigint")))?;
    let txn = db.begin_write().await?;
    let before = Entity::find_by_id(client_id).one(&txn).await?;
    let change = before.as_ref().and_then(|old| state_change(old, &patch));
    let changes = ActiveModel {
        status: set_some(patch.status),
        pod_name: set_some(patch.pod_name),
        jid: set_some(patch.jid),
        lid: set_some(patch.lid),
        connected: set_some(patch.connected),
        logged_in: set_some(patch.logged_in),
        connected_at: set_some(patch.connected_at),
        last_disconnect: set_some(patch.last_disconnect),
        desired: set_some(patch.desired),
        fence: Set(fence),
        updated_at: Set(Utc::now()),
        ..Default::default()
    };
    let mut update = Entity::update_many()
        .set(changes)
        .filter(Column::ClientId.eq(client_id))
        .filter(Column::Fence.lte(fence));
    if patch.reconnects_add != 0 {
        update = update.col_expr(
            Column::Reconnects,
            Expr::col(Column::Reconnects).add(patch.reconnects_add),
        );
    }
    let applied = update.exec(&txn).await?.rows_affected == 1;
    if applied && let Some(change) = change {
        super::session_states::record(&txn, client_id, &change).await?;
    }
    txn.commit().await?;
    Ok(applied)
}

/// What the state history records of `patch` applied to `old`; `None` when
/// nothing it shows changes.
fn state_change(old: &Model, patch: &StatePatch) -> Option<StateChange> {
    let status = patch.status.clone().unwrap_or_else(|| old.status.clone());
    let connected = patch.connected.unwrap_or(old.connected);
    let pod_name = patch
        .pod_name
        .clone()
        .unwrap_or_else(|| old.pod_name.clone());
    // A new reason, or a drop of the connection (whose reason may be the
    // same as the last one's, and so not in the patch).
    let new_reason = patch
        .last_disconnect
        .clone()
        .filter(|r| !r.is_empty() && *r != old.last_disconnect);
    let dropped = old.connected && !connected;
    let reason = match new_reason {
        Some(r) => r,
        None if dropped => patch
            .last_disconnect
            .clone()
            .filter(|r| !r.is_empty())
            .unwrap_or_else(|| old.last_disconnect.clone()),
        None => String::new(),
    };
    let same = status == old.status && connected == old.connected && pod_name == old.pod_name;
    if same && reason.is_empty() {
        return None;
    }
    Some(StateChange {
        at: Utc::now(),
        status,
        connected,
        reason,
        pod_name,
    })
}

/// Seals every webhook token and proxy URL not sealed under the active key
/// yet; returns how many of each were sealed again.
pub async fn rekey(db: &Db) -> Result<SessionsRekeyed, DbError> {
    Ok(SessionsRekeyed {
        webhook_tokens: rekey_column(db, Column::WebhookToken, token_place).await?,
        proxy_urls: rekey_column(db, Column::ProxyUrl, proxy_place).await?,
    })
}

/// [`rekey`] of one sealed text column, each value under its `place`.
async fn rekey_column(
    db: &Db,
    sealed_column: Column,
    place: fn(&str) -> String,
) -> Result<usize, DbError> {
    let rows = Entity::find()
        .select_only()
        .column(Column::ClientId)
        .column(sealed_column)
        .into_tuple::<(String, String)>()
        .all(db.conn())
        .await?;
    let mut sealed = 0;
    for (client_id, stored) in rows {
        if db.keys().is_current_text(&stored) {
            continue;
        }
        let place = place(&client_id);
        let plain = db
            .keys()
            .open_text(&place, &stored)
            .map_err(|e| DbError::Unavailable(format!("session {client_id}: {e}")))?;
        let res = Entity::update_many()
            .col_expr(
                sealed_column,
                Expr::value(db.keys().seal_text(&place, &plain)),
            )
            .filter(Column::ClientId.eq(&client_id))
            .filter(sealed_column.eq(stored))
            .exec(db.conn())
            .await?;
        sealed += usize::try_from(res.rows_affected).unwrap_or(0);
    }
    Ok(sealed)
}

pub async fn delete(db: &Db, client_id: &str) -> Result<bool, DbError> {
    // Its event log goes with it (`/disconnect` purges the session's events).
    let txn = db.begin_write().await?;
    super::events::Entity::delete_many()
        .filter(super::events::Column::ClientId.eq(client_id))
        .exec(&txn)
        .await?;
    super::session_states::delete(&txn, client_id).await?;
    super::status_posts::purge(&txn, client_id).await?;
    super::labels::purge(&txn, client_id).await?;
    let res = Entity::delete_by_id(client_id).exec(&txn).await?;
    txn.commit().await?;
    super::events::purge_stream(db, client_id).await;
    Ok(res.rows_affected > 0)
}

/// `Set` for a change, `NotSet` (left as stored) for `None`.
fn set_some<T: Into<Value>>(v: Option<T>) -> sea_orm::ActiveValue<T> {
    v.map_or(sea_orm::ActiveValue::NotSet, Set)
}

/// The sessions table's queries, as methods of the database.
impl Db {
    /// Inserts the session when absent (concurrent callers: exactly one inserts).
    /// Returns the stored row and whether this call created it.
    pub async fn create_session(&self, new: NewSession) -> Result<(SessionRow, bool), DbError> {
        create(self, new).await
    }

    pub async fn session(&self, client_id: &str) -> Result<Option<SessionRow>, DbError> {
        find(self, client_id).await
    }

    /// Every session, ordered by clientId.
    pub async fn sessions(&self) -> Result<Vec<SessionRow>, DbError> {
        all(self).await
    }

    /// ClientIds of the sessions that should be running.
    pub async fn desired_sessions(&self) -> Result<Vec<String>, DbError> {
        desired(self).await
    }

    /// Applies a settings change; `None` when the session does not exist.
    pub async fn update_settings(
        &self,
        client_id: &str,
        patch: SettingsPatch,
    ) -> Result<Option<SessionRow>, DbError> {
        update_settings(self, client_id, patch).await
    }

    /// Applies a state change when `fence` is not older than the stored one, and
    /// stores `fence`. `false`: a newer owner exists (or the row is gone); nothing changed.
    pub async fn fenced_update(
        &self,
        client_id: &str,
        fence: u64,
        patch: StatePatch,
    ) -> Result<bool, DbError> {
        fenced_update(self, client_id, fence, patch).await
    }

    /// Seals every webhook token and session proxy URL under the active
    /// store key (`parley rekey`).
    pub async fn rekey_sessions(&self) -> Result<SessionsRekeyed, DbError> {
        rekey(self).await
    }

    /// Deletes the session; `false` when it did not exist.
    pub async fn delete_session(&self, client_id: &str) -> Result<bool, DbError> {
        delete(self, client_id).await
    }
}
