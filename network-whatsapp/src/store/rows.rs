//! Multi-row inserts inside a fenced write, in chunks that stay far below the
//! bind-parameter limits of PostgreSQL and SQLite.
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::Hash;

use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveModelTrait, ConnectionTrait, DatabaseTransaction, DbBackend, EntityTrait, QueryTrait,
    Statement,
};
use whatsapp_rust::wacore::store::error::StoreError;

use super::error::db_err;

/// Rows per statement.
pub(super) const CHUNK: usize = 200;

/// Inserts `rows`, resolving key conflicts with `on_conflict` when given.
/// A statement must not touch one row twice: callers merge duplicate keys first
/// ([`last_per_key`]).
pub(super) async fn insert_rows<A>(
    txn: &DatabaseTransaction,
    rows: &[A],
    on_conflict: Option<&OnConflict>,
) -> Result<(), StoreError>
where
    A: ActiveModelTrait + Clone + Send + Sync,
{
    for statement in inserts(txn.get_database_backend(), rows, on_conflict) {
        txn.execute_raw(statement).await.map_err(db_err)?;
    }
    Ok(())
}

/// The statements of [`insert_rows`], for a batched write.
pub(super) fn inserts<A>(
    backend: DbBackend,
    rows: &[A],
    on_conflict: Option<&OnConflict>,
) -> Vec<Statement>
where
    A: ActiveModelTrait + Clone + Send + Sync,
{
    rows.chunks(CHUNK)
        .map(|chunk| {
            let mut insert = A::Entity::insert_many(chunk.to_vec());
            if let Some(on_conflict) = on_conflict {
                insert = insert.on_conflict(on_conflict.clone());
            }
            insert.build(backend)
        })
        .collect()
}

/// `items` with one entry per key: the last one given, at the place of the first.
/// (One statement must not touch a row twice, and the last write wins.)
pub(super) fn last_per_key<T, K: Eq + Hash>(items: Vec<T>, key: impl Fn(&T) -> K) -> Vec<T> {
    let mut index: HashMap<K, usize> = HashMap::with_capacity(items.len());
    let mut out: Vec<T> = Vec::with_capacity(items.len());
    for item in items {
        match index.entry(key(&item)) {
            Entry::Occupied(seen) => out[*seen.get()] = item,
            Entry::Vacant(slot) => {
                slot.insert(out.len());
                out.push(item);
            }
        }
    }
    out
}
