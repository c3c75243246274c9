//! The event types a session's webhook takes (`/set-webhook-types`): the
//! names, comma-separated; empty, the default, takes every type. Events of
//! the others are logged as not selected.
use sea_orm_migration::prelude::*;

use crate::session_setting;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Sessions {
    WebhookTypes,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        session_setting::add(manager, Sessions::WebhookTypes).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        session_setting::drop(manager, Sessions::WebhookTypes).await
    }
}
