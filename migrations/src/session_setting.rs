//! A session's setting in a text column of its own (`sessions.<column>`, not
//! null, empty by default): what migrations that add one share.
use sea_orm_migration::prelude::*;

#[derive(DeriveIden)]
enum Sessions {
    Table,
}

/// Adds `column`.
pub async fn add(manager: &SchemaManager<'_>, column: impl IntoIden) -> Result<(), DbErr> {
    manager
        .alter_table(
            Table::alter()
                .table(Sessions::Table)
                .add_column(ColumnDef::new(column).text().not_null().default(""))
                .to_owned(),
        )
        .await
}

/// Drops `column`.
pub async fn drop(manager: &SchemaManager<'_>, column: impl IntoIden) -> Result<(), DbErr> {
    manager
        .alter_table(
            Table::alter()
                .table(Sessions::Table)
                .drop_column(column)
                .to_owned(),
        )
        .await
}
