//! The sandbox network's state, kept in the gateway's database so it outlives
//! worker processes: phones, linked devices, QR and pairing codes, faults, the
//! connection log, the outbox, groups and the CDN's files. Its tables are
//! created by the one `Migrator` with the gateway's own.
pub mod entities;
pub mod generated;
pub mod groups;
pub mod media;
pub mod state;

use parley_shared::db::Db;

pub use state::{
    NewOutboxEntry, OutboxEntry, PhonePatch, SandboxConnection, SandboxDevice, SandboxPhone,
    derive_lid, fence_from_db, fence_to_db, is_valid_phone,
};

/// The sandbox's queries over the gateway's database.
#[derive(Clone)]
pub struct Store {
    db: Db,
}

impl Store {
    pub fn new(db: Db) -> Store {
        Store { db }
    }

    /// The gateway's database this store reads and writes.
    pub fn db(&self) -> &Db {
        &self.db
    }
}
