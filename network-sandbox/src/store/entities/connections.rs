//! The `sandbox_connections` entity: the network's log of every connection,
//! which shows whether two workers ever drove one session at once.
use chrono::{DateTime, Utc};
use sea_orm::entity::prelude::*;
use sea_orm::{ActiveValue::Set, QueryOrder};

use super::devices::{fence_from_db, fence_to_db};
use parley_shared::db::{Db, DbError};

/// One connection as the network logged it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxConnection {
    pub id: i64,
    pub client_id: String,
    pub pod_name: String,
    pub fence: u64,
    pub connected_at: DateTime<Utc>,
    /// `None` while the connection is open.
    pub closed_at: Option<DateTime<Utc>>,
}

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sandbox_connections")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(column_type = "Text")]
    pub client_id: String,
    #[sea_orm(column_type = "Text")]
    pub pod_name: String,
    pub fence: i64,
    pub connected_at: DateTimeUtc,
    pub closed_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl From<Model> for SandboxConnection {
    fn from(m: Model) -> Self {
        SandboxConnection {
            id: m.id,
            client_id: m.client_id,
            pod_name: m.pod_name,
            fence: fence_from_db(m.fence),
            connected_at: m.connected_at,
            closed_at: m.closed_at,
        }
    }
}

pub async fn open(db: &Db, client_id: &str, pod_name: &str, fence: u64) -> Result<i64, DbError> {
    let row = ActiveModel {
        client_id: Set(client_id.to_string()),
        pod_name: Set(pod_name.to_string()),
        fence: Set(fence_to_db(fence)?),
        connected_at: Set(Utc::now()),
        closed_at: Set(None),
        ..Default::default()
    };
    Ok(Entity::insert(row).exec(db.conn()).await?.last_insert_id)
}

/// `UPDATE ... SET closed_at = now WHERE id = ? AND closed_at IS NULL`.
pub async fn close(db: &Db, id: i64) -> Result<(), DbError> {
    Entity::update_many()
        .col_expr(Column::ClosedAt, Expr::value(Utc::now()))
        .filter(Column::Id.eq(id))
        .filter(Column::ClosedAt.is_null())
        .exec(db.conn())
        .await?;
    Ok(())
}

pub async fn list(db: &Db, client_id: &str) -> Result<Vec<SandboxConnection>, DbError> {
    let rows = Entity::find()
        .filter(Column::ClientId.eq(client_id))
        .order_by_asc(Column::Id)
        .all(db.conn())
        .await?;
    Ok(rows.into_iter().map(SandboxConnection::from).collect())
}
