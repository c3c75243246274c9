//! The `sessions` table: one row per session, settings and owner-written state.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Sessions {
    Table,
    ClientId,
    Status,
    PodName,
    Jid,
    Lid,
    WebhookUrl,
    WebhookToken,
    PollLookupUrl,
    OrgId,
    SecretHash,
    EnableGroupAi,
    Connected,
    LoggedIn,
    Reconnects,
    ConnectedAt,
    LastDisconnect,
    Desired,
    Fence,
    CreatedAt,
    UpdatedAt,
}

const DESIRED_INDEX: &str = "idx_sessions_desired";

/// A `text not null default ''` column.
fn text(col: Sessions) -> ColumnDef {
    ColumnDef::new(col).text().not_null().default("").take()
}

fn boolean(col: Sessions, default: bool) -> ColumnDef {
    ColumnDef::new(col)
        .boolean()
        .not_null()
        .default(default)
        .take()
}

fn big_integer(col: Sessions) -> ColumnDef {
    ColumnDef::new(col)
        .big_integer()
        .not_null()
        .default(0)
        .take()
}

fn timestamp(col: Sessions) -> ColumnDef {
    ColumnDef::new(col)
        .timestamp_with_time_zone()
        .not_null()
        .default(Expr::current_timestamp())
        .take()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Sessions::Table)
                    .if_not_exists()
                    .col(
                        ColumnDef::new(Sessions::ClientId)
                            .text()
                            .not_null()
                            .primary_key(),
                    )
                    .col(text(Sessions::Status))
                    .col(text(Sessions::PodName))
                    .col(text(Sessions::Jid))
                    .col(text(Sessions::Lid))
                    .col(text(Sessions::WebhookUrl))
                    .col(text(Sessions::WebhookToken))
                    .col(text(Sessions::PollLookupUrl))
                    .col(text(Sessions::OrgId))
                    .col(ColumnDef::new(Sessions::SecretHash).text().null())
                    .col(boolean(Sessions::EnableGroupAi, false))
                    .col(boolean(Sessions::Connected, false))
                    .col(boolean(Sessions::LoggedIn, false))
                    .col(big_integer(Sessions::Reconnects))
                    .col(
                        ColumnDef::new(Sessions::ConnectedAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .col(text(Sessions::LastDisconnect))
                    .col(boolean(Sessions::Desired, true))
                    .col(big_integer(Sessions::Fence))
                    .col(timestamp(Sessions::CreatedAt))
                    .col(timestamp(Sessions::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name(DESIRED_INDEX)
                    .table(Sessions::Table)
                    .col(Sessions::Desired)
                    .if_not_exists()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(Index::drop().name(DESIRED_INDEX).if_exists().to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(Sessions::Table).if_exists().to_owned())
            .await
    }
}
