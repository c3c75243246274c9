//! The labels a simulated phone has before it links a device
//! (`POST /sandbox/history`'s `labels`): the new device learns them, and
//! the chats they are on, from the phone's app state at the link.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum SandboxHistory {
    Table,
    /// A JSON array of the route's checked labels.
    Labels,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use SandboxHistory as T;
        manager
            .alter_table(
                Table::alter()
                    .table(T::Table)
                    .add_column(ColumnDef::new(T::Labels).text().not_null().default("[]"))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use SandboxHistory as T;
        manager
            .alter_table(
                Table::alter()
                    .table(T::Table)
                    .drop_column(T::Labels)
                    .to_owned(),
            )
            .await
    }
}
