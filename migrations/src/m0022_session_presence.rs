//! The presence a session set (`/set-presence`): `available` or
//! `unavailable`, said again after every reconnect; empty, the default,
//! leaves it to the network's client.
use sea_orm_migration::prelude::*;

use crate::session_setting;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Sessions {
    Presence,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        session_setting::add(manager, Sessions::Presence).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        session_setting::drop(manager, Sessions::Presence).await
    }
}
