//! The `sandbox_devices` entity: the network's record of each linked device,
//! written under the connection's fencing token.
use sea_orm::ActiveValue::Set;
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::{ExprTrait, OnConflict};

use chrono::{DateTime, Utc};
use parley_shared::db::{Db, DbError};

/// The network's record of a linked device (what a session reconnects with).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxDevice {
    pub client_id: String,
    pub phone: String,
    /// The device number in the JID, a small positive integer.
    pub device: i32,
    /// `<phone>:<device>@s.whatsapp.net`.
    pub jid: String,
    pub lid: String,
    pub push_name: String,
    /// The fencing token of the connection that wrote the record.
    pub fence: u64,
    pub linked_at: DateTime<Utc>,
}

/// `u64` fence as stored (a bigint).
pub fn fence_to_db(fence: u64) -> Result<i64, DbError> {
    i64::try_from(fence)
        .map_err(|_| DbError::Unavailable(format!("fence {fence} does not fit a bigint")))
}

/// Stored fence back to `u64` (never negative; a corrupt value reads as 0).
pub fn fence_from_db(fence: i64) -> u64 {
    u64::try_from(fence).unwrap_or(0)
}

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sandbox_devices")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub client_id: String,
    #[sea_orm(column_type = "Text")]
    pub phone: String,
    pub device: i32,
    #[sea_orm(column_type = "Text")]
    pub jid: String,
    #[sea_orm(column_type = "Text")]
    pub lid: String,
    #[sea_orm(column_type = "Text")]
    pub push_name: String,
    pub fence: i64,
    pub linked_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl From<Model> for SandboxDevice {
    fn from(m: Model) -> Self {
        SandboxDevice {
            client_id: m.client_id,
            phone: m.phone,
            device: m.device,
            jid: m.jid,
            lid: m.lid,
            push_name: m.push_name,
            fence: fence_from_db(m.fence),
            linked_at: m.linked_at,
        }
    }
}

pub async fn find(db: &Db, client_id: &str) -> Result<Option<SandboxDevice>, DbError> {
    Ok(Entity::find_by_id(client_id)
        .one(db.conn())
        .await?
        .map(SandboxDevice::from))
}

/// The sessions `phone` has linked as its devices.
pub async fn linked_to(db: &Db, phone: &str) -> Result<Vec<String>, DbError> {
    Ok(Entity::find()
        .filter(Column::Phone.eq(phone))
        .all(db.conn())
        .await?
        .into_iter()
        .map(|m| m.client_id)
        .collect())
}

/// `INSERT ... ON CONFLICT (client_id) DO UPDATE ... WHERE fence <= excluded fence`.
pub async fn put(db: &Db, device: &SandboxDevice) -> Result<bool, DbError> {
    let fence = fence_to_db(device.fence)?;
    let row = ActiveModel {
        client_id: Set(device.client_id.clone()),
        phone: Set(device.phone.clone()),
        device: Set(device.device),
        jid: Set(device.jid.clone()),
        lid: Set(device.lid.clone()),
        push_name: Set(device.push_name.clone()),
        fence: Set(fence),
        linked_at: Set(device.linked_at),
    };
    let on_conflict = OnConflict::column(Column::ClientId)
        .update_columns([
            Column::Phone,
            Column::Device,
            Column::Jid,
            Column::Lid,
            Column::PushName,
            Column::Fence,
            Column::LinkedAt,
        ])
        .action_and_where(Expr::col((Entity, Column::Fence)).lte(fence))
        .to_owned();
    let written = Entity::insert(row)
        .on_conflict(on_conflict)
        .exec_without_returning(db.conn())
        .await?;
    Ok(written == 1)
}

pub async fn delete(db: &Db, client_id: &str) -> Result<bool, DbError> {
    let res = Entity::delete_by_id(client_id).exec(db.conn()).await?;
    Ok(res.rows_affected > 0)
}
