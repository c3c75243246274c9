//! Each session's recent state changes (status, connected, the reason, the
//! owning pod), written with the owner's fenced state updates; the newest 50
//! of a session are kept, and they go with the session. Also the partial index
//! that counts the cluster's open events.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum SessionStates {
    Table,
    Id,
    ClientId,
    At,
    Status,
    Connected,
    Reason,
    PodName,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use SessionStates as T;
        manager
            .create_table(
                Table::create()
                    .table(T::Table)
                    .if_not_exists()
                    .col(
                        ColumnDef::new(T::Id)
                            .big_integer()
                            .not_null()
                            .auto_increment()
                            .primary_key(),
                    )
                    .col(ColumnDef::new(T::ClientId).text().not_null())
                    .col(ColumnDef::new(T::At).timestamp_with_time_zone().not_null())
                    .col(ColumnDef::new(T::Status).text().not_null())
                    .col(ColumnDef::new(T::Connected).boolean().not_null())
                    .col(ColumnDef::new(T::Reason).text().not_null())
                    .col(ColumnDef::new(T::PodName).text().not_null())
                    .to_owned(),
            )
            .await?;
        // A session's changes, newest first; and the cluster's recent ones.
        manager
            .create_index(
                Index::create()
                    .name("session_states_client")
                    .table(T::Table)
                    .col(T::ClientId)
                    .col(T::Id)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("session_states_at")
                    .table(T::Table)
                    .col(T::At)
                    .to_owned(),
            )
            .await?;
        // The cluster's events that still need something (pending) or someone
        // (dead letters), counted without reading the delivered ones: a
        // partial index (PostgreSQL and SQLite), which the cluster summary's
        // query names with the same predicate.
        manager
            .get_connection()
            .execute_unprepared(
                "CREATE INDEX IF NOT EXISTS events_open ON events (state) \
                 WHERE state IN ('pending', 'rejected', 'dead')",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared("DROP INDEX IF EXISTS events_open")
            .await?;
        manager
            .drop_table(Table::drop().table(SessionStates::Table).to_owned())
            .await
    }
}
