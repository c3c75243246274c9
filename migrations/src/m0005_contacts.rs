//! Contacts and groups: the LID <-> phone mapping each session learns, the
//! profile-picture cache with its mirrored copies, and the sandbox network's groups.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Contacts {
    Table,
    ClientId,
    Lid,
    Phone,
    Name,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum ProfilePictures {
    Table,
    ClientId,
    Jid,
    Kind,
    PictureId,
    Url,
    Reason,
    StoredPictureId,
    StoredUrl,
    CheckedAt,
}

#[derive(DeriveIden)]
enum SandboxGroups {
    Table,
    Jid,
    Subject,
    OwnerPhone,
    InviteCode,
    CreatedAt,
}

#[derive(DeriveIden)]
enum SandboxGroupMembers {
    Table,
    GroupJid,
    Phone,
    Role,
}

const CONTACTS_PHONE_INDEX: &str = "idx_contacts_client_id_phone";

fn key_text(col: impl IntoIden) -> ColumnDef {
    ColumnDef::new(col).text().not_null().take()
}

/// A `text not null default ''` column.
fn text(col: impl IntoIden) -> ColumnDef {
    ColumnDef::new(col).text().not_null().default("").take()
}

fn timestamp(col: impl IntoIden) -> ColumnDef {
    ColumnDef::new(col)
        .timestamp_with_time_zone()
        .not_null()
        .default(Expr::current_timestamp())
        .take()
}

fn contacts() -> TableCreateStatement {
    Table::create()
        .table(Contacts::Table)
        .if_not_exists()
        .col(key_text(Contacts::ClientId))
        .col(key_text(Contacts::Lid))
        .col(text(Contacts::Phone))
        .col(text(Contacts::Name))
        .col(timestamp(Contacts::UpdatedAt))
        .primary_key(Index::create().col(Contacts::ClientId).col(Contacts::Lid))
        .to_owned()
}

fn profile_pictures() -> TableCreateStatement {
    Table::create()
        .table(ProfilePictures::Table)
        .if_not_exists()
        .col(key_text(ProfilePictures::ClientId))
        .col(key_text(ProfilePictures::Jid))
        .col(key_text(ProfilePictures::Kind))
        .col(text(ProfilePictures::PictureId))
        .col(text(ProfilePictures::Url))
        .col(text(ProfilePictures::Reason))
        .col(text(ProfilePictures::StoredPictureId))
        .col(text(ProfilePictures::StoredUrl))
        .col(timestamp(ProfilePictures::CheckedAt))
        .primary_key(
            Index::create()
                .col(ProfilePictures::ClientId)
                .col(ProfilePictures::Jid)
                .col(ProfilePictures::Kind),
        )
        .to_owned()
}

fn sandbox_groups() -> TableCreateStatement {
    Table::create()
        .table(SandboxGroups::Table)
        .if_not_exists()
        .col(key_text(SandboxGroups::Jid).primary_key())
        .col(text(SandboxGroups::Subject))
        .col(text(SandboxGroups::OwnerPhone))
        .col(text(SandboxGroups::InviteCode))
        .col(timestamp(SandboxGroups::CreatedAt))
        .to_owned()
}

fn sandbox_group_members() -> TableCreateStatement {
    Table::create()
        .table(SandboxGroupMembers::Table)
        .if_not_exists()
        .col(key_text(SandboxGroupMembers::GroupJid))
        .col(key_text(SandboxGroupMembers::Phone))
        .col(
            ColumnDef::new(SandboxGroupMembers::Role)
                .text()
                .not_null()
                .default("member"),
        )
        .primary_key(
            Index::create()
                .col(SandboxGroupMembers::GroupJid)
                .col(SandboxGroupMembers::Phone),
        )
        .to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            contacts(),
            profile_pictures(),
            sandbox_groups(),
            sandbox_group_members(),
        ] {
            manager.create_table(table).await?;
        }
        manager
            .create_index(
                Index::create()
                    .name(CONTACTS_PHONE_INDEX)
                    .table(Contacts::Table)
                    .col(Contacts::ClientId)
                    .col(Contacts::Phone)
                    .if_not_exists()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .drop_index(
                Index::drop()
                    .name(CONTACTS_PHONE_INDEX)
                    .if_exists()
                    .to_owned(),
            )
            .await?;
        for table in [
            Contacts::Table.into_iden(),
            ProfilePictures::Table.into_iden(),
            SandboxGroups::Table.into_iden(),
            SandboxGroupMembers::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).if_exists().to_owned())
                .await?;
        }
        Ok(())
    }
}
