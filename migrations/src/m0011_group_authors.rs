//! The real network adapter's memory of who wrote the group messages a session
//! received: a reaction, a read receipt or a quote of another member's message
//! must name its author, and the API names only the message. Kept with the
//! device state so it survives a session's move to another worker.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum WaGroupAuthors {
    Table,
    ClientId,
    Chat,
    MessageId,
    Author,
    /// Unix seconds; old rows are pruned.
    NotedAt,
}

const NOTED_INDEX: &str = "idx_wa_group_authors_noted";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use WaGroupAuthors as T;
        manager
            .create_table(
                Table::create()
                    .table(T::Table)
                    .if_not_exists()
                    .col(ColumnDef::new(T::ClientId).text().not_null())
                    .col(ColumnDef::new(T::Chat).text().not_null())
                    .col(ColumnDef::new(T::MessageId).text().not_null())
                    .col(ColumnDef::new(T::Author).text().not_null())
                    .col(ColumnDef::new(T::NotedAt).big_integer().not_null())
                    .primary_key(
                        Index::create()
                            .col(T::ClientId)
                            .col(T::Chat)
                            .col(T::MessageId),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name(NOTED_INDEX)
                    .table(T::Table)
                    .col(T::ClientId)
                    .col(T::NotedAt)
                    .if_not_exists()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(WaGroupAuthors::Table).to_owned())
            .await
    }
}
