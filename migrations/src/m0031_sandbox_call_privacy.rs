//! The simulated network's call privacy: who may call a phone's account
//! (`everyone`, or `contacts`: the accounts it wrote to, which hold a
//! privacy token it issued them).
use sea_orm_migration::prelude::*;

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
        let mut privacy = ColumnDef::new(SandboxPhones::CallPrivacy)
            .text()
            .not_null()
            .default("everyone")
            .to_owned();
        manager
            .alter_table(
                Table::alter()
                    .table(SandboxPhones::Table)
                    .add_column(&mut privacy)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter()
                    .table(SandboxPhones::Table)
                    .drop_column(SandboxPhones::CallPrivacy)
                    .to_owned(),
            )
            .await
    }
}
