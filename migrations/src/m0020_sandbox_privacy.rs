//! The simulated network's privacy: each group's own settings
//! (`/sandbox/groups/settings`: description, announcement and locked mode,
//! disappearing messages) as a JSON object (`{}`: none set); who a phone
//! shows its picture to (`everyone`, or `contacts`: the phones holding a
//! privacy token it issued them); and those tokens: a phone that writes to
//! another issues it one.
use sea_orm_migration::prelude::*;

use crate::columns::{add, drop as drop_column};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum SandboxGroups {
    Table,
    Settings,
}

#[derive(DeriveIden)]
enum SandboxPhones {
    Table,
    AvatarPrivacy,
}

#[derive(DeriveIden)]
enum SandboxTokens {
    Table,
    Issuer,
    Holder,
    IssuedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let settings = ColumnDef::new(SandboxGroups::Settings)
            .text()
            .not_null()
            .default("{}")
            .to_owned();
        add(manager, SandboxGroups::Table, settings).await?;
        let privacy = ColumnDef::new(SandboxPhones::AvatarPrivacy)
            .text()
            .not_null()
            .default("everyone")
            .to_owned();
        add(manager, SandboxPhones::Table, privacy).await?;
        use SandboxTokens as T;
        manager
            .create_table(
                Table::create()
                    .table(T::Table)
                    .if_not_exists()
                    .col(ColumnDef::new(T::Issuer).text().not_null())
                    .col(ColumnDef::new(T::Holder).text().not_null())
                    .col(
                        ColumnDef::new(T::IssuedAt)
                            .timestamp_with_time_zone()
                            .not_null(),
                    )
                    .primary_key(Index::create().col(T::Issuer).col(T::Holder))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_table(Table::drop().table(SandboxTokens::Table).to_owned())
            .await?;
        drop_column(manager, SandboxPhones::Table, SandboxPhones::AvatarPrivacy).await?;
        drop_column(manager, SandboxGroups::Table, SandboxGroups::Settings).await
    }
}
