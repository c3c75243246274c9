//! The sandbox network's CDN: files of simulated inbound media messages, kept
//! encrypted with their media key as the real network keeps them.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum SandboxMedia {
    Table,
    DirectPath,
    ClientId,
    Data,
    CreatedAt,
}

const CLIENT_INDEX: &str = "idx_sandbox_media_client_id";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(SandboxMedia::Table)
                    .if_not_exists()
                    .col(
                        ColumnDef::new(SandboxMedia::DirectPath)
                            .text()
                            .not_null()
                            .primary_key(),
                    )
                    .col(
                        ColumnDef::new(SandboxMedia::ClientId)
                            .text()
                            .not_null()
                            .default(""),
                    )
                    .col(ColumnDef::new(SandboxMedia::Data).blob().not_null())
                    .col(
                        ColumnDef::new(SandboxMedia::CreatedAt)
                            .timestamp_with_time_zone()
                            .not_null()
                            .default(Expr::current_timestamp()),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name(CLIENT_INDEX)
                    .table(SandboxMedia::Table)
                    .col(SandboxMedia::ClientId)
                    .if_not_exists()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name(CLIENT_INDEX)
                    .table(SandboxMedia::Table)
                    .to_owned(),
            )
            .await?;
        manager
            .drop_table(Table::drop().table(SandboxMedia::Table).to_owned())
            .await
    }
}
