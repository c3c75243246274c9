//! The hosted inbox: chat rooms, messages and the media library of sessions
//! whose webhook is the hosted receiver.
//!
//! Writes come in batches ([`Db::history_write`]: one transaction per batch, one
//! multi-row insert of the new messages, one multi-row upsert of the rooms they
//! touch), so a writer can group many events. Every write is idempotent on
//! `(client_id, chat_room_id, message_id)`: a duplicate delivery adds no row and
//! does not count as unread twice. Reactions, edits and revokes change their
//! target and insert nothing.
use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict, Query};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseTransaction, EntityTrait,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::entities::history::{media_files, messages, rooms};
use super::{Db, DbError};

/// Messages answered by the messages route: the last 200 of a room.
pub const HISTORY_LIMIT: u64 = 200;
/// Media-library paging: default and largest page size.
pub const PAGE_LIMIT_DEFAULT: u64 = 50;
pub const PAGE_LIMIT_MAX: u64 = 200;
/// Rows per multi-row insert (well below both databases' parameter limits).
const INSERT_CHUNK: usize = 200;
/// Rooms per multi-row upsert (17 parameters each).
const ROOM_CHUNK: usize = 500;

/// Whether a session keeps a hosted inbox: it has a workspace id and its webhook
/// is the hosted receiver (compared without surrounding blanks or a trailing `/`).
pub fn hosted_inbox_active(org_id: &str, webhook_url: &str, receiver: Option<&str>) -> bool {
    let norm = |u: &str| u.trim().trim_end_matches('/').to_string();
    match receiver.map(norm) {
        Some(receiver) if !receiver.is_empty() => {
            !org_id.trim().is_empty() && norm(webhook_url) == receiver
        }
        _ => false,
    }
}

/// What the envelope says about the chat a message belongs to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoomFacts {
    pub name: String,
    pub my_lid: String,
    pub client_lid: String,
    pub is_group: bool,
    pub remote_jid: String,
    pub remote_phone: String,
    pub avatar_url: String,
}

/// The `media` object of a stored message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageMedia {
    pub mime_type: String,
    pub media_type: String,
    pub file_name: String,
    pub file_size: u64,
}

/// A media-library record for a new message.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMediaFile {
    /// The storage UUID (the library's `messageId`).
    pub id: uuid::Uuid,
    pub storage_key: String,
    pub url: String,
    pub mime_type: String,
    pub media_type: String,
    pub file_name: String,
    pub file_size: u64,
    pub caption: String,
    /// Hex SHA-256 of the bytes.
    pub sha256: String,
    pub created_at: DateTime<Utc>,
}

/// A message to store.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMessage {
    pub client_id: String,
    pub org_id: String,
    pub chat_room_id: String,
    pub message_id: String,
    pub room: RoomFacts,
    pub body: String,
    /// One of the spec's `messageType` values.
    pub message_type: String,
    pub from_me: bool,
    pub pushname: String,
    /// The sender's JID (quoted previews name it as `participant`).
    pub sender: String,
    pub sent_at: DateTime<Utc>,
    pub from_ai: bool,
    pub media: Option<MessageMedia>,
    pub download_url: String,
    pub extras: Value,
    pub media_file: Option<NewMediaFile>,
    /// Whether it is chat activity: moves `lastMessage*` and, inbound, counts as
    /// unread (vote updates are stored but are not activity).
    pub activity: bool,
}

/// The stored message an update applies to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    pub client_id: String,
    pub chat_room_id: String,
    pub message_id: String,
}

/// A change of a stored message.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// `reactor` (a user-part) reacted with `emoji`; empty removes the reaction.
    React { reactor: String, emoji: String },
    /// The body was replaced by the edit `edit_id` (applied once per edit id).
    Edit {
        edit_id: String,
        body: String,
        at: DateTime<Utc>,
    },
    /// Deleted for everyone.
    Revoke { at: DateTime<Utc> },
    /// A vote on a stored poll: `voter`'s current choice.
    Vote {
        voter: String,
        selected_options: Vec<String>,
        selected_hashes: Vec<String>,
    },
    /// Deleted for this session only.
    DeleteForMe,
}

/// One write of a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    Message(Box<NewMessage>),
    Update { target: Target, change: Change },
}

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Inserted,
    /// The message was stored before: nothing changed.
    Duplicate,
    Updated,
    /// The update's target is not stored: nothing changed.
    TargetMissing,
}

/// A stored chat room.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRoomRow {
    pub client_id: String,
    pub chat_room_id: String,
    pub org_id: String,
    pub name: String,
    pub my_lid: String,
    pub client_lid: String,
    pub is_group: bool,
    pub remote_jid: String,
    pub avatar_url: String,
    pub last_message_id: String,
    pub last_message: String,
    pub last_message_from_me: bool,
    pub last_message_at: Option<DateTime<Utc>>,
    pub unread_count: i64,
}

/// A stored message.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageRow {
    pub client_id: String,
    pub chat_room_id: String,
    pub message_id: String,
    pub org_id: String,
    pub body: String,
    pub message_type: String,
    pub from_me: bool,
    pub pushname: String,
    pub sender: String,
    pub sent_at: DateTime<Utc>,
    pub deleted: bool,
    pub from_ai: bool,
    pub media: Option<MessageMedia>,
    pub media_file_id: Option<String>,
    pub download_url: String,
    pub extras: Value,
}

/// A media-library record.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaFileRow {
    pub id: String,
    pub client_id: String,
    pub org_id: String,
    pub chat_room_id: String,
    pub message_id: String,
    pub storage_key: String,
    pub url: String,
    pub mime_type: String,
    pub media_type: String,
    pub file_name: String,
    pub file_size: i64,
    pub caption: String,
    pub sha256: String,
    pub created_at: DateTime<Utc>,
}

/// One page of the media library.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaPage {
    pub files: Vec<MediaFileRow>,
    pub total: u64,
}

impl Db {
    /// Applies a batch in one transaction; one outcome per write, in order.
    /// New messages are inserted before updates run, so an update may target a
    /// message of the same batch.
    pub async fn history_write(&self, writes: &[Write]) -> Result<Vec<Written>, DbError> {
        let txn = self.begin_write().await?;
        let out = write_in(&txn, writes).await?;
        txn.commit().await?;
        Ok(out)
    }

    /// The rooms of a session, newest activity first.
    pub async fn chat_rooms(&self, client_id: &str) -> Result<Vec<ChatRoomRow>, DbError> {
        let mut rows: Vec<ChatRoomRow> = rooms::Entity::find()
            .filter(rooms::Column::ClientId.eq(client_id))
            .all(self.conn())
            .await?
            .into_iter()
            .map(ChatRoomRow::from)
            .collect();
        // In Rust: the databases order NULLs differently.
        rows.sort_by(|a, b| {
            b.last_message_at
                .cmp(&a.last_message_at)
                .then_with(|| a.chat_room_id.cmp(&b.chat_room_id))
        });
        Ok(rows)
    }

    pub async fn chat_room(
        &self,
        client_id: &str,
        chat_room_id: &str,
    ) -> Result<Option<ChatRoomRow>, DbError> {
        Ok(
            rooms::Entity::find_by_id((client_id.to_string(), chat_room_id.to_string()))
                .one(self.conn())
                .await?
                .map(ChatRoomRow::from),
        )
    }

    /// The room of a contact (`user` is a LID user-part or phone digits) or of a
    /// group (`user` is the group id).
    pub async fn chat_room_for(
        &self,
        client_id: &str,
        user: &str,
        is_group: bool,
    ) -> Result<Option<ChatRoomRow>, DbError> {
        let mut q = rooms::Entity::find()
            .filter(rooms::Column::ClientId.eq(client_id))
            .filter(rooms::Column::IsGroup.eq(is_group));
        q = if is_group {
            q.filter(rooms::Column::ClientLid.eq(user))
        } else {
            q.filter(
                sea_orm::Condition::any()
                    .add(rooms::Column::ClientLid.eq(user))
                    .add(rooms::Column::RemotePhone.eq(user)),
            )
        };
        Ok(q.order_by_desc(rooms::Column::LastMessageAt)
            .one(self.conn())
            .await?
            .map(ChatRoomRow::from))
    }

    /// The last `limit` messages of a room, oldest first.
    pub async fn last_messages(
        &self,
        client_id: &str,
        chat_room_id: &str,
        limit: u64,
    ) -> Result<Vec<MessageRow>, DbError> {
        let mut rows: Vec<MessageRow> = messages::Entity::find()
            .filter(messages::Column::ClientId.eq(client_id))
            .filter(messages::Column::ChatRoomId.eq(chat_room_id))
            .order_by_desc(messages::Column::SentAt)
            .order_by_desc(messages::Column::Id)
            .limit(limit)
            .all(self.conn())
            .await?
            .into_iter()
            .map(MessageRow::from)
            .collect();
        rows.reverse();
        Ok(rows)
    }

    pub async fn history_message(
        &self,
        client_id: &str,
        chat_room_id: &str,
        message_id: &str,
    ) -> Result<Option<MessageRow>, DbError> {
        Ok(
            find_message(self.conn(), client_id, chat_room_id, message_id)
                .await?
                .map(MessageRow::from),
        )
    }

    /// Whether the room has at least one stored message.
    pub async fn room_has_messages(
        &self,
        client_id: &str,
        chat_room_id: &str,
    ) -> Result<bool, DbError> {
        let n = messages::Entity::find()
            .filter(messages::Column::ClientId.eq(client_id))
            .filter(messages::Column::ChatRoomId.eq(chat_room_id))
            .limit(1)
            .count(self.conn())
            .await?;
        Ok(n > 0)
    }

    /// Sets the room's `avatarUrl` (empty: no picture); `false` when the room is
    /// not stored.
    pub async fn set_room_avatar(
        &self,
        client_id: &str,
        chat_room_id: &str,
        avatar_url: &str,
    ) -> Result<bool, DbError> {
        self.set_room_column(
            client_id,
            chat_room_id,
            rooms::Column::AvatarUrl,
            Expr::value(avatar_url),
        )
        .await
    }

    /// Resets the room's unread counter; `false` when the room is not stored.
    pub async fn reset_unread(&self, client_id: &str, chat_room_id: &str) -> Result<bool, DbError> {
        self.set_room_column(
            client_id,
            chat_room_id,
            rooms::Column::UnreadCount,
            Expr::value(0i64),
        )
        .await
    }

    /// Sets one column of a room (and its `updated_at`); `false` when the
    /// room is not stored.
    async fn set_room_column(
        &self,
        client_id: &str,
        chat_room_id: &str,
        column: rooms::Column,
        value: Expr,
    ) -> Result<bool, DbError> {
        let res = rooms::Entity::update_many()
            .col_expr(column, value)
            .col_expr(rooms::Column::UpdatedAt, Expr::value(Utc::now()))
            .filter(rooms::Column::ClientId.eq(client_id))
            .filter(rooms::Column::ChatRoomId.eq(chat_room_id))
            .exec(self.conn())
            .await?;
        Ok(res.rows_affected > 0)
    }

    /// The options of a stored poll of the session (any room), in their order.
    pub async fn poll_options(
        &self,
        client_id: &str,
        poll_message_id: &str,
    ) -> Result<Option<Vec<String>>, DbError> {
        let row = messages::Entity::find()
            .filter(messages::Column::ClientId.eq(client_id))
            .filter(messages::Column::MessageId.eq(poll_message_id))
            .filter(messages::Column::MessageType.eq("poll"))
            .one(self.conn())
            .await?;
        Ok(row.and_then(|m| {
            let extras: Value = serde_json::from_str(&m.extras).ok()?;
            let options = extras.get("poll")?.get("options")?.as_array()?;
            Some(
                options
                    .iter()
                    .filter_map(|o| o.as_str().map(str::to_string))
                    .collect(),
            )
        }))
    }

    /// One page (1-based) of a session's media library for one workspace, newest first.
    pub async fn media_files(
        &self,
        client_id: &str,
        org_id: &str,
        page: u64,
        limit: u64,
    ) -> Result<MediaPage, DbError> {
        let limit = limit.clamp(1, PAGE_LIMIT_MAX);
        let page = page.max(1);
        let base = media_files::Entity::find()
            .filter(media_files::Column::ClientId.eq(client_id))
            .filter(media_files::Column::OrgId.eq(org_id));
        let total = base.clone().count(self.conn()).await?;
        let files = base
            .order_by_desc(media_files::Column::CreatedAt)
            .order_by_desc(media_files::Column::Id)
            .offset((page - 1).saturating_mul(limit))
            .limit(limit)
            .all(self.conn())
            .await?
            .into_iter()
            .map(MediaFileRow::from)
            .collect();
        Ok(MediaPage { files, total })
    }

    /// A media-library record by its storage UUID.
    pub async fn media_file(&self, id: &str) -> Result<Option<MediaFileRow>, DbError> {
        Ok(media_files::Entity::find_by_id(id.to_string())
            .one(self.conn())
            .await?
            .map(MediaFileRow::from))
    }

    /// A file of the session with these bytes, stored before: `(storage_key, url)`.
    pub async fn media_by_sha256(
        &self,
        client_id: &str,
        sha256: &str,
    ) -> Result<Option<(String, String)>, DbError> {
        Ok(media_files::Entity::find()
            .select_only()
            .column(media_files::Column::StorageKey)
            .column(media_files::Column::Url)
            .filter(media_files::Column::ClientId.eq(client_id))
            .filter(media_files::Column::Sha256.eq(sha256))
            .into_tuple::<(String, String)>()
            .one(self.conn())
            .await?)
    }
}

/// Every write of a batch inside `txn`.
async fn write_in(txn: &DatabaseTransaction, writes: &[Write]) -> Result<Vec<Written>, DbError> {
    let mut out = vec![Written::Duplicate; writes.len()];

    // New messages, first occurrence of each key only.
    let mut seen: HashSet<(&str, &str, &str)> = HashSet::new();
    let mut fresh: Vec<(usize, &NewMessage)> = Vec::new();
    for (i, w) in writes.iter().enumerate() {
        if let Write::Message(m) = w
            && seen.insert((&m.client_id, &m.chat_room_id, &m.message_id))
        {
            fresh.push((i, m));
        }
    }
    let mut inserted: HashSet<(String, String, String)> = HashSet::new();
    for chunk in fresh.chunks(INSERT_CHUNK) {
        inserted.extend(insert_messages(txn, chunk.iter().map(|(_, m)| *m)).await?);
    }
    let is_new = |m: &NewMessage| {
        inserted.contains(&(
            m.client_id.clone(),
            m.chat_room_id.clone(),
            m.message_id.clone(),
        ))
    };
    let new_messages: Vec<&NewMessage> = fresh
        .iter()
        .filter(|(_, m)| is_new(m))
        .map(|(_, m)| *m)
        .collect();
    for (i, m) in &fresh {
        if is_new(m) {
            out[*i] = Written::Inserted;
        }
    }

    // Media-library records of the new messages.
    let files: Vec<media_files::ActiveModel> = new_messages
        .iter()
        .filter_map(|m| m.media_file.as_ref().map(|f| media_model(m, f)))
        .collect();
    for chunk in files.chunks(INSERT_CHUNK) {
        media_files::Entity::insert_many(chunk.to_vec())
            .on_conflict_do_nothing()
            .exec_without_returning(txn)
            .await?;
    }

    // Every touched room once, summed: counters from the new messages only.
    let mut touched: Vec<RoomDelta> = Vec::new();
    let mut by_room: HashMap<(&str, &str), usize> = HashMap::new();
    for (_, m) in &fresh {
        let idx = *by_room
            .entry((&m.client_id, &m.chat_room_id))
            .or_insert_with(|| {
                touched.push(RoomDelta::new(m));
                touched.len() - 1
            });
        let delta = &mut touched[idx];
        delta.absorb_facts(m);
        if is_new(m) && m.activity {
            if !m.from_me {
                delta.unread += 1;
            }
            if delta.last.is_none_or(|l| m.sent_at >= l.sent_at) {
                delta.last = Some(m);
            }
        }
    }
    // In key order, so concurrent batches lock rooms in the same order.
    touched.sort_by(|a, b| (a.client_id, a.chat_room_id).cmp(&(b.client_id, b.chat_room_id)));
    for chunk in touched.chunks(ROOM_CHUNK) {
        upsert_rooms(txn, chunk).await?;
    }

    // Updates, in order.
    for (i, w) in writes.iter().enumerate() {
        if let Write::Update { target, change } = w {
            out[i] = apply(txn, target, change).await?;
        }
    }
    Ok(out)
}

/// `INSERT ... ON CONFLICT DO NOTHING RETURNING` the keys that were inserted.
async fn insert_messages<'a>(
    txn: &DatabaseTransaction,
    batch: impl Iterator<Item = &'a NewMessage>,
) -> Result<Vec<(String, String, String)>, DbError> {
    use messages::Column as C;
    let now = Utc::now();
    let mut insert = Query::insert();
    insert.into_table(messages::Entity).columns([
        C::ClientId,
        C::ChatRoomId,
        C::MessageId,
        C::OrgId,
        C::Body,
        C::MessageType,
        C::FromMe,
        C::Pushname,
        C::Sender,
        C::SentAt,
        C::Deleted,
        C::FromAi,
        C::Media,
        C::MediaFileId,
        C::DownloadUrl,
        C::Extras,
        C::CreatedAt,
    ]);
    let mut any = false;
    for m in batch {
        any = true;
        let media = m
            .media
            .as_ref()
            .map(|x| serde_json::to_string(x).unwrap_or_default());
        let file_id = m.media_file.as_ref().map(|f| f.id.to_string());
        insert
            .values([
                m.client_id.clone().into(),
                m.chat_room_id.clone().into(),
                m.message_id.clone().into(),
                m.org_id.clone().into(),
                m.body.clone().into(),
                m.message_type.clone().into(),
                m.from_me.into(),
                m.pushname.clone().into(),
                m.sender.clone().into(),
                m.sent_at.into(),
                false.into(),
                m.from_ai.into(),
                media.into(),
                file_id.into(),
                m.download_url.clone().into(),
                m.extras.to_string().into(),
                now.into(),
            ])
            .map_err(|e| DbError::Unavailable(format!("building the insert: {e}")))?;
    }
    if !any {
        return Ok(Vec::new());
    }
    insert
        .on_conflict(
            OnConflict::columns([C::ClientId, C::ChatRoomId, C::MessageId])
                .do_nothing()
                .to_owned(),
        )
        .returning(Query::returning().columns([C::ClientId, C::ChatRoomId, C::MessageId]));
    let rows = txn.query_all(&insert).await?;
    rows.into_iter()
        .map(|r| {
            Ok((
                r.try_get::<String>("", "client_id")?,
                r.try_get::<String>("", "chat_room_id")?,
                r.try_get::<String>("", "message_id")?,
            ))
        })
        .collect::<Result<_, sea_orm::DbErr>>()
        .map_err(DbError::from)
}

fn media_model(m: &NewMessage, f: &NewMediaFile) -> media_files::ActiveModel {
    media_files::ActiveModel {
        id: Set(f.id.to_string()),
        client_id: Set(m.client_id.clone()),
        org_id: Set(m.org_id.clone()),
        chat_room_id: Set(m.chat_room_id.clone()),
        message_id: Set(m.message_id.clone()),
        storage_key: Set(f.storage_key.clone()),
        url: Set(f.url.clone()),
        mime_type: Set(f.mime_type.clone()),
        media_type: Set(f.media_type.clone()),
        file_name: Set(f.file_name.clone()),
        file_size: Set(i64::try_from(f.file_size).unwrap_or(i64::MAX)),
        caption: Set(f.caption.clone()),
        sha256: Set(f.sha256.clone()),
        created_at: Set(f.created_at),
    }
}

/// What a batch changes in one room.
struct RoomDelta<'a> {
    client_id: &'a str,
    chat_room_id: &'a str,
    org_id: &'a str,
    facts: RoomFacts,
    unread: i64,
    last: Option<&'a NewMessage>,
}

impl<'a> RoomDelta<'a> {
    fn new(m: &'a NewMessage) -> Self {
        RoomDelta {
            client_id: &m.client_id,
            chat_room_id: &m.chat_room_id,
            org_id: &m.org_id,
            facts: m.room.clone(),
            unread: 0,
            last: None,
        }
    }

    /// Later messages win for names and links, but never blank them.
    fn absorb_facts(&mut self, m: &'a NewMessage) {
        self.org_id = &m.org_id;
        let f = &m.room;
        for (mine, theirs) in [
            (&mut self.facts.name, &f.name),
            (&mut self.facts.remote_phone, &f.remote_phone),
            (&mut self.facts.avatar_url, &f.avatar_url),
        ] {
            if !theirs.is_empty() {
                mine.clone_from(theirs);
            }
        }
    }
}

/// Inserts the rooms or adds to them, one statement for all: unread counts add
/// up, `lastMessage*` moves only to a message at least as recent, blank names
/// and links never overwrite. `deltas` holds each room once (a statement may
/// not change one row twice).
async fn upsert_rooms(txn: &DatabaseTransaction, deltas: &[RoomDelta<'_>]) -> Result<(), DbError> {
    use rooms::Column as C;
    if deltas.is_empty() {
        return Ok(());
    }
    let now = Utc::now();
    let mut insert = Query::insert();
    insert.into_table(rooms::Entity).columns([
        C::ClientId,
        C::ChatRoomId,
        C::OrgId,
        C::Name,
        C::MyLid,
        C::ClientLid,
        C::IsGroup,
        C::RemoteJid,
        C::RemotePhone,
        C::AvatarUrl,
        C::LastMessageId,
        C::LastMessage,
        C::LastMessageFromMe,
        C::LastMessageAt,
        C::UnreadCount,
        C::CreatedAt,
        C::UpdatedAt,
    ]);
    for d in deltas {
        let last = d.last;
        insert
            .values([
                d.client_id.into(),
                d.chat_room_id.into(),
                d.org_id.into(),
                d.facts.name.clone().into(),
                d.facts.my_lid.clone().into(),
                d.facts.client_lid.clone().into(),
                d.facts.is_group.into(),
                d.facts.remote_jid.clone().into(),
                d.facts.remote_phone.clone().into(),
                d.facts.avatar_url.clone().into(),
                last.map(|m| m.message_id.clone())
                    .unwrap_or_default()
                    .into(),
                last.map(preview).unwrap_or_default().into(),
                last.is_some_and(|m| m.from_me).into(),
                last.map(|m| m.sent_at).into(),
                d.unread.into(),
                now.into(),
                now.into(),
            ])
            .map_err(|e| DbError::Unavailable(format!("building the upsert: {e}")))?;
    }
    let t = "\"history_rooms\"";
    let keep_unless_blank = |c: &str| {
        Expr::cust(format!(
            "CASE WHEN excluded.{c} <> '' THEN excluded.{c} ELSE {t}.{c} END"
        ))
    };
    let newer = format!(
        "excluded.last_message_at IS NOT NULL AND ({t}.last_message_at IS NULL \
         OR excluded.last_message_at >= {t}.last_message_at)"
    );
    let if_newer = |c: &str| {
        Expr::cust(format!(
            "CASE WHEN {newer} THEN excluded.{c} ELSE {t}.{c} END"
        ))
    };
    let mut on_conflict = OnConflict::columns([C::ClientId, C::ChatRoomId]);
    on_conflict
        .value(C::OrgId, Expr::cust("excluded.org_id"))
        .value(C::Name, keep_unless_blank("name"))
        .value(C::RemotePhone, keep_unless_blank("remote_phone"))
        .value(C::AvatarUrl, keep_unless_blank("avatar_url"))
        .value(
            C::UnreadCount,
            Expr::cust(format!("{t}.unread_count + excluded.unread_count")),
        )
        .value(C::LastMessageId, if_newer("last_message_id"))
        .value(C::LastMessage, if_newer("last_message"))
        .value(C::LastMessageFromMe, if_newer("last_message_from_me"))
        .value(C::LastMessageAt, if_newer("last_message_at"))
        .value(C::UpdatedAt, Expr::cust("excluded.updated_at"));
    insert.on_conflict(on_conflict.to_owned());
    txn.execute(&insert).await?;
    Ok(())
}

/// The room list's `lastMessage` text of a message.
fn preview(m: &NewMessage) -> String {
    if !m.body.is_empty() {
        return m.body.clone();
    }
    match &m.media {
        Some(media) if !media.file_name.is_empty() => media.file_name.clone(),
        _ => m.message_type.clone(),
    }
}

async fn find_message<C: ConnectionTrait>(
    conn: &C,
    client_id: &str,
    chat_room_id: &str,
    message_id: &str,
) -> Result<Option<messages::Model>, DbError> {
    Ok(messages::Entity::find()
        .filter(messages::Column::ClientId.eq(client_id))
        .filter(messages::Column::ChatRoomId.eq(chat_room_id))
        .filter(messages::Column::MessageId.eq(message_id))
        .one(conn)
        .await?)
}

/// Applies one change to its target's row (`extras`, `body`, `deleted`).
async fn apply(
    txn: &DatabaseTransaction,
    target: &Target,
    change: &Change,
) -> Result<Written, DbError> {
    let Some(row) = find_message(
        txn,
        &target.client_id,
        &target.chat_room_id,
        &target.message_id,
    )
    .await?
    else {
        return Ok(Written::TargetMissing);
    };
    let mut extras = match serde_json::from_str::<Value>(&row.extras) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let mut body = row.body.clone();
    let mut deleted = row.deleted;
    match change {
        Change::React { reactor, emoji } => {
            let reactions = object_at(&mut extras, "reactions");
            if emoji.is_empty() {
                reactions.remove(reactor);
            } else {
                reactions.insert(reactor.clone(), Value::String(emoji.clone()));
            }
        }
        Change::Edit {
            edit_id,
            body: new,
            at,
        } => {
            let mut list = match extras.remove("editHistory") {
                Some(Value::Array(list)) => list,
                _ => Vec::new(),
            };
            let applied = list
                .iter()
                .any(|e| e.get("editId").and_then(Value::as_str) == Some(edit_id.as_str()));
            if !applied {
                list.push(json!({
                    "editId": edit_id,
                    "body": row.body,
                    "editedAt": at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                }));
                body.clone_from(new);
            }
            extras.insert("editHistory".into(), Value::Array(list));
            extras.insert("edited".into(), Value::Bool(true));
        }
        Change::Revoke { at } => {
            deleted = true;
            extras.insert("revoked".into(), Value::Bool(true));
            extras
                .entry("revokedAt")
                .or_insert_with(|| json!(at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)));
        }
        Change::Vote {
            voter,
            selected_options,
            selected_hashes,
        } => {
            object_at(&mut extras, "votes").insert(
                voter.clone(),
                json!({"selectedOptions": selected_options, "selectedHashes": selected_hashes}),
            );
        }
        Change::DeleteForMe => {
            deleted = true;
            extras.insert("deletedForMe".into(), Value::Bool(true));
        }
    }
    messages::Entity::update_many()
        .col_expr(
            messages::Column::Extras,
            Expr::value(Value::Object(extras).to_string()),
        )
        .col_expr(messages::Column::Body, Expr::value(body.clone()))
        .col_expr(messages::Column::Deleted, Expr::value(deleted))
        .filter(messages::Column::Id.eq(row.id))
        .exec(txn)
        .await?;
    if body != row.body {
        rooms::Entity::update_many()
            .col_expr(rooms::Column::LastMessage, Expr::value(body))
            .filter(rooms::Column::ClientId.eq(&target.client_id))
            .filter(rooms::Column::ChatRoomId.eq(&target.chat_room_id))
            .filter(rooms::Column::LastMessageId.eq(&target.message_id))
            .exec(txn)
            .await?;
    }
    Ok(Written::Updated)
}

/// The object under `key`, created (or replacing a non-object) when needed.
fn object_at<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let slot = map
        .entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    match slot {
        Value::Object(m) => m,
        _ => unreachable!("just made an object"),
    }
}

impl From<rooms::Model> for ChatRoomRow {
    fn from(m: rooms::Model) -> Self {
        ChatRoomRow {
            client_id: m.client_id,
            chat_room_id: m.chat_room_id,
            org_id: m.org_id,
            name: m.name,
            my_lid: m.my_lid,
            client_lid: m.client_lid,
            is_group: m.is_group,
            remote_jid: m.remote_jid,
            avatar_url: m.avatar_url,
            last_message_id: m.last_message_id,
            last_message: m.last_message,
            last_message_from_me: m.last_message_from_me,
            last_message_at: m.last_message_at,
            unread_count: m.unread_count,
        }
    }
}

impl From<messages::Model> for MessageRow {
    fn from(m: messages::Model) -> Self {
        MessageRow {
            client_id: m.client_id,
            chat_room_id: m.chat_room_id,
            message_id: m.message_id,
            org_id: m.org_id,
            body: m.body,
            message_type: m.message_type,
            from_me: m.from_me,
            pushname: m.pushname,
            sender: m.sender,
            sent_at: m.sent_at,
            deleted: m.deleted,
            from_ai: m.from_ai,
            media: m.media.and_then(|t| serde_json::from_str(&t).ok()),
            media_file_id: m.media_file_id,
            download_url: m.download_url,
            extras: serde_json::from_str(&m.extras).unwrap_or_else(|_| json!({})),
        }
    }
}

impl From<media_files::Model> for MediaFileRow {
    fn from(m: media_files::Model) -> Self {
        MediaFileRow {
            id: m.id,
            client_id: m.client_id,
            org_id: m.org_id,
            chat_room_id: m.chat_room_id,
            message_id: m.message_id,
            storage_key: m.storage_key,
            url: m.url,
            mime_type: m.mime_type,
            media_type: m.media_type,
            file_name: m.file_name,
            file_size: m.file_size,
            caption: m.caption,
            sha256: m.sha256,
            created_at: m.created_at,
        }
    }
}

impl Db {
    /// Marks a stored message deleted for this session; `false` when not stored.
    pub async fn delete_for_me(
        &self,
        client_id: &str,
        chat_room_id: &str,
        message_id: &str,
    ) -> Result<bool, DbError> {
        let target = Target {
            client_id: client_id.into(),
            chat_room_id: chat_room_id.into(),
            message_id: message_id.into(),
        };
        let out = self
            .history_write(&[Write::Update {
                target,
                change: Change::DeleteForMe,
            }])
            .await?;
        Ok(out.first() == Some(&Written::Updated))
    }
}

#[cfg(test)]
mod tests {
    use super::hosted_inbox_active;

    #[test]
    fn hosted_inbox_needs_an_org_and_the_receiver() {
        let r = Some("https://inbox.example/hook/");
        assert!(hosted_inbox_active("org1", "https://inbox.example/hook", r));
        assert!(hosted_inbox_active(
            "org1",
            " https://inbox.example/hook/ ",
            r
        ));
        assert!(!hosted_inbox_active("", "https://inbox.example/hook", r));
        assert!(!hosted_inbox_active(
            "org1",
            "https://other.example/hook",
            r
        ));
        assert!(!hosted_inbox_active(
            "org1",
            "https://inbox.example/hook",
            None
        ));
        assert!(!hosted_inbox_active("org1", "", Some("")));
    }
}
