//! A session's own network proxy (`/set-proxy`): `proxy_url`, sealed at rest
//! like the webhook token (it may carry credentials); empty: the
//! deployment's proxy, or none.
use sea_orm_migration::prelude::*;

use crate::session_setting;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Sessions {
    ProxyUrl,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        session_setting::add(manager, Sessions::ProxyUrl).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        session_setting::drop(manager, Sessions::ProxyUrl).await
    }
}
