//! A session's setting in a column of its own (`sessions.<column>`, not
//! null: a text empty by default, or a flag false by default): what
//! migrations that add one share.
use sea_orm_migration::prelude::*;

#[derive(DeriveIden)]
enum Sessions {
    Table,
}

/// Adds the text column `column`.
pub async fn add(manager: &SchemaManager<'_>, column: impl IntoIden) -> Result<(), DbErr> {
    add_column(
        manager,
        ColumnDef::new(column).text().not_null().default(""),
    )
    .await
}

/// Adds the flag `column`.
pub async fn add_flag(manager: &SchemaManager<'_>, column: impl IntoIden) -> Result<(), DbErr> {
    add_column(
        manager,
        ColumnDef::new(column).boolean().not_null().default(false),
    )
    .await
}

async fn add_column(manager: &SchemaManager<'_>, column: &mut ColumnDef) -> Result<(), DbErr> {
    crate::columns::add(manager, Sessions::Table, column.to_owned()).await
}

/// Drops `column`.
pub async fn drop(manager: &SchemaManager<'_>, column: impl IntoIden) -> Result<(), DbErr> {
    crate::columns::drop(manager, Sessions::Table, column).await
}
