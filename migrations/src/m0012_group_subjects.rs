//! Each session's groups with their subject, so every worker names a group in
//! its events the same way: learned from group metadata, updated when the
//! network says the subject changed.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum GroupSubjects {
    Table,
    ClientId,
    Jid,
    Subject,
    UpdatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use GroupSubjects as T;
        manager
            .create_table(
                Table::create()
                    .table(T::Table)
                    .if_not_exists()
                    .col(ColumnDef::new(T::ClientId).text().not_null())
                    .col(ColumnDef::new(T::Jid).text().not_null())
                    .col(ColumnDef::new(T::Subject).text().not_null())
                    .col(
                        ColumnDef::new(T::UpdatedAt)
                            .timestamp_with_time_zone()
                            .not_null()
                            .default(Expr::current_timestamp()),
                    )
                    .primary_key(Index::create().col(T::ClientId).col(T::Jid))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(GroupSubjects::Table).to_owned())
            .await
    }
}
