//! Whether the database's disk has room for writes. A full disk is learnt
//! from a write it refused ([`Db::note_storage_full`]); from then on, work
//! that must not begin without room to record its outcome (a send: once the
//! network took it, its event must be logged) asks [`Db::has_room`] first,
//! which writes one small row: refused, the disk is still full; written,
//! there is room again and nothing more is asked until the next refusal.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use sea_orm::ConnectionTrait;

use super::{Db, DbError};

/// Shared by the clones of a [`Db`] and the pools made from it.
#[derive(Clone, Debug, Default)]
pub(super) struct StorageRoom {
    full: Arc<AtomicBool>,
}

impl Db {
    /// A write was refused for want of space.
    pub fn note_storage_full(&self) {
        self.room.full.store(true, Ordering::SeqCst);
    }

    /// Whether writes may be expected to go through: at once when no write
    /// was refused for want of space since the last check, else by writing
    /// the probe row. [`DbError::Full`] while the disk stays full.
    pub async fn has_room(&self) -> Result<(), DbError> {
        if !self.room.full.load(Ordering::SeqCst) {
            return Ok(());
        }
        let at = chrono::Utc::now().timestamp_millis();
        let probe = format!(
            "INSERT INTO storage_probe (id, written_at) VALUES (1, {at}) \
             ON CONFLICT (id) DO UPDATE SET written_at = excluded.written_at"
        );
        self.conn().execute_unprepared(&probe).await?;
        self.room.full.store(false, Ordering::SeqCst);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::db::testing::TestDb;

    #[tokio::test]
    async fn room_is_asked_only_after_a_refusal_and_found_again() {
        let test = TestDb::sqlite().await;
        let db = test.db.clone();
        db.has_room().await.expect("room, nothing asked");
        db.note_storage_full();
        // A clone shares what was learnt.
        let clone = db.clone();
        clone.has_room().await.expect("the probe row written");
        db.has_room().await.expect("room again");
        db.note_storage_full();
        db.has_room().await.expect("written once more");
    }
}
