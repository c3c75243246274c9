//! The `sandbox_keys` entity: the simulated network's own secrets by name.
use sea_orm::ActiveValue::Set;
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::OnConflict;

use parley_shared::db::{Db, DbError};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sandbox_keys")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub name: String,
    #[sea_orm(column_type = "Text")]
    pub value: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

/// The key `name`, made from `fresh` by the first caller of any process; every
/// later caller reads the same one.
pub async fn get_or_create(db: &Db, name: &str, fresh: &str) -> Result<String, DbError> {
    let row = ActiveModel {
        name: Set(name.to_string()),
        value: Set(fresh.to_string()),
    };
    Entity::insert(row)
        .on_conflict(OnConflict::column(Column::Name).do_nothing().to_owned())
        .exec_without_returning(db.conn())
        .await?;
    let stored = Entity::find_by_id(name.to_string())
        .one(db.conn())
        .await?
        .ok_or_else(|| DbError::Unavailable(format!("sandbox key {name} not readable")))?;
    Ok(stored.value)
}
