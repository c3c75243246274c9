//! One column added to or dropped from a table: what migrations that
//! change a table by a column share (SQLite alters one column at a time).
use sea_orm_migration::prelude::*;

/// Adds `column` to `table`.
pub async fn add(
    manager: &SchemaManager<'_>,
    table: impl IntoIden,
    mut column: ColumnDef,
) -> Result<(), DbErr> {
    manager
        .alter_table(
            Table::alter()
                .table(table)
                .add_column(&mut column)
                .to_owned(),
        )
        .await
}

/// Drops `column` from `table`.
pub async fn drop(
    manager: &SchemaManager<'_>,
    table: impl IntoIden,
    column: impl IntoIden,
) -> Result<(), DbErr> {
    manager
        .alter_table(Table::alter().table(table).drop_column(column).to_owned())
        .await
}
