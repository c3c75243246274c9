//! SQLite: a device store's write riding in the event log's next
//! transaction (`Db::ride`), with the same fence check as a batch of the
//! writer's own: made under the database's write lock, refused alone.
use std::sync::{Arc, Mutex, PoisonError};

use parley_shared::db::{Db, RideWork};
use sea_orm::DbBackend;
use whatsapp_rust::wacore::store::error::StoreError;

use super::attempt::refusal;
use super::{Failure, Work};
use crate::store::Deleted;

/// Writes `work` of `client_id`'s store (whose fence is `fence`) in the
/// event log's next transaction: answered once it committed, or refused.
pub(super) async fn ride(
    db: &Db,
    client_id: &str,
    fence: i64,
    deleted: &Arc<Deleted>,
    work: Work,
) -> Result<(), Failure> {
    // The refusal of the try that committed (a ride is tried again alone
    // when its batch fails).
    let refused = Arc::new(Mutex::new(None));
    let (id, deleted, noted) = (
        client_id.to_string(),
        Arc::clone(deleted),
        Arc::clone(&refused),
    );
    let ride: RideWork = Box::new(move |stored| {
        let why = refusal(&id, fence, &deleted, stored);
        let statements = match why {
            None => work(DbBackend::Sqlite),
            Some(_) => Vec::new(),
        };
        *noted.lock().unwrap_or_else(PoisonError::into_inner) = why;
        statements
    });
    db.ride(client_id, ride)
        .await
        .map_err(|e| Failure::Failed(StoreError::Database(Box::new(e))))?;
    let why = refused
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    match why {
        Some(why) => Err(Failure::Refused(why)),
        None => Ok(()),
    }
}
