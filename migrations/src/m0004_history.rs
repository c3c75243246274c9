//! The hosted inbox: chat rooms, their messages, and the media library.
//!
//! Messages are unique on `(client_id, chat_room_id, message_id)`, so a duplicate
//! delivery never adds a row. JSON values (`media`, `extras`) are stored as text.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum HistoryRooms {
    Table,
    ClientId,
    ChatRoomId,
    OrgId,
    Name,
    MyLid,
    ClientLid,
    IsGroup,
    RemoteJid,
    RemotePhone,
    AvatarUrl,
    LastMessageId,
    LastMessage,
    LastMessageFromMe,
    LastMessageAt,
    UnreadCount,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum HistoryMessages {
    Table,
    Id,
    ClientId,
    ChatRoomId,
    MessageId,
    OrgId,
    Body,
    MessageType,
    FromMe,
    Pushname,
    Sender,
    SentAt,
    Deleted,
    FromAi,
    Media,
    MediaFileId,
    DownloadUrl,
    Extras,
    CreatedAt,
}

#[derive(DeriveIden)]
enum MediaFiles {
    Table,
    Id,
    ClientId,
    OrgId,
    ChatRoomId,
    MessageId,
    StorageKey,
    Url,
    MimeType,
    MediaType,
    FileName,
    FileSize,
    Caption,
    Sha256,
    CreatedAt,
}

const ROOMS_ACTIVITY: &str = "idx_history_rooms_activity";
const ROOMS_CONTACT: &str = "idx_history_rooms_contact";
const MESSAGES_KEY: &str = "idx_history_messages_key";
const MESSAGES_ROOM_TIME: &str = "idx_history_messages_room_time";
const MESSAGES_ID: &str = "idx_history_messages_message_id";
const MEDIA_KEY: &str = "idx_media_files_key";
const MEDIA_PAGE: &str = "idx_media_files_page";
const MEDIA_SHA: &str = "idx_media_files_sha256";

fn text<T: IntoIden>(col: T) -> ColumnDef {
    ColumnDef::new(col).text().not_null().default("").take()
}

fn boolean<T: IntoIden>(col: T) -> ColumnDef {
    ColumnDef::new(col)
        .boolean()
        .not_null()
        .default(false)
        .take()
}

fn timestamp<T: IntoIden>(col: T) -> ColumnDef {
    ColumnDef::new(col)
        .timestamp_with_time_zone()
        .not_null()
        .default(Expr::current_timestamp())
        .take()
}

/// `(name, table, unique, columns)` of every index.
fn indexes() -> Vec<(&'static str, DynIden, bool, Vec<DynIden>)> {
    vec![
        (
            ROOMS_ACTIVITY,
            HistoryRooms::Table.into_iden(),
            false,
            vec![
                HistoryRooms::ClientId.into_iden(),
                HistoryRooms::LastMessageAt.into_iden(),
            ],
        ),
        (
            ROOMS_CONTACT,
            HistoryRooms::Table.into_iden(),
            false,
            vec![
                HistoryRooms::ClientId.into_iden(),
                HistoryRooms::ClientLid.into_iden(),
            ],
        ),
        (
            MESSAGES_KEY,
            HistoryMessages::Table.into_iden(),
            true,
            vec![
                HistoryMessages::ClientId.into_iden(),
                HistoryMessages::ChatRoomId.into_iden(),
                HistoryMessages::MessageId.into_iden(),
            ],
        ),
        (
            MESSAGES_ROOM_TIME,
            HistoryMessages::Table.into_iden(),
            false,
            vec![
                HistoryMessages::ClientId.into_iden(),
                HistoryMessages::ChatRoomId.into_iden(),
                HistoryMessages::SentAt.into_iden(),
                HistoryMessages::Id.into_iden(),
            ],
        ),
        (
            MESSAGES_ID,
            HistoryMessages::Table.into_iden(),
            false,
            vec![
                HistoryMessages::ClientId.into_iden(),
                HistoryMessages::MessageId.into_iden(),
            ],
        ),
        (
            MEDIA_KEY,
            MediaFiles::Table.into_iden(),
            true,
            vec![
                MediaFiles::ClientId.into_iden(),
                MediaFiles::ChatRoomId.into_iden(),
                MediaFiles::MessageId.into_iden(),
            ],
        ),
        (
            MEDIA_PAGE,
            MediaFiles::Table.into_iden(),
            false,
            vec![
                MediaFiles::ClientId.into_iden(),
                MediaFiles::OrgId.into_iden(),
                MediaFiles::CreatedAt.into_iden(),
            ],
        ),
        (
            MEDIA_SHA,
            MediaFiles::Table.into_iden(),
            false,
            vec![
                MediaFiles::ClientId.into_iden(),
                MediaFiles::Sha256.into_iden(),
            ],
        ),
    ]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(HistoryRooms::Table)
                    .if_not_exists()
                    .col(ColumnDef::new(HistoryRooms::ClientId).text().not_null())
                    .col(ColumnDef::new(HistoryRooms::ChatRoomId).text().not_null())
                    .col(text(HistoryRooms::OrgId))
                    .col(text(HistoryRooms::Name))
                    .col(text(HistoryRooms::MyLid))
                    .col(text(HistoryRooms::ClientLid))
                    .col(boolean(HistoryRooms::IsGroup))
                    .col(text(HistoryRooms::RemoteJid))
                    .col(text(HistoryRooms::RemotePhone))
                    .col(text(HistoryRooms::AvatarUrl))
                    .col(text(HistoryRooms::LastMessageId))
                    .col(text(HistoryRooms::LastMessage))
                    .col(boolean(HistoryRooms::LastMessageFromMe))
                    .col(
                        ColumnDef::new(HistoryRooms::LastMessageAt)
                            .timestamp_with_time_zone()
                            .null(),
                    )
                    .col(
                        ColumnDef::new(HistoryRooms::UnreadCount)
                            .big_integer()
                            .not_null()
                            .default(0),
                    )
                    .col(timestamp(HistoryRooms::CreatedAt))
                    .col(timestamp(HistoryRooms::UpdatedAt))
                    .primary_key(
                        Index::create()
                            .col(HistoryRooms::ClientId)
                            .col(HistoryRooms::ChatRoomId),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(HistoryMessages::Table)
                    .if_not_exists()
                    .col(
                        ColumnDef::new(HistoryMessages::Id)
                            .big_integer()
                            .not_null()
                            .auto_increment()
                            .primary_key(),
                    )
                    .col(ColumnDef::new(HistoryMessages::ClientId).text().not_null())
                    .col(
                        ColumnDef::new(HistoryMessages::ChatRoomId)
                            .text()
                            .not_null(),
                    )
                    .col(ColumnDef::new(HistoryMessages::MessageId).text().not_null())
                    .col(text(HistoryMessages::OrgId))
                    .col(text(HistoryMessages::Body))
                    .col(text(HistoryMessages::MessageType))
                    .col(boolean(HistoryMessages::FromMe))
                    .col(text(HistoryMessages::Pushname))
                    .col(text(HistoryMessages::Sender))
                    .col(timestamp(HistoryMessages::SentAt))
                    .col(boolean(HistoryMessages::Deleted))
                    .col(boolean(HistoryMessages::FromAi))
                    .col(ColumnDef::new(HistoryMessages::Media).text().null())
                    .col(ColumnDef::new(HistoryMessages::MediaFileId).text().null())
                    .col(text(HistoryMessages::DownloadUrl))
                    .col(
                        ColumnDef::new(HistoryMessages::Extras)
                            .text()
                            .not_null()
                            .default("{}"),
                    )
                    .col(timestamp(HistoryMessages::CreatedAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(MediaFiles::Table)
                    .if_not_exists()
                    .col(
                        ColumnDef::new(MediaFiles::Id)
                            .text()
                            .not_null()
                            .primary_key(),
                    )
                    .col(ColumnDef::new(MediaFiles::ClientId).text().not_null())
                    .col(text(MediaFiles::OrgId))
                    .col(ColumnDef::new(MediaFiles::ChatRoomId).text().not_null())
                    .col(ColumnDef::new(MediaFiles::MessageId).text().not_null())
                    .col(text(MediaFiles::StorageKey))
                    .col(text(MediaFiles::Url))
                    .col(text(MediaFiles::MimeType))
                    .col(text(MediaFiles::MediaType))
                    .col(text(MediaFiles::FileName))
                    .col(
                        ColumnDef::new(MediaFiles::FileSize)
                            .big_integer()
                            .not_null()
                            .default(0),
                    )
                    .col(text(MediaFiles::Caption))
                    .col(text(MediaFiles::Sha256))
                    .col(timestamp(MediaFiles::CreatedAt))
                    .to_owned(),
            )
            .await?;
        for (name, table, unique, cols) in indexes() {
            let mut index = Index::create();
            index.name(name).table(table).if_not_exists();
            if unique {
                index.unique();
            }
            for col in cols {
                index.col(col);
            }
            manager.create_index(index.to_owned()).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for (name, ..) in indexes() {
            manager
                .drop_index(Index::drop().name(name).if_exists().to_owned())
                .await?;
        }
        for table in [
            MediaFiles::Table.into_iden(),
            HistoryMessages::Table.into_iden(),
            HistoryRooms::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).if_exists().to_owned())
                .await?;
        }
        Ok(())
    }
}
