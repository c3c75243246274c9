//! Decrypted messages the pending inbound buffer could not write for want of
//! space (a full disk), held in memory per session instead. whatsapp-rust
//! decrypts a message (advancing the sender's keys) before it buffers it;
//! refused, it drops the message unacknowledged, and once the disk has room
//! again its advanced keys are saved and the network's redelivery can no
//! longer be decrypted: the message would be lost. Held here, the buffer
//! answers it was written, the durability hook runs (and, with the event
//! log out of room too, refuses the acknowledgement), and a redelivery is
//! replayed from here. No other write of the session's device state commits
//! before the held rows are written ([`SeaOrmDeviceStore::write`]), so the
//! advanced keys are never saved without them. Held across the session's
//! connections by the adapter ([`super::OpenStores`]); lost with the process,
//! as the unsaved keys are, so the redelivery decrypts again.
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

/// One session's held rows (clones share them).
#[derive(Clone, Debug, Default)]
pub struct HeldInbound(Arc<Mutex<BTreeMap<Key, Row>>>);

impl HeldInbound {
    fn rows(&self) -> MutexGuard<'_, BTreeMap<Key, Row>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.rows().is_empty()
    }

    pub(super) fn hold(&self, rows: impl IntoIterator<Item = (Key, Row)>) {
        self.rows().extend(rows);
    }

    pub(super) fn get(&self, key: &Key) -> Option<Vec<u8>> {
        self.rows().get(key).map(|row| row.message.clone())
    }

    pub(super) fn snapshot(&self) -> Vec<(Key, Row)> {
        self.rows()
            .iter()
            .map(|(k, r)| (k.clone(), r.clone()))
            .collect()
    }

    /// Lets go of `written` (now in the database), unless replaced since.
    pub(super) fn written(&self, written: &[(Key, Row)]) {
        let mut rows = self.rows();
        for (key, row) in written {
            if rows.get(key) == Some(row) {
                rows.remove(key);
            }
        }
    }

    pub(super) fn remove(&self, key: &Key) {
        self.rows().remove(key);
    }

    /// Drops rows buffered before `cutoff` (unix seconds); how many.
    pub(super) fn expire(&self, cutoff: i64) -> u32 {
        let mut rows = self.rows();
        let before = rows.len();
        rows.retain(|_, row| row.inserted_at >= cutoff);
        u32::try_from(before - rows.len()).unwrap_or(u32::MAX)
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
    fn held_rows_go_once_written_unless_replaced_and_expire() {
        let held = HeldInbound::default();
        held.hold([(key("a"), row(b"one", 10)), (key("b"), row(b"two", 20))]);
        let clone = held.clone();
        assert_eq!(clone.get(&key("a")).as_deref(), Some(&b"one"[..]));
        let written = held.snapshot();
        // Replaced while it was being written: kept.
        held.hold([(key("b"), row(b"two again", 30))]);
        held.written(&written);
        assert_eq!(held.get(&key("a")), None);
        assert_eq!(held.get(&key("b")).as_deref(), Some(&b"two again"[..]));
        assert_eq!(held.expire(25), 0);
        assert_eq!(held.expire(31), 1);
        assert!(held.is_empty());
    }
}
