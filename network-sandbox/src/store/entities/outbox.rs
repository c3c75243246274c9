//! The `sandbox_outbox` entity: everything sessions put on the simulated network,
//! in the order it got there.
use chrono::{DateTime, Utc};
use sea_orm::entity::prelude::*;
use sea_orm::sea_query::ArrayType;
use sea_orm::{ActiveValue::Set, DbBackend, QueryOrder, QuerySelect, Statement};

use parley_shared::db::{Db, DbError, pg_array as array};

/// Something a session put on the network, as the sandbox recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxEntry {
    pub id: i64,
    pub client_id: String,
    /// The network's id; empty for operations without one (typing, receipts).
    pub message_id: String,
    /// The chat JID.
    pub to_jid: String,
    /// `text`, `image`, ..., `read`, `unread` (the sandbox contract's list).
    pub kind: String,
    /// What was sent.
    pub payload: serde_json::Value,
    pub at: DateTime<Utc>,
}

/// An outbox entry to record.
#[derive(Debug, Clone, PartialEq)]
pub struct NewOutboxEntry {
    pub client_id: String,
    pub message_id: String,
    pub to_jid: String,
    pub kind: String,
    pub payload: serde_json::Value,
    pub at: DateTime<Utc>,
}

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "sandbox_outbox")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(column_type = "Text")]
    pub client_id: String,
    #[sea_orm(column_type = "Text")]
    pub message_id: String,
    #[sea_orm(column_type = "Text")]
    pub to_jid: String,
    #[sea_orm(column_type = "Text")]
    pub kind: String,
    /// JSON text.
    #[sea_orm(column_type = "Text")]
    pub payload: String,
    pub at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl From<Model> for OutboxEntry {
    fn from(m: Model) -> Self {
        // Written by `insert` from a JSON value; anything else is shown as text.
        let payload =
            serde_json::from_str(&m.payload).unwrap_or(serde_json::Value::String(m.payload));
        OutboxEntry {
            id: m.id,
            client_id: m.client_id,
            message_id: m.message_id,
            to_jid: m.to_jid,
            kind: m.kind,
            payload,
            at: m.at,
        }
    }
}

fn row(entry: NewOutboxEntry) -> ActiveModel {
    ActiveModel {
        client_id: Set(entry.client_id),
        message_id: Set(entry.message_id),
        to_jid: Set(entry.to_jid),
        kind: Set(entry.kind),
        payload: Set(entry.payload.to_string()),
        at: Set(entry.at),
        ..Default::default()
    }
}

pub async fn insert(db: &Db, entry: NewOutboxEntry) -> Result<(), DbError> {
    Entity::insert(row(entry))
        .exec_without_returning(db.conn())
        .await?;
    Ok(())
}

/// One statement for all of `entries`, in their order (ids ascending).
pub async fn insert_many(db: &Db, entries: Vec<NewOutboxEntry>) -> Result<(), DbError> {
    if entries.is_empty() {
        return Ok(());
    }
    if db.backend() == "postgres" {
        return insert_arrays(db, entries).await;
    }
    Entity::insert_many(entries.into_iter().map(row))
        .exec_without_returning(db.conn())
        .await?;
    Ok(())
}

/// `insert_many` on PostgreSQL: one statement text whatever the number of
/// entries (their values as arrays), prepared once per connection.
async fn insert_arrays(db: &Db, entries: Vec<NewOutboxEntry>) -> Result<(), DbError> {
    const INSERT: &str = "INSERT INTO sandbox_outbox (client_id, message_id, to_jid, kind, payload, at) \
         SELECT v.client_id, v.message_id, v.to_jid, v.kind, v.payload, v.at \
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[]) \
           WITH ORDINALITY AS v(client_id, message_id, to_jid, kind, payload, at, n) \
         ORDER BY v.n";
    let values = vec![
        array(
            ArrayType::String,
            entries.iter().map(|e| e.client_id.clone()),
        ),
        array(
            ArrayType::String,
            entries.iter().map(|e| e.message_id.clone()),
        ),
        array(ArrayType::String, entries.iter().map(|e| e.to_jid.clone())),
        array(ArrayType::String, entries.iter().map(|e| e.kind.clone())),
        array(
            ArrayType::String,
            entries.iter().map(|e| e.payload.to_string()),
        ),
        array(ArrayType::ChronoDateTimeUtc, entries.iter().map(|e| e.at)),
    ];
    let insert = Statement::from_sql_and_values(DbBackend::Postgres, INSERT, values);
    db.conn().execute_raw(insert).await?;
    Ok(())
}

/// Oldest first, at most `limit`; `to_jids` (when given) keeps those chats only.
pub async fn list(
    db: &Db,
    client_id: &str,
    to_jids: Option<&[String]>,
    since: Option<DateTime<Utc>>,
    limit: u64,
) -> Result<Vec<OutboxEntry>, DbError> {
    let mut query = Entity::find().filter(Column::ClientId.eq(client_id));
    if let Some(jids) = to_jids {
        query = query.filter(Column::ToJid.is_in(jids.iter().cloned()));
    }
    if let Some(since) = since {
        query = query.filter(Column::At.gte(since));
    }
    let rows = query
        .order_by_asc(Column::Id)
        .limit(limit)
        .all(db.conn())
        .await?;
    Ok(rows.into_iter().map(OutboxEntry::from).collect())
}

/// Whether one of the sessions `client_ids` sent a message (not a call's
/// signal, a receipt or typing) to one of the chats `to_jids`.
pub async fn wrote_to(db: &Db, client_ids: &[String], to_jids: &[String]) -> Result<bool, DbError> {
    let found = Entity::find()
        .select_only()
        .column(Column::Id)
        .filter(Column::ClientId.is_in(client_ids.iter().cloned()))
        .filter(Column::ToJid.is_in(to_jids.iter().cloned()))
        .filter(Column::MessageId.ne(""))
        .filter(Column::Kind.not_like("call%"))
        .into_tuple::<i64>()
        .one(db.conn())
        .await?;
    Ok(found.is_some())
}

/// The entry that put message `message_id` of the session on the network.
pub async fn find(
    db: &Db,
    client_id: &str,
    message_id: &str,
) -> Result<Option<OutboxEntry>, DbError> {
    Ok(Entity::find()
        .filter(Column::ClientId.eq(client_id))
        .filter(Column::MessageId.eq(message_id))
        .order_by_asc(Column::Id)
        .one(db.conn())
        .await?
        .map(OutboxEntry::from))
}
