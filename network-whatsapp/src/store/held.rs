//! The pending inbound buffer's rows as a session holds them in memory
//! before (and instead of) writing them.
//!
//! whatsapp-rust decrypts a received message (advancing the sender's keys in
//! its cache), buffers it (`store_pending_inbound_batch`), runs the
//! durability hook (Parley's event log) and, once the hook committed, deletes
//! the row again; the advanced keys are saved later, by a write of the
//! session's Signal state. The row matters only if those keys are saved
//! while the message is not in the event log: the network's redelivery can
//! then no longer be decrypted, and is replayed from the row. So a buffered
//! row is held here, not written: a batched write of Signal state (sessions,
//! identities, pre-keys, sender keys) writes the rows held first, in its
//! own transaction
//! (`SeaOrmDeviceStore::batched_after_held`), and every write that is not
//! batched writes them before it (`SeaOrmDeviceStore::write`); the batched
//! writes of other state (sent messages, message secrets) leave them held.
//! Keys are then never saved without the messages they decrypted; a row
//! deleted before any such write (the usual case: the hook commits within
//! milliseconds) never reaches the database.
//! Rows held when the process ends are lost with the keys no write saved,
//! so the redelivery decrypts again.
//!
//! The same holds when the disk has no room (a write of held rows fails):
//! the rows stay here, the session's other writes fail with them, and the
//! hook (with the event log out of room too) refuses the acknowledgement.
//! Held across the session's connections by the adapter
//! ([`super::OpenStores`]).
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use whatsapp_rust::wacore::store::error::StoreError;

/// A held row's key: chat, sender, stanza id.
pub(super) type Key = (String, String, String);

/// A held row: the encoded message and when it was buffered (unix seconds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Row {
    pub message: Vec<u8>,
    pub inserted_at: i64,
}

/// What the session knows of one key.
#[derive(Debug)]
struct Entry {
    /// The row still to write, if any.
    unwritten: Option<Row>,
    /// When it was buffered, for expiry.
    inserted_at: i64,
    /// Whether the database may have a row under the key: one was taken
    /// into a write (committed or not), or read from it.
    maybe_stored: bool,
}

/// One session's held rows (clones share them).
#[derive(Clone, Debug, Default)]
pub struct HeldInbound(Arc<Mutex<BTreeMap<Key, Entry>>>);

impl HeldInbound {
    fn entries(&self) -> MutexGuard<'_, BTreeMap<Key, Entry>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether a row waits to be written.
    pub(super) fn has_unwritten(&self) -> bool {
        self.entries().values().any(|e| e.unwritten.is_some())
    }

    /// Holds `rows` (replacing what a key had).
    pub(super) fn hold(&self, rows: impl IntoIterator<Item = (Key, Row)>) {
        let mut entries = self.entries();
        for (key, row) in rows {
            let entry = entries.entry(key).or_insert(Entry {
                unwritten: None,
                inserted_at: row.inserted_at,
                maybe_stored: false,
            });
            entry.inserted_at = row.inserted_at;
            entry.unwritten = Some(row);
        }
    }

    /// The row held under `key`, if it is not (only) in the database.
    pub(super) fn get(&self, key: &Key) -> Option<Vec<u8>> {
        let entries = self.entries();
        let row = entries.get(key)?.unwritten.as_ref()?;
        Some(row.message.clone())
    }

    /// Notes that the database has a row under `key` (read from it).
    pub(super) fn stored(&self, key: &Key, inserted_at: i64) {
        self.entries()
            .entry(key.clone())
            .or_insert(Entry {
                unwritten: None,
                inserted_at,
                maybe_stored: true,
            })
            .maybe_stored = true;
    }

    /// The rows to write, taken into a write: from now on a delete of any of
    /// them goes to the database too.
    pub(super) fn take_unwritten(&self) -> Vec<(Key, Row)> {
        let mut entries = self.entries();
        entries
            .iter_mut()
            .filter_map(|(key, entry)| {
                let row = entry.unwritten.clone()?;
                entry.maybe_stored = true;
                Some((key.clone(), row))
            })
            .collect()
    }

    /// Notes `written` as committed, unless replaced since.
    pub(super) fn written(&self, written: &[(Key, Row)]) {
        let mut entries = self.entries();
        for (key, row) in written {
            if let Some(entry) = entries.get_mut(key)
                && entry.unwritten.as_ref() == Some(row)
            {
                entry.unwritten = None;
            }
        }
    }

    /// Forgets `key`; whether the database may have its row to delete.
    pub(super) fn remove(&self, key: &Key) -> bool {
        self.entries().remove(key).is_none_or(|e| e.maybe_stored)
    }

    /// Drops what was buffered before `cutoff` (unix seconds); how many rows
    /// only memory had.
    pub(super) fn expire(&self, cutoff: i64) -> u32 {
        let mut entries = self.entries();
        let mut dropped = 0u32;
        entries.retain(|_, e| {
            let keep = e.inserted_at >= cutoff;
            if !keep && !e.maybe_stored {
                dropped = dropped.saturating_add(1);
            }
            keep
        });
        dropped
    }
}

/// Whether a store error is the database's disk being full.
pub(super) fn is_disk_full(e: &StoreError) -> bool {
    parley_shared::db::disk_full(&format!("{e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str) -> Key {
        ("chat".into(), "sender".into(), id.into())
    }

    fn row(message: &[u8], at: i64) -> Row {
        Row {
            message: message.to_vec(),
            inserted_at: at,
        }
    }

    #[test]
    fn rows_are_written_once_unless_replaced_and_expire() {
        let held = HeldInbound::default();
        held.hold([(key("a"), row(b"one", 10)), (key("b"), row(b"two", 20))]);
        let clone = held.clone();
        assert_eq!(clone.get(&key("a")).as_deref(), Some(&b"one"[..]));
        assert!(held.has_unwritten());
        let written = held.take_unwritten();
        assert_eq!(written.len(), 2);
        // Replaced while it was being written: still to write.
        held.hold([(key("b"), row(b"two again", 30))]);
        held.written(&written);
        assert_eq!(held.get(&key("a")), None, "in the database only");
        assert_eq!(held.get(&key("b")).as_deref(), Some(&b"two again"[..]));
        assert_eq!(
            held.take_unwritten(),
            vec![(key("b"), row(b"two again", 30))]
        );
        held.hold([(key("c"), row(b"three", 40))]);
        // a and b may be in the database; c only in memory.
        assert_eq!(held.expire(35), 0);
        assert_eq!(held.expire(41), 1);
        assert!(!held.has_unwritten());
    }

    #[test]
    fn a_delete_goes_to_the_database_unless_the_row_never_left_memory() {
        let held = HeldInbound::default();
        held.hold([(key("memory"), row(b"m", 1)), (key("taken"), row(b"t", 1))]);
        assert!(!held.remove(&key("memory")), "never written");
        // Taken into a write that may commit after the delete.
        let _ = held.take_unwritten();
        assert!(held.remove(&key("taken")));
        assert!(
            held.remove(&key("unknown")),
            "maybe from an earlier process"
        );
        // Read from the database, then buffered again (a replay).
        held.stored(&key("replayed"), 1);
        held.hold([(key("replayed"), row(b"r", 2))]);
        assert!(held.remove(&key("replayed")));
        assert!(!held.has_unwritten());
    }
}
