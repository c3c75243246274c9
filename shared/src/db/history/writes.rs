//! Writes: a batch of new messages and changes in one transaction, and the
//! per-user delete (`delete for me`).
use std::collections::HashSet;

use chrono::Utc;
use sea_orm::sea_query::{OnConflict, Query};
use sea_orm::{ActiveValue::Set, ConnectionTrait, DatabaseTransaction, EntityTrait};

use super::room_deltas::update_rooms;
use super::updates::apply;
use super::*;
use crate::db::entities::history::{media_files, messages};
use crate::db::{Db, DbError};

/// Rows per multi-row insert (well below both databases' parameter limits).
const INSERT_CHUNK: usize = 200;

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
    let fresh: Vec<&NewMessage> = fresh.iter().map(|(_, m)| *m).collect();
    update_rooms(txn, &fresh, &is_new).await?;

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
