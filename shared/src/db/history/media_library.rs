//! The media library: pages of a session's stored files, one file by id, and
//! the lookup by content that lets a file be stored once.

use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect};

use super::*;
use crate::db::entities::history::media_files;
use crate::db::{Db, DbError};

impl Db {
    /// One page (1-based) of a session's media library for one workspace, newest first.
    pub async fn media_files(
        &self,
        client_id: &str,
        org_id: &str,
        page: u64,
        limit: u64,
    ) -> Result<MediaPage, DbError> {
        let limit = limit.clamp(1, PAGE_LIMIT_MAX);
        let page = page.max(1);
        let base = media_files::Entity::find()
            .filter(media_files::Column::ClientId.eq(client_id))
            .filter(media_files::Column::OrgId.eq(org_id));
        let total = base.clone().count(self.conn()).await?;
        let files = base
            .order_by_desc(media_files::Column::CreatedAt)
            .order_by_desc(media_files::Column::Id)
            .offset((page - 1).saturating_mul(limit))
            .limit(limit)
            .all(self.conn())
            .await?
            .into_iter()
            .map(MediaFileRow::from)
            .collect();
        Ok(MediaPage { files, total })
    }

    /// A media-library record by its storage UUID.
    pub async fn media_file(&self, id: &str) -> Result<Option<MediaFileRow>, DbError> {
        Ok(media_files::Entity::find_by_id(id.to_string())
            .one(self.conn())
            .await?
            .map(MediaFileRow::from))
    }

    /// A file of the session with these bytes, stored before: `(storage_key, url)`.
    pub async fn media_by_sha256(
        &self,
        client_id: &str,
        sha256: &str,
    ) -> Result<Option<(String, String)>, DbError> {
        Ok(media_files::Entity::find()
            .select_only()
            .column(media_files::Column::StorageKey)
            .column(media_files::Column::Url)
            .filter(media_files::Column::ClientId.eq(client_id))
            .filter(media_files::Column::Sha256.eq(sha256))
            .into_tuple::<(String, String)>()
            .one(self.conn())
            .await?)
    }
}
