//! The simulated network's phones' past (`POST /sandbox/history`): the chats
//! each phone sends the devices it links (history sync), as JSON.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum SandboxHistory {
    Table,
    Phone,
    /// A JSON array of the route's checked messages.
    Messages,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use SandboxHistory as T;
        manager
            .create_table(
                Table::create()
                    .table(T::Table)
                    .if_not_exists()
                    .col(ColumnDef::new(T::Phone).text().not_null().primary_key())
                    .col(ColumnDef::new(T::Messages).text().not_null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(SandboxHistory::Table).to_owned())
            .await
    }
}
