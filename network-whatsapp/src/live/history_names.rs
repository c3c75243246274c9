//! The names a phone's history gives its contacts (its `PUSH_NAME` chunk),
//! each handed over with both halves of the contact's address. The library
//! reads two history chunks at once (whatsapp-rust's sync worker), so the
//! names may come before the bootstrap chunk whose phone-to-LID mappings
//! pair them. A name whose pair is not known yet is handed over with what is
//! known (its LID alone: Parley keys contacts by LID; a name by phone alone
//! waits for its LID) and kept while the connection lasts; once a later
//! chunk made its pair known, it is handed over again, whole.
use std::sync::{Arc, Mutex, PoisonError};

use whatsapp_rust::{Client, Jid};

use parley_network::ContactName;

/// The most names kept waiting for their pair (the oldest go first).
pub(super) const UNPAIRED_KEPT: usize = 10_000;

/// A contact's LID and phone (user parts).
pub(super) type Pair = (String, String);

/// Who knows the contacts' pairs: the session's client.
pub(super) trait Pairs {
    /// The pair of the contact `jid` names (by LID or by phone), if known.
    async fn pair_of(&self, jid: &Jid) -> Option<Pair>;
}

impl Pairs for Client {
    async fn pair_of(&self, jid: &Jid) -> Option<Pair> {
        match self.get_lid_pn_entry(jid).await {
            Ok(Some(entry)) => Some((entry.lid.to_string(), entry.phone_number.to_string())),
            _ => None,
        }
    }
}

/// The names a connection's history gave whose pair was not known yet.
#[derive(Clone, Default)]
pub(super) struct UnpairedNames(Arc<Mutex<Vec<(Jid, String)>>>);

impl UnpairedNames {
    /// What to hand over after a history chunk: the names kept from earlier
    /// chunks whose pair `known` knows now, then the chunk's own names
    /// (`fresh`, by the JID the blob names them by), each paired when
    /// `known` knows its pair, else by its LID alone (a name by phone alone
    /// is not handed over yet). What is still unpaired is kept.
    pub async fn pair(&self, fresh: Vec<(Jid, String)>, known: &impl Pairs) -> Vec<ContactName> {
        let earlier = std::mem::take(&mut *self.kept());
        // The kept ones were handed over by their LID already.
        let names = earlier
            .into_iter()
            .map(|n| (n, false))
            .chain(fresh.into_iter().map(|n| (n, true)));
        let mut named = Vec::new();
        let mut unpaired = Vec::new();
        for ((jid, name), new) in names {
            match known.pair_of(&jid).await {
                Some((lid, phone)) => named.push(ContactName { lid, phone, name }),
                None => {
                    if new && jid.is_lid() {
                        named.push(ContactName {
                            lid: jid.user.to_string(),
                            phone: String::new(),
                            name: name.clone(),
                        });
                    }
                    unpaired.push((jid, name));
                }
            }
        }
        let mut kept = self.kept();
        kept.extend(unpaired);
        let over = kept.len().saturating_sub(UNPAIRED_KEPT);
        kept.drain(..over);
        named
    }

    /// How many names wait for their pair.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.kept().len()
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Vec<(Jid, String)>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
