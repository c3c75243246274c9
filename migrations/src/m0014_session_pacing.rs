//! A session's outbound pacing (messages per minute and burst; null when its
//! sends are not paced). One column per statement: SQLite alters one at a time.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Sessions {
    Table,
    PacePerMinute,
    PaceBurst,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [Sessions::PacePerMinute, Sessions::PaceBurst] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Sessions::Table)
                        .add_column(ColumnDef::new(column).integer().null())
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [Sessions::PacePerMinute, Sessions::PaceBurst] {
            manager
                .alter_table(
                    Table::alter()
                        .table(Sessions::Table)
                        .drop_column(column)
                        .to_owned(),
                )
                .await?;
        }
        Ok(())
    }
}
