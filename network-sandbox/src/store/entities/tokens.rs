//! The `sandbox_tokens` entity: the privacy tokens of the simulated network.
//! A phone that writes to another issues it one (as the clients do after a
//! 1:1 message); a picture for the issuer's contacts only is shown to the
//! phones holding one. Tokens do not expire here (the wire-level test
//! network models their window).
use chrono::Utc;
use sea_orm::ActiveValue::Set;
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::OnConflict;

use parley_shared::db::{Db, DbError};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sandbox_tokens")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub issuer: String,
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub holder: String,
    pub issued_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

/// `issuer` issues `holder` a token (again: a newer one).
pub async fn issue(db: &Db, issuer: &str, holder: &str) -> Result<(), DbError> {
    Entity::insert(ActiveModel {
        issuer: Set(issuer.to_string()),
        holder: Set(holder.to_string()),
        issued_at: Set(Utc::now()),
    })
    .on_conflict(
        OnConflict::columns([Column::Issuer, Column::Holder])
            .update_column(Column::IssuedAt)
            .to_owned(),
    )
    .exec_without_returning(db.conn())
    .await?;
    Ok(())
}

/// Whether `holder` holds a token `issuer` issued it.
pub async fn holds(db: &Db, issuer: &str, holder: &str) -> Result<bool, DbError> {
    Ok(Entity::find_by_id((issuer.to_string(), holder.to_string()))
        .one(db.conn())
        .await?
        .is_some())
}
