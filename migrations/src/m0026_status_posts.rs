//! The status updates each session posted in the last day, with their
//! audience: deleting one (`/delete-status`) is encrypted to the same
//! devices, by whichever worker owns the session then.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum StatusPosts {
    Table,
    ClientId,
    MessageId,
    Audience,
    PostedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use StatusPosts as T;
        manager
            .create_table(
                Table::create()
                    .table(T::Table)
                    .if_not_exists()
                    .col(ColumnDef::new(T::ClientId).text().not_null())
                    .col(ColumnDef::new(T::MessageId).text().not_null())
                    .col(ColumnDef::new(T::Audience).text().not_null())
                    .col(
                        ColumnDef::new(T::PostedAt)
                            .timestamp_with_time_zone()
                            .not_null(),
                    )
                    .primary_key(Index::create().col(T::ClientId).col(T::MessageId))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(StatusPosts::Table).to_owned())
            .await
    }
}
