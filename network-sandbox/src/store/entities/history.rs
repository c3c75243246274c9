//! The `sandbox_history` entity: the chats a phone sends each device it
//! links, kept as the checked JSON of `POST /sandbox/history`.
use sea_orm::ActiveValue::Set;
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::OnConflict;

use parley_contract::wire::sandbox::SandboxPastMessage;
use parley_shared::db::{Db, DbError};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sandbox_history")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub phone: String,
    #[sea_orm(column_type = "Text")]
    pub messages: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

/// Replaces `phone`'s past with `messages`.
pub async fn set(db: &Db, phone: &str, messages: &[SandboxPastMessage]) -> Result<(), DbError> {
    let json = serde_json::to_string(messages)
        .map_err(|e| DbError::Unavailable(format!("sandbox history: {e}")))?;
    let row = ActiveModel {
        phone: Set(phone.to_string()),
        messages: Set(json),
    };
    Entity::insert(row)
        .on_conflict(
            OnConflict::column(Column::Phone)
                .update_column(Column::Messages)
                .to_owned(),
        )
        .exec_without_returning(db.conn())
        .await?;
    Ok(())
}

/// `phone`'s past, `None` when none was set.
pub async fn find(db: &Db, phone: &str) -> Result<Option<Vec<SandboxPastMessage>>, DbError> {
    let Some(row) = Entity::find_by_id(phone.to_string()).one(db.conn()).await? else {
        return Ok(None);
    };
    serde_json::from_str(&row.messages)
        .map(Some)
        .map_err(|e| DbError::Unavailable(format!("sandbox history of {phone}: {e}")))
}
