//! The simulated network's call privacy: who may call a phone's account
//! (`everyone`, or `contacts`: the accounts it wrote to, which hold a
//! privacy token it issued them).
use sea_orm_migration::prelude::*;

use crate::columns;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum SandboxPhones {
    Table,
    CallPrivacy,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let privacy = ColumnDef::new(SandboxPhones::CallPrivacy)
            .text()
            .not_null()
            .default("everyone")
            .to_owned();
        columns::add(manager, SandboxPhones::Table, privacy).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        columns::drop(manager, SandboxPhones::Table, SandboxPhones::CallPrivacy).await
    }
}
