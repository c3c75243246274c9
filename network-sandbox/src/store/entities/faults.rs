//! The `sandbox_faults` entity: how many of a session's next operations of a
//! kind the network makes fail.
use sea_orm::ActiveValue::Set;
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::{ExprTrait, OnConflict};

use parley_shared::db::{Db, DbError};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sandbox_faults")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub client_id: String,
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub op: String,
    pub remaining: i32,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

/// Sets the remaining count of `op` (0 deletes the row).
pub async fn arm(db: &Db, client_id: &str, op: &str, count: u32) -> Result<(), DbError> {
    if count == 0 {
        Entity::delete_by_id((client_id.to_string(), op.to_string()))
            .exec(db.conn())
            .await?;
        return Ok(());
    }
    let remaining = i32::try_from(count).unwrap_or(i32::MAX);
    let row = ActiveModel {
        client_id: Set(client_id.to_string()),
        op: Set(op.to_string()),
        remaining: Set(remaining),
    };
    Entity::insert(row)
        .on_conflict(
            OnConflict::columns([Column::ClientId, Column::Op])
                .update_column(Column::Remaining)
                .to_owned(),
        )
        .exec_without_returning(db.conn())
        .await?;
    Ok(())
}

/// `UPDATE ... SET remaining = remaining - 1 WHERE ... AND remaining > 0`, after
/// a read that skips the write when nothing is armed (every send asks).
pub async fn consume(db: &Db, client_id: &str, op: &str) -> Result<bool, DbError> {
    let armed = Entity::find()
        .filter(Column::ClientId.eq(client_id))
        .filter(Column::Op.eq(op))
        .filter(Column::Remaining.gt(0))
        .one(db.conn())
        .await?;
    if armed.is_none() {
        return Ok(false);
    }
    let res = Entity::update_many()
        .col_expr(Column::Remaining, Expr::col(Column::Remaining).sub(1))
        .filter(Column::ClientId.eq(client_id))
        .filter(Column::Op.eq(op))
        .filter(Column::Remaining.gt(0))
        .exec(db.conn())
        .await?;
    Ok(res.rows_affected == 1)
}

/// The `(client_id, op)` pairs with failures armed, among `client_ids`.
pub async fn armed_among(db: &Db, client_ids: &[&str]) -> Result<Vec<(String, String)>, DbError> {
    if client_ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows = Entity::find()
        .filter(Column::ClientId.is_in(client_ids.iter().copied()))
        .filter(Column::Remaining.gt(0))
        .all(db.conn())
        .await?;
    Ok(rows.into_iter().map(|r| (r.client_id, r.op)).collect())
}

pub async fn clear(db: &Db, client_id: &str) -> Result<(), DbError> {
    Entity::delete_many()
        .filter(Column::ClientId.eq(client_id))
        .exec(db.conn())
        .await?;
    Ok(())
}
