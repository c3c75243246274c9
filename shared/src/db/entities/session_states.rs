//! The `session_states` entity: each session's recent state changes, the
//! newest [`KEPT`] of a session, written with the owner's fenced updates.
use chrono::{DateTime, Utc};
use sea_orm::ActiveValue::{NotSet, Set};
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::{ExprTrait, SubQueryStatement};
use sea_orm::{ConnectionTrait, QueryOrder, QuerySelect, QueryTrait};

use crate::db::sessions::StateChange;
use crate::db::{Db, DbError};

/// State changes kept per session.
pub const KEPT: u64 = 50;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "session_states")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(column_type = "Text")]
    pub client_id: String,
    pub at: DateTimeUtc,
    #[sea_orm(column_type = "Text")]
    pub status: String,
    pub connected: bool,
    #[sea_orm(column_type = "Text")]
    pub reason: String,
    #[sea_orm(column_type = "Text")]
    pub pod_name: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

/// Appends `change` to the session's history and drops what is beyond [`KEPT`].
pub async fn record(
    conn: &impl ConnectionTrait,
    client_id: &str,
    change: &StateChange,
) -> Result<(), DbError> {
    let row = ActiveModel {
        id: NotSet,
        client_id: Set(client_id.to_string()),
        at: Set(change.at),
        status: Set(change.status.clone()),
        connected: Set(change.connected),
        reason: Set(change.reason.clone()),
        pod_name: Set(change.pod_name.clone()),
    };
    Entity::insert(row).exec_without_returning(conn).await?;
    // One statement: below the oldest kept (none while fewer are kept).
    let oldest_kept = Entity::find()
        .select_only()
        .column(Column::Id)
        .filter(Column::ClientId.eq(client_id))
        .order_by_desc(Column::Id)
        .offset(KEPT - 1)
        .limit(1)
        .into_query();
    Entity::delete_many()
        .filter(Column::ClientId.eq(client_id))
        .filter(Expr::col(Column::Id).lt(Expr::SubQuery(
            None,
            Box::new(SubQueryStatement::SelectStatement(oldest_kept)),
        )))
        .exec(conn)
        .await?;
    Ok(())
}

/// The session's kept changes, newest first.
pub async fn recent(db: &Db, client_id: &str) -> Result<Vec<StateChange>, DbError> {
    let rows = Entity::find()
        .filter(Column::ClientId.eq(client_id))
        .order_by_desc(Column::Id)
        .limit(KEPT)
        .all(db.conn())
        .await?;
    Ok(rows
        .into_iter()
        .map(|m| StateChange {
            at: m.at,
            status: m.status,
            connected: m.connected,
            reason: m.reason,
            pod_name: m.pod_name,
        })
        .collect())
}

/// Disconnects (changes that brought a reason) since `since`, across the cluster.
pub async fn disconnects_since(db: &Db, since: DateTime<Utc>) -> Result<u64, DbError> {
    Ok(Entity::find()
        .filter(Column::At.gte(since))
        .filter(Column::Reason.ne(""))
        .count(db.conn())
        .await?)
}

/// Deletes the session's history (with the session).
pub async fn delete(conn: &impl ConnectionTrait, client_id: &str) -> Result<(), DbError> {
    Entity::delete_many()
        .filter(Column::ClientId.eq(client_id))
        .exec(conn)
        .await?;
    Ok(())
}
