//! The `group_subjects` entity: each session's groups with their subject.
use chrono::Utc;
use sea_orm::ActiveValue::Set;
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::OnConflict;

use crate::db::{Db, DbError};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "group_subjects")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub client_id: String,
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub jid: String,
    #[sea_orm(column_type = "Text")]
    pub subject: String,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

/// Stores (replacing) the subject of `jid` for `client_id`.
pub async fn put(db: &Db, client_id: &str, jid: &str, subject: &str) -> Result<(), DbError> {
    let row = ActiveModel {
        client_id: Set(client_id.to_string()),
        jid: Set(jid.to_string()),
        subject: Set(subject.to_string()),
        updated_at: Set(Utc::now()),
    };
    Entity::insert(row)
        .on_conflict(
            OnConflict::columns([Column::ClientId, Column::Jid])
                .update_columns([Column::Subject, Column::UpdatedAt])
                .to_owned(),
        )
        .exec_without_returning(db.conn())
        .await?;
    Ok(())
}

pub async fn find(db: &Db, client_id: &str, jid: &str) -> Result<Option<String>, DbError> {
    Ok(Entity::find_by_id((client_id.to_string(), jid.to_string()))
        .one(db.conn())
        .await?
        .map(|m| m.subject))
}
