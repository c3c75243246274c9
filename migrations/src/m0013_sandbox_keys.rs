//! The simulated network's own secrets (the key that signs its picture links),
//! kept in the database so every process of a deployment shares them.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum SandboxKeys {
    Table,
    Name,
    /// Hex.
    Value,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use SandboxKeys as T;
        manager
            .create_table(
                Table::create()
                    .table(T::Table)
                    .if_not_exists()
                    .col(ColumnDef::new(T::Name).text().not_null().primary_key())
                    .col(ColumnDef::new(T::Value).text().not_null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(SandboxKeys::Table).to_owned())
            .await
    }
}
