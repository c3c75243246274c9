//! The `status_posts` entity: a session's status updates of the last day
//! with the JIDs they were shown to (comma-separated).
use chrono::{Duration, Utc};
use sea_orm::ActiveValue::Set;
use sea_orm::entity::prelude::*;

use crate::db::{Db, DbError};

/// How long a status stays up on the network, and so is remembered.
pub const STATUS_LIFETIME_HOURS: i64 = 24;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "status_posts")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub client_id: String,
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub message_id: String,
    #[sea_orm(column_type = "Text")]
    pub audience: String,
    pub posted_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

fn oldest_kept() -> chrono::DateTime<Utc> {
    Utc::now() - Duration::hours(STATUS_LIFETIME_HOURS)
}

/// Remembers status `message_id` of `client_id` shown to `audience`, and
/// forgets the session's statuses that expired.
pub async fn put(
    db: &Db,
    client_id: &str,
    message_id: &str,
    audience: &[String],
) -> Result<(), DbError> {
    Entity::delete_many()
        .filter(Column::ClientId.eq(client_id))
        .filter(Column::PostedAt.lt(oldest_kept()))
        .exec(db.conn())
        .await?;
    let row = ActiveModel {
        client_id: Set(client_id.to_string()),
        message_id: Set(message_id.to_string()),
        audience: Set(audience.join(",")),
        posted_at: Set(Utc::now()),
    };
    Entity::insert(row)
        .on_conflict_do_nothing()
        .exec_without_returning(db.conn())
        .await?;
    Ok(())
}

/// The audience of status `message_id` of `client_id`, while it is up.
pub async fn audience(
    db: &Db,
    client_id: &str,
    message_id: &str,
) -> Result<Option<Vec<String>>, DbError> {
    Ok(
        Entity::find_by_id((client_id.to_string(), message_id.to_string()))
            .filter(Column::PostedAt.gte(oldest_kept()))
            .one(db.conn())
            .await?
            .map(|m| m.audience.split(',').map(str::to_string).collect()),
    )
}

/// Forgets status `message_id` of `client_id` (deleted).
pub async fn forget(db: &Db, client_id: &str, message_id: &str) -> Result<(), DbError> {
    Entity::delete_by_id((client_id.to_string(), message_id.to_string()))
        .exec(db.conn())
        .await?;
    Ok(())
}

/// Forgets every status of `client_id` (the session is deleted).
pub async fn purge(db: &impl ConnectionTrait, client_id: &str) -> Result<(), DbError> {
    Entity::delete_many()
        .filter(Column::ClientId.eq(client_id))
        .exec(db)
        .await?;
    Ok(())
}
