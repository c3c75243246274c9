//! The account's chat labels (app state `label_edit`) and the chats each is
//! on (`label_jid`), per session: what `GET /labels` lists and the hosted
//! inbox filters rooms by, kept as the session's devices change them.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Labels {
    Table,
    ClientId,
    LabelId,
    Name,
    Color,
}

#[derive(DeriveIden)]
enum ChatLabels {
    Table,
    ClientId,
    LabelId,
    Chat,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Labels::Table)
                    .if_not_exists()
                    .col(ColumnDef::new(Labels::ClientId).text().not_null())
                    .col(ColumnDef::new(Labels::LabelId).text().not_null())
                    .col(ColumnDef::new(Labels::Name).text().not_null())
                    .col(ColumnDef::new(Labels::Color).integer().not_null())
                    .primary_key(Index::create().col(Labels::ClientId).col(Labels::LabelId))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(ChatLabels::Table)
                    .if_not_exists()
                    .col(ColumnDef::new(ChatLabels::ClientId).text().not_null())
                    .col(ColumnDef::new(ChatLabels::LabelId).text().not_null())
                    .col(ColumnDef::new(ChatLabels::Chat).text().not_null())
                    .primary_key(
                        Index::create()
                            .col(ChatLabels::ClientId)
                            .col(ChatLabels::LabelId)
                            .col(ChatLabels::Chat),
                    )
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(ChatLabels::Table).to_owned())
            .await?;
        manager
            .drop_table(Table::drop().table(Labels::Table).to_owned())
            .await
    }
}
