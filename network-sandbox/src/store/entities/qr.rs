//! The `sandbox_qr` entity: the QR code each pairing session shows now, so a
//! scanned code resolves to its session.
use chrono::Utc;
use sea_orm::ActiveValue::Set;
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::OnConflict;

use parley_shared::db::{Db, DbError};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sandbox_qr")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub client_id: String,
    #[sea_orm(column_type = "Text", unique)]
    pub code: String,
    pub issued_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

pub async fn owner(db: &Db, code: &str) -> Result<Option<String>, DbError> {
    Ok(Entity::find()
        .filter(Column::Code.eq(code))
        .one(db.conn())
        .await?
        .map(|m| m.client_id))
}

pub async fn current(db: &Db, client_id: &str) -> Result<Option<String>, DbError> {
    Ok(Entity::find_by_id(client_id)
        .one(db.conn())
        .await?
        .map(|m| m.code))
}

/// Upserts the session's code.
pub async fn set(db: &Db, client_id: &str, code: &str) -> Result<(), DbError> {
    let row = ActiveModel {
        client_id: Set(client_id.to_string()),
        code: Set(code.to_string()),
        issued_at: Set(Utc::now()),
    };
    Entity::insert(row)
        .on_conflict(
            OnConflict::column(Column::ClientId)
                .update_columns([Column::Code, Column::IssuedAt])
                .to_owned(),
        )
        .exec_without_returning(db.conn())
        .await?;
    Ok(())
}

/// Deletes the session's code when it is still `code`.
pub async fn clear(db: &Db, client_id: &str, code: &str) -> Result<(), DbError> {
    Entity::delete_many()
        .filter(Column::ClientId.eq(client_id))
        .filter(Column::Code.eq(code))
        .exec(db.conn())
        .await?;
    Ok(())
}

/// Deletes the session's code, whatever it is.
pub async fn clear_all(db: &Db, client_id: &str) -> Result<(), DbError> {
    Entity::delete_by_id(client_id).exec(db.conn()).await?;
    Ok(())
}
