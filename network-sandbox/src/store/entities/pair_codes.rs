//! The `sandbox_pair_codes` entity: the pairing code a session asked for, until
//! the phone enters it or it expires.
use std::time::Duration;

use chrono::Utc;
use sea_orm::ActiveValue::Set;
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::OnConflict;

use parley_shared::db::{Db, DbError};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sandbox_pair_codes")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub client_id: String,
    #[sea_orm(column_type = "Text")]
    pub phone: String,
    #[sea_orm(column_type = "Text")]
    pub code: String,
    pub issued_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

/// Upserts the session's pending code.
pub async fn set(db: &Db, client_id: &str, phone: &str, code: &str) -> Result<(), DbError> {
    let row = ActiveModel {
        client_id: Set(client_id.to_string()),
        phone: Set(phone.to_string()),
        code: Set(code.to_string()),
        issued_at: Set(Utc::now()),
    };
    Entity::insert(row)
        .on_conflict(
            OnConflict::column(Column::ClientId)
                .update_columns([Column::Phone, Column::Code, Column::IssuedAt])
                .to_owned(),
        )
        .exec_without_returning(db.conn())
        .await?;
    Ok(())
}

/// Deletes the pending code when it is `code` and fresh (one taker wins);
/// an expired code is deleted and refused.
pub async fn take(
    db: &Db,
    client_id: &str,
    code: &str,
    max_age: Duration,
) -> Result<Option<String>, DbError> {
    let Some(pending) = Entity::find_by_id(client_id).one(db.conn()).await? else {
        return Ok(None);
    };
    let age = Utc::now().signed_duration_since(pending.issued_at);
    let expired = age.to_std().is_ok_and(|age| age > max_age);
    if expired {
        delete_code(db, client_id, &pending.code).await?;
        return Ok(None);
    }
    if pending.code != code || !delete_code(db, client_id, code).await? {
        return Ok(None);
    }
    Ok(Some(pending.phone))
}

async fn delete_code(db: &Db, client_id: &str, code: &str) -> Result<bool, DbError> {
    let res = Entity::delete_many()
        .filter(Column::ClientId.eq(client_id))
        .filter(Column::Code.eq(code))
        .exec(db.conn())
        .await?;
    Ok(res.rows_affected == 1)
}

pub async fn clear(db: &Db, client_id: &str) -> Result<(), DbError> {
    Entity::delete_by_id(client_id).exec(db.conn()).await?;
    Ok(())
}
