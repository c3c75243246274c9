//! The sandbox network's tables: simulated phones, linked devices, QR and pairing
//! codes, armed faults and the network's log of connections.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum SandboxPhones {
    Table,
    Phone,
    Lid,
    Name,
    Username,
    OnNetwork,
    Avatar,
    About,
    PictureId,
    Links,
    CreatedAt,
}

#[derive(DeriveIden)]
enum SandboxDevices {
    Table,
    ClientId,
    Phone,
    Device,
    Jid,
    Lid,
    PushName,
    Fence,
    LinkedAt,
}

#[derive(DeriveIden)]
enum SandboxQr {
    Table,
    ClientId,
    Code,
    IssuedAt,
}

#[derive(DeriveIden)]
enum SandboxPairCodes {
    Table,
    ClientId,
    Phone,
    Code,
    IssuedAt,
}

#[derive(DeriveIden)]
enum SandboxFaults {
    Table,
    ClientId,
    Op,
    Remaining,
}

#[derive(DeriveIden)]
enum SandboxConnections {
    Table,
    Id,
    ClientId,
    PodName,
    Fence,
    ConnectedAt,
    ClosedAt,
}

const QR_CODE_INDEX: &str = "idx_sandbox_qr_code";
const CONNECTIONS_CLIENT_INDEX: &str = "idx_sandbox_connections_client_id";

/// A `text not null` primary key column.
fn key(col: impl IntoIden) -> ColumnDef {
    ColumnDef::new(col).text().not_null().primary_key().take()
}

/// A `text not null default ''` column.
fn text(col: impl IntoIden) -> ColumnDef {
    ColumnDef::new(col).text().not_null().default("").take()
}

fn big_integer(col: impl IntoIden) -> ColumnDef {
    ColumnDef::new(col)
        .big_integer()
        .not_null()
        .default(0)
        .take()
}

fn timestamp(col: impl IntoIden) -> ColumnDef {
    ColumnDef::new(col)
        .timestamp_with_time_zone()
        .not_null()
        .default(Expr::current_timestamp())
        .take()
}

fn phones() -> TableCreateStatement {
    Table::create()
        .table(SandboxPhones::Table)
        .if_not_exists()
        .col(key(SandboxPhones::Phone))
        .col(
            ColumnDef::new(SandboxPhones::Lid)
                .text()
                .not_null()
                .unique_key(),
        )
        .col(text(SandboxPhones::Name))
        .col(text(SandboxPhones::Username))
        .col(
            ColumnDef::new(SandboxPhones::OnNetwork)
                .boolean()
                .not_null()
                .default(true),
        )
        .col(
            ColumnDef::new(SandboxPhones::Avatar)
                .text()
                .not_null()
                .default("none"),
        )
        .col(text(SandboxPhones::About))
        .col(text(SandboxPhones::PictureId))
        .col(big_integer(SandboxPhones::Links))
        .col(timestamp(SandboxPhones::CreatedAt))
        .to_owned()
}

fn devices() -> TableCreateStatement {
    Table::create()
        .table(SandboxDevices::Table)
        .if_not_exists()
        .col(key(SandboxDevices::ClientId))
        .col(text(SandboxDevices::Phone))
        .col(
            ColumnDef::new(SandboxDevices::Device)
                .integer()
                .not_null()
                .default(1),
        )
        .col(text(SandboxDevices::Jid))
        .col(text(SandboxDevices::Lid))
        .col(text(SandboxDevices::PushName))
        .col(big_integer(SandboxDevices::Fence))
        .col(timestamp(SandboxDevices::LinkedAt))
        .to_owned()
}

fn qr() -> TableCreateStatement {
    Table::create()
        .table(SandboxQr::Table)
        .if_not_exists()
        .col(key(SandboxQr::ClientId))
        .col(ColumnDef::new(SandboxQr::Code).text().not_null())
        .col(timestamp(SandboxQr::IssuedAt))
        .to_owned()
}

fn pair_codes() -> TableCreateStatement {
    Table::create()
        .table(SandboxPairCodes::Table)
        .if_not_exists()
        .col(key(SandboxPairCodes::ClientId))
        .col(text(SandboxPairCodes::Phone))
        .col(text(SandboxPairCodes::Code))
        .col(timestamp(SandboxPairCodes::IssuedAt))
        .to_owned()
}

fn faults() -> TableCreateStatement {
    Table::create()
        .table(SandboxFaults::Table)
        .if_not_exists()
        .col(ColumnDef::new(SandboxFaults::ClientId).text().not_null())
        .col(ColumnDef::new(SandboxFaults::Op).text().not_null())
        .col(
            ColumnDef::new(SandboxFaults::Remaining)
                .integer()
                .not_null()
                .default(0),
        )
        .primary_key(
            Index::create()
                .col(SandboxFaults::ClientId)
                .col(SandboxFaults::Op),
        )
        .to_owned()
}

fn connections() -> TableCreateStatement {
    Table::create()
        .table(SandboxConnections::Table)
        .if_not_exists()
        .col(
            ColumnDef::new(SandboxConnections::Id)
                .big_integer()
                .not_null()
                .auto_increment()
                .primary_key(),
        )
        .col(text(SandboxConnections::ClientId))
        .col(text(SandboxConnections::PodName))
        .col(big_integer(SandboxConnections::Fence))
        .col(timestamp(SandboxConnections::ConnectedAt))
        .col(
            ColumnDef::new(SandboxConnections::ClosedAt)
                .timestamp_with_time_zone()
                .null(),
        )
        .to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            phones(),
            devices(),
            qr(),
            pair_codes(),
            faults(),
            connections(),
        ] {
            manager.create_table(table).await?;
        }
        manager
            .create_index(
                Index::create()
                    .name(QR_CODE_INDEX)
                    .table(SandboxQr::Table)
                    .col(SandboxQr::Code)
                    .unique()
                    .if_not_exists()
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name(CONNECTIONS_CLIENT_INDEX)
                    .table(SandboxConnections::Table)
                    .col(SandboxConnections::ClientId)
                    .if_not_exists()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for index in [QR_CODE_INDEX, CONNECTIONS_CLIENT_INDEX] {
            manager
                .drop_index(Index::drop().name(index).if_exists().to_owned())
                .await?;
        }
        let tables: [DynIden; 6] = [
            SandboxConnections::Table.into_iden(),
            SandboxFaults::Table.into_iden(),
            SandboxPairCodes::Table.into_iden(),
            SandboxQr::Table.into_iden(),
            SandboxDevices::Table.into_iden(),
            SandboxPhones::Table.into_iden(),
        ];
        for table in tables {
            manager
                .drop_table(Table::drop().table(table).if_exists().to_owned())
                .await?;
        }
        Ok(())
    }
}
