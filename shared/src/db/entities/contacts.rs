//! The `contacts` entity: the LID <-> phone mapping (and display name) each
//! session learned, with the queries on it.
use chrono::Utc;
use sea_orm::ActiveValue::Set;
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::OnConflict;
use sea_orm::{QueryOrder, QuerySelect};

use crate::db::contacts::Contact;
use crate::db::{Db, DbError};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "contacts")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub client_id: String,
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub lid: String,
    #[sea_orm(column_type = "Text")]
    pub phone: String,
    #[sea_orm(column_type = "Text")]
    pub name: String,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl From<Model> for Contact {
    fn from(m: Model) -> Self {
        Contact {
            lid: m.lid,
            phone: m.phone,
            name: m.name,
            updated_at: m.updated_at,
        }
    }
}

/// Upserts `(client_id, lid)`; empty `phone` or `name` keep what is stored. A
/// phone moves to this LID: other LIDs of the session lose it.
pub async fn learn(
    db: &Db,
    client_id: &str,
    lid: &str,
    phone: &str,
    name: &str,
) -> Result<(), DbError> {
    if !phone.is_empty() {
        Entity::update_many()
            .col_expr(Column::Phone, Expr::value(""))
            .filter(Column::ClientId.eq(client_id))
            .filter(Column::Phone.eq(phone))
            .filter(Column::Lid.ne(lid))
            .exec(db.conn())
            .await?;
    }
    let row = ActiveModel {
        client_id: Set(client_id.to_string()),
        lid: Set(lid.to_string()),
        phone: Set(phone.to_string()),
        name: Set(name.to_string()),
        updated_at: Set(Utc::now()),
    };
    let mut update = vec![Column::UpdatedAt];
    if !phone.is_empty() {
        update.push(Column::Phone);
    }
    if !name.is_empty() {
        update.push(Column::Name);
    }
    Entity::insert(row)
        .on_conflict(
            OnConflict::columns([Column::ClientId, Column::Lid])
                .update_columns(update)
                .to_owned(),
        )
        .exec_without_returning(db.conn())
        .await?;
    Ok(())
}

pub async fn by_lid(db: &Db, client_id: &str, lid: &str) -> Result<Option<Contact>, DbError> {
    Ok(Entity::find_by_id((client_id.to_string(), lid.to_string()))
        .one(db.conn())
        .await?
        .map(Contact::from))
}

/// The contact holding `phone` (the most recently updated one, should two).
///
/// Read whole and picked here, not with `ORDER BY updated_at DESC LIMIT 1`:
/// SQLite planned that statement on its bound values and prepared it anew
/// at each run (each send looks its recipient up here), while a phone is
/// held by one contact, two at most for a moment.
pub async fn by_phone(db: &Db, client_id: &str, phone: &str) -> Result<Option<Contact>, DbError> {
    if phone.is_empty() {
        return Ok(None);
    }
    Ok(Entity::find()
        .filter(Column::ClientId.eq(client_id))
        .filter(Column::Phone.eq(phone))
        .all(db.conn())
        .await?
        .into_iter()
        .max_by_key(|c| c.updated_at)
        .map(Contact::from))
}

/// The learned contacts' queries, as methods of the database.
impl Db {
    /// Records what is known of a contact of `client_id`: its LID user-part,
    /// its phone digits (empty when not revealed) and name (empty when none).
    /// Empty values never erase stored ones. A phone belongs to one LID: when
    /// it moves, the previous LID forgets it.
    pub async fn learn_contact(
        &self,
        client_id: &str,
        lid: &str,
        phone: &str,
        name: &str,
    ) -> Result<(), DbError> {
        if lid.is_empty() {
            return Ok(());
        }
        learn(self, client_id, lid, phone, name).await
    }

    /// The LID user-part `client_id` learned for `phone`.
    pub async fn lid_for_phone(
        &self,
        client_id: &str,
        phone: &str,
    ) -> Result<Option<String>, DbError> {
        Ok(by_phone(self, client_id, phone).await?.map(|c| c.lid))
    }

    /// The phone digits `client_id` learned for `lid`.
    pub async fn phone_for_lid(
        &self,
        client_id: &str,
        lid: &str,
    ) -> Result<Option<String>, DbError> {
        Ok(by_lid(self, client_id, lid)
            .await?
            .map(|c| c.phone)
            .filter(|p| !p.is_empty()))
    }

    /// The LID user-parts of `client_id`'s contacts, the most recently
    /// learned or met first, at most `limit`.
    pub async fn contact_lids(&self, client_id: &str, limit: u64) -> Result<Vec<String>, DbError> {
        Ok(Entity::find()
            .filter(Column::ClientId.eq(client_id))
            .order_by_desc(Column::UpdatedAt)
            .limit(limit)
            .all(self.conn())
            .await?
            .into_iter()
            .map(|m| m.lid)
            .collect())
    }

    /// Everything `client_id` learned about `lid`.
    pub async fn contact(&self, client_id: &str, lid: &str) -> Result<Option<Contact>, DbError> {
        by_lid(self, client_id, lid).await
    }
}
