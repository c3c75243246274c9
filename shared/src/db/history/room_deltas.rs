//! What a batch of writes changes in each room (last message, unread count,
//! names), applied as one multi-row upsert.
use std::collections::HashMap;

use chrono::Utc;
use sea_orm::sea_query::{Expr, OnConflict, Query};
use sea_orm::{ConnectionTrait, DatabaseTransaction};

use super::*;
use crate::db::DbError;
use crate::db::entities::history::rooms;

/// Rooms per multi-row upsert (17 parameters each).
const ROOM_CHUNK: usize = 500;

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

/// Every room `fresh` touches, once, summed (counters from the messages
/// `is_new` says were inserted, and that count as activity), upserted in key
/// order so that concurrent batches lock rooms in the same order.
pub(super) async fn update_rooms(
    txn: &DatabaseTransaction,
    fresh: &[&NewMessage],
    is_new: &(dyn Fn(&NewMessage) -> bool + Sync),
) -> Result<(), DbError> {
    let mut touched: Vec<RoomDelta> = Vec::new();
    let mut by_room: HashMap<(&str, &str), usize> = HashMap::new();
    for m in fresh {
        let idx = *by_room
            .entry((&m.client_id, &m.chat_room_id))
            .or_insert_with(|| {
                touched.push(RoomDelta::new(m));
                touched.len() - 1
            });
        let delta = &mut touched[idx];
        delta.absorb_facts(m);
        if is_new(m) && m.activity {
            if !m.from_me && m.unread {
                delta.unread += 1;
            }
            if delta.last.is_none_or(|l| m.sent_at >= l.sent_at) {
                delta.last = Some(m);
            }
        }
    }
    touched.sort_by(|a, b| (a.client_id, a.chat_room_id).cmp(&(b.client_id, b.chat_room_id)));
    for chunk in touched.chunks(ROOM_CHUNK) {
        upsert_rooms(txn, chunk).await?;
    }
    Ok(())
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
pub(super) fn preview(m: &NewMessage) -> String {
    if !m.body.is_empty() {
        return m.body.clone();
    }
    match &m.media {
        Some(media) if !media.file_name.is_empty() => media.file_name.clone(),
        _ => m.message_type.clone(),
    }
}
