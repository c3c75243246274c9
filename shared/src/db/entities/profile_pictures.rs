//! The `profile_pictures` entity: the last answer of the network about a
//! picture per session, JID and kind, and the mirrored copy of its version.
use sea_orm::ActiveValue::Set;
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::OnConflict;

use crate::db::contacts::CachedPicture;
use crate::db::{Db, DbError};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "profile_pictures")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub client_id: String,
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub jid: String,
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub kind: String,
    #[sea_orm(column_type = "Text")]
    pub picture_id: String,
    #[sea_orm(column_type = "Text")]
    pub url: String,
    #[sea_orm(column_type = "Text")]
    pub reason: String,
    #[sea_orm(column_type = "Text")]
    pub stored_picture_id: String,
    #[sea_orm(column_type = "Text")]
    pub stored_url: String,
    pub checked_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl From<Model> for CachedPicture {
    fn from(m: Model) -> Self {
        CachedPicture {
            jid: m.jid,
            kind: m.kind,
            picture_id: m.picture_id,
            url: m.url,
            reason: m.reason,
            stored_picture_id: m.stored_picture_id,
            stored_url: m.stored_url,
            checked_at: m.checked_at,
        }
    }
}

pub async fn find(
    db: &Db,
    client_id: &str,
    jid: &str,
    kind: &str,
) -> Result<Option<CachedPicture>, DbError> {
    Ok(
        Entity::find_by_id((client_id.to_string(), jid.to_string(), kind.to_string()))
            .one(db.conn())
            .await?
            .map(CachedPicture::from),
    )
}

/// Inserts or replaces the row of `(client_id, picture.jid, picture.kind)`.
pub async fn put(db: &Db, client_id: &str, picture: &CachedPicture) -> Result<(), DbError> {
    let row = ActiveModel {
        client_id: Set(client_id.to_string()),
        jid: Set(picture.jid.clone()),
        kind: Set(picture.kind.clone()),
        picture_id: Set(picture.picture_id.clone()),
        url: Set(picture.url.clone()),
        reason: Set(picture.reason.clone()),
        stored_picture_id: Set(picture.stored_picture_id.clone()),
        stored_url: Set(picture.stored_url.clone()),
        checked_at: Set(picture.checked_at),
    };
    Entity::insert(row)
        .on_conflict(
            OnConflict::columns([Column::ClientId, Column::Jid, Column::Kind])
                .update_columns([
                    Column::PictureId,
                    Column::Url,
                    Column::Reason,
                    Column::StoredPictureId,
                    Column::StoredUrl,
                    Column::CheckedAt,
                ])
                .to_owned(),
        )
        .exec_without_returning(db.conn())
        .await?;
    Ok(())
}

/// The picture cache's queries, as methods of the database.
impl Db {
    /// The cached picture of `jid` of kind `kind` for `client_id`.
    pub async fn cached_picture(
        &self,
        client_id: &str,
        jid: &str,
        kind: &str,
    ) -> Result<Option<CachedPicture>, DbError> {
        find(self, client_id, jid, kind).await
    }

    /// Stores (replacing) the cached picture `picture` for `client_id`.
    pub async fn cache_picture(
        &self,
        client_id: &str,
        picture: &CachedPicture,
    ) -> Result<(), DbError> {
        put(self, client_id, picture).await
    }
}
