//! The sandbox network's outbox: everything a session put on the simulated
//! network (messages, reactions, edits, deletes, typing, receipts), in order.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum SandboxOutbox {
    Table,
    Id,
    ClientId,
    MessageId,
    ToJid,
    Kind,
    Payload,
    At,
}

const CLIENT_INDEX: &str = "idx_sandbox_outbox_client_id";
const MESSAGE_INDEX: &str = "idx_sandbox_outbox_message_id";

fn text(col: SandboxOutbox) -> ColumnDef {
    ColumnDef::new(col).text().not_null().default("").take()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(SandboxOutbox::Table)
                    .if_not_exists()
                    .col(
                        ColumnDef::new(SandboxOutbox::Id)
                            .big_integer()
                            .not_null()
                            .auto_increment()
                            .primary_key(),
                    )
                    .col(text(SandboxOutbox::ClientId))
                    .col(text(SandboxOutbox::MessageId))
                    .col(text(SandboxOutbox::ToJid))
                    .col(text(SandboxOutbox::Kind))
                    .col(
                        ColumnDef::new(SandboxOutbox::Payload)
                            .text()
                            .not_null()
                            .default("{}"),
                    )
                    .col(
                        ColumnDef::new(SandboxOutbox::At)
                            .timestamp_with_time_zone()
                            .not_null()
                            .default(Expr::current_timestamp()),
                    )
                    .to_owned(),
            )
            .await?;
        for (name, cols) in [
            (CLIENT_INDEX, [SandboxOutbox::ClientId, SandboxOutbox::Id]),
            (
                MESSAGE_INDEX,
                [SandboxOutbox::ClientId, SandboxOutbox::MessageId],
            ),
        ] {
            let mut index = Index::create();
            index.name(name).table(SandboxOutbox::Table).if_not_exists();
            for col in cols {
                index.col(col);
            }
            manager.create_index(index.to_owned()).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for index in [CLIENT_INDEX, MESSAGE_INDEX] {
            manager
                .drop_index(Index::drop().name(index).if_exists().to_owned())
                .await?;
        }
        manager
            .drop_table(
                Table::drop()
                    .table(SandboxOutbox::Table)
                    .if_exists()
                    .to_owned(),
            )
            .await
    }
}
