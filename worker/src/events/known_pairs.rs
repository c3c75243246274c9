//! The LID <-> phone pairs a worker knows its sessions' contacts by, as
//! stored: each session's LIDs to phones and phones to LIDs, kept inverse of
//! each other the way the store keeps them (a phone belongs to one LID, a LID
//! has one phone), with the name last written for each LID. A pair read
//! from the store is kept only when nothing was written or forgotten while
//! it was read: a read that began before a write may return what the write
//! replaced.
use std::collections::HashMap;

/// Pairs and names remembered, over all sessions, before the memory starts
/// over.
const REMEMBERED: usize = 100_000;

#[derive(Default)]
pub(super) struct KnownPairs {
    sessions: HashMap<String, Pairs>,
    /// Pairs and names held over all sessions.
    len: usize,
    /// Writes and forgets so far.
    epoch: u64,
}

#[derive(Default)]
struct Pairs {
    /// LID -> phone.
    phones: HashMap<String, String>,
    /// Phone -> LID.
    lids: HashMap<String, String>,
    /// LID -> the name last written with it.
    names: HashMap<String, String>,
}

impl Pairs {
    fn size(&self) -> usize {
        self.phones.len() + self.names.len()
    }
}

impl KnownPairs {
    pub(super) fn phone(&self, client_id: &str, lid: &str) -> Option<String> {
        self.sessions.get(client_id)?.phones.get(lid).cloned()
    }

    pub(super) fn lid(&self, client_id: &str, phone: &str) -> Option<String> {
        self.sessions.get(client_id)?.lids.get(phone).cloned()
    }

    /// Whether `name` is the name last written for `lid`.
    pub(super) fn has_name(&self, client_id: &str, lid: &str, name: &str) -> bool {
        self.sessions
            .get(client_id)
            .and_then(|pairs| pairs.names.get(lid))
            .is_some_and(|known| known == name)
    }

    /// A name written for `lid` (nothing when empty: an empty name keeps
    /// the stored one).
    pub(super) fn wrote_name(&mut self, client_id: &str, lid: &str, name: &str) {
        if lid.is_empty() || name.is_empty() {
            return;
        }
        self.change(client_id, |pairs| {
            pairs.names.insert(lid.to_string(), name.to_string());
        });
    }

    /// Applies `change` to `client_id`'s pairs and counts what they hold
    /// after it (the memory starts over first when it is full).
    fn change(&mut self, client_id: &str, change: impl FnOnce(&mut Pairs)) {
        if self.len >= REMEMBERED {
            self.sessions.clear();
            self.len = 0;
        }
        let pairs = self.sessions.entry(client_id.to_string()).or_default();
        let before = pairs.size();
        change(pairs);
        self.len = self.len - before + pairs.size();
    }

    /// Where the writes stand, to give [`Self::read`] when a read from the
    /// store comes back.
    pub(super) fn epoch(&self) -> u64 {
        self.epoch
    }

    /// A pair read from the store, which began at `epoch`: kept when
    /// nothing was written or forgotten since.
    pub(super) fn read(&mut self, client_id: &str, lid: &str, phone: &str, epoch: u64) {
        if epoch == self.epoch {
            self.pair(client_id, lid, phone);
        }
    }

    /// A pair written to the store.
    pub(super) fn wrote(&mut self, client_id: &str, lid: &str, phone: &str) {
        self.epoch += 1;
        self.pair(client_id, lid, phone);
    }

    /// `lid` is `phone` now: the phone `lid` had before, and the LID that
    /// had `phone`, are forgotten, as the store forgets them.
    fn pair(&mut self, client_id: &str, lid: &str, phone: &str) {
        if lid.is_empty() || phone.is_empty() {
            return;
        }
        self.change(client_id, |pairs| {
            if let Some(old) = pairs.phones.insert(lid.to_string(), phone.to_string())
                && old != phone
            {
                pairs.lids.remove(&old);
            }
            if let Some(other) = pairs.lids.insert(phone.to_string(), lid.to_string())
                && other != lid
            {
                pairs.phones.remove(&other);
            }
        });
    }

    /// Everything known of `client_id`'s contacts: the session starts or
    /// ends here, and another worker may learn meanwhile.
    pub(super) fn forget(&mut self, client_id: &str) {
        self.epoch += 1;
        if let Some(pairs) = self.sessions.remove(client_id) {
            self.len -= pairs.size();
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::KnownPairs;

    #[test]
    fn a_phone_that_moves_to_another_lid_leaves_the_first() {
        let mut known = KnownPairs::default();
        known.wrote("s", "100", "491");
        known.wrote("s", "200", "491");
        assert_eq!(known.lid("s", "491").as_deref(), Some("200"));
        assert_eq!(known.phone("s", "100"), None);
        assert_eq!(known.phone("s", "200").as_deref(), Some("491"));
        assert_eq!(known.len(), 1);
    }

    #[test]
    fn a_lid_with_a_new_phone_no_longer_answers_for_the_old_one() {
        let mut known = KnownPairs::default();
        known.wrote("s", "100", "491");
        known.wrote("s", "100", "492");
        assert_eq!(known.lid("s", "491"), None);
        assert_eq!(known.lid("s", "492").as_deref(), Some("100"));
        assert_eq!(known.len(), 1);
    }

    #[test]
    fn sessions_are_apart_and_forgotten_one_at_a_time() {
        let mut known = KnownPairs::default();
        known.wrote("a", "100", "491");
        known.wrote("b", "200", "491");
        known.wrote("b", "300", "");
        assert_eq!(known.lid("a", "491").as_deref(), Some("100"));
        assert_eq!(known.lid("b", "491").as_deref(), Some("200"));
        assert_eq!(known.len(), 2);
        known.forget("b");
        assert_eq!(known.lid("b", "491"), None);
        assert_eq!(known.lid("a", "491").as_deref(), Some("100"));
        assert_eq!(known.len(), 1);
    }

    #[test]
    fn a_name_is_known_once_written_and_forgotten_with_its_session() {
        let mut known = KnownPairs::default();
        known.wrote("s", "100", "491");
        assert!(!known.has_name("s", "100", "Ana"));
        known.wrote_name("s", "100", "Ana");
        known.wrote_name("s", "100", "");
        assert!(known.has_name("s", "100", "Ana"));
        assert!(!known.has_name("s", "100", "Bea"));
        assert_eq!(known.len(), 2);
        known.forget("s");
        assert!(!known.has_name("s", "100", "Ana"));
        assert_eq!(known.len(), 0);
    }

    #[test]
    fn a_read_that_began_before_a_write_is_not_kept() {
        let mut known = KnownPairs::default();
        let began = known.epoch();
        known.wrote("s", "200", "491");
        known.read("s", "100", "491", began);
        assert_eq!(known.lid("s", "491").as_deref(), Some("200"));
        let began = known.epoch();
        known.read("s", "300", "492", began);
        assert_eq!(known.lid("s", "492").as_deref(), Some("300"));
        let began = known.epoch();
        known.forget("s");
        known.read("s", "300", "492", began);
        assert_eq!(known.lid("s", "492"), None);
    }
}
