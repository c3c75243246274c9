//! One row the gateway writes to learn whether the database has room again
//! after it found its disk full (`Db::has_room`): a send asks first instead
//! of leaving for the network with nowhere to log it.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum StorageProbe {
    Table,
    Id,
    WrittenAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use StorageProbe as T;
        manager
            .create_table(
                Table::create()
                    .table(T::Table)
                    .if_not_exists()
                    .col(ColumnDef::new(T::Id).integer().not_null().primary_key())
                    .col(ColumnDef::new(T::WrittenAt).big_integer().not_null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(StorageProbe::Table).to_owned())
            .await
    }
}
