//! The event log of `serve` and its delivery state: every event of a session,
//! numbered by a per-session `seq` that the owner allocates from the session's
//! row under its lease fence (`sessions.event_seq`), with its sealed body and
//! how its delivery stands (state, attempts, last status and time).
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Sessions {
    Table,
    EventSeq,
}

#[derive(DeriveIden)]
enum Events {
    Table,
    ClientId,
    Seq,
    EventId,
    Kind,
    Body,
    State,
    Attempts,
    LastStatus,
    LastAttemptAt,
    CreatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use Events as T;
        manager
            .alter_table(
                Table::alter()
                    .table(Sessions::Table)
                    .add_column(
                        ColumnDef::new(Sessions::EventSeq)
                            .big_integer()
                            .not_null()
                            .default(0),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(T::Table)
                    .if_not_exists()
                    .col(ColumnDef::new(T::ClientId).text().not_null())
                    .col(ColumnDef::new(T::Seq).big_integer().not_null())
                    .col(ColumnDef::new(T::EventId).text().not_null().unique_key())
                    .col(ColumnDef::new(T::Kind).text().not_null())
                    .col(ColumnDef::new(T::Body).blob().not_null())
                    .col(ColumnDef::new(T::State).text().not_null())
                    .col(ColumnDef::new(T::Attempts).integer().not_null().default(0))
                    .col(ColumnDef::new(T::LastStatus).integer().null())
                    .col(
                        ColumnDef::new(T::LastAttemptAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .col(
                        ColumnDef::new(T::CreatedAt)
                            .timestamp_with_time_zone()
                            .not_null(),
                    )
                    .primary_key(Index::create().col(T::ClientId).col(T::Seq))
                    .to_owned(),
            )
            .await?;
        // Dead letters and pending deliveries of a session, in order.
        manager
            .create_index(
                Index::create()
                    .name("events_state")
                    .table(T::Table)
                    .col(T::ClientId)
                    .col(T::State)
                    .col(T::Seq)
                    .to_owned(),
            )
            .await?;
        // Retention sweeps by age.
        manager
            .create_index(
                Index::create()
                    .name("events_created")
                    .table(T::Table)
                    .col(T::CreatedAt)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(Events::Table).to_owned())
            .await?;
        manager
            .alter_table(
                Table::alter()
                    .table(Sessions::Table)
                    .drop_column(Sessions::EventSeq)
                    .to_owned(),
            )
            .await
    }
}
