//! The `sandbox_history` entity: the chats a phone sends each device it
//! links and the labels its app state carries, kept as the checked JSON of
//! `POST /sandbox/history`.
use sea_orm::ActiveValue::Set;
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::OnConflict;

use parley_contract::wire::sandbox::SandboxHistory;
use parley_shared::db::{Db, DbError};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sandbox_history")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub phone: String,
    #[sea_orm(column_type = "Text")]
    pub messages: String,
    #[sea_orm(column_type = "Text")]
    pub labels: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

/// Replaces the past of `past.phone` (checked).
pub async fn set(db: &Db, past: &SandboxHistory) -> Result<(), DbError> {
    let row = ActiveModel {
        phone: Set(past.phone.clone()),
        messages: Set(json(&past.messages)?),
        labels: Set(json(&past.labels)?),
    };
    Entity::insert(row)
        .on_conflict(
            OnConflict::column(Column::Phone)
                .update_columns([Column::Messages, Column::Labels])
                .to_owned(),
        )
        .exec_without_returning(db.conn())
        .await?;
    Ok(())
}

/// `phone`'s past, `None` when none was set.
pub async fn find(db: &Db, phone: &str) -> Result<Option<SandboxHistory>, DbError> {
    let Some(row) = Entity::find_by_id(phone.to_string()).one(db.conn()).await? else {
        return Ok(None);
    };
    let bad =
        |e: serde_json::Error| DbError::Unavailable(format!("sandbox history of {phone}: {e}"));
    Ok(Some(SandboxHistory {
        messages: serde_json::from_str(&row.messages).map_err(bad)?,
        labels: serde_json::from_str(&row.labels).map_err(bad)?,
        phone: row.phone,
    }))
}

fn json(value: &impl serde::Serialize) -> Result<String, DbError> {
    serde_json::to_string(value).map_err(|e| DbError::Unavailable(format!("sandbox history: {e}")))
}
