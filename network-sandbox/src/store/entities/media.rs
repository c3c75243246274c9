//! The `sandbox_media` entity: the simulated network's CDN, one encrypted file
//! per direct path.
use chrono::Utc;
use sea_orm::ActiveValue::Set;
use sea_orm::entity::prelude::*;

use parley_shared::db::{Db, DbError};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sandbox_media")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub direct_path: String,
    #[sea_orm(column_type = "Text")]
    pub client_id: String,
    pub data: Vec<u8>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

pub async fn put(
    db: &Db,
    client_id: &str,
    direct_path: &str,
    data: Vec<u8>,
) -> Result<(), DbError> {
    let row = ActiveModel {
        direct_path: Set(direct_path.to_string()),
        client_id: Set(client_id.to_string()),
        data: Set(data),
        created_at: Set(Utc::now()),
    };
    Entity::insert(row)
        .exec_without_returning(db.conn())
        .await?;
    Ok(())
}

pub async fn get(db: &Db, direct_path: &str) -> Result<Option<Vec<u8>>, DbError> {
    Ok(Entity::find_by_id(direct_path)
        .one(db.conn())
        .await?
        .map(|m| m.data))
}

pub async fn forget(db: &Db, client_id: &str) -> Result<(), DbError> {
    Entity::delete_many()
        .filter(Column::ClientId.eq(client_id))
        .exec(db.conn())
        .await?;
    Ok(())
}
