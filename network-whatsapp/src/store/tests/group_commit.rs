//! Many sessions' writes at once through one process's stores: each lands
//! or is refused on its own, and they share transactions (on SQLite the
//! event log's).
use std::sync::Arc;

use bytes::Bytes;
use whatsapp_rust::wacore::store::traits::SignalStore;

use super::{Fixture, claim};
use crate::store::{FenceRejected, OpenStores, fence_rejection};

const SESSIONS: usize = 8;
const WRITES: u8 = 4;

fn address(n: u8) -> String {
    format!("49151000000{n:02}:1@s.whatsapp.net")
}

pub(super) async fn many_sessions_write_at_once_and_a_stale_one_is_refused_alone(f: &Fixture) {
    let open = OpenStores::default();
    let mut stores = Vec::new();
    for i in 0..SESSIONS {
        let id = format!("many-{i}");
        f.owner(&id, 1).await;
        stores.push(open.open(&f.db, &id, 1).expect("store"));
    }
    // A newer owner took one of them.
    claim(&f.db, "many-3", 2).await;
    // On SQLite the writes ride in the event log's transactions.
    let (log_transactions, _) = f.db.event_log_transactions();

    let writes = stores.iter().flat_map(|s| {
        (0..WRITES).map(move |n| async move {
            let record = (Arc::<str>::from(address(n)), Bytes::from(vec![n; 8]));
            s.put_sessions_batch(&[record]).await
        })
    });
    let outcomes = futures::future::join_all(writes).await;

    for (i, (s, outcomes)) in stores
        .iter()
        .zip(outcomes.chunks(WRITES.into()))
        .enumerate()
    {
        for (n, outcome) in (0..WRITES).zip(outcomes) {
            let stored = s.get_session(&address(n)).await.expect("read");
            if i == 3 {
                let refused = outcome
                    .as_ref()
                    .expect_err("a stale owner's write is refused");
                assert!(
                    matches!(fence_rejection(refused), Some(FenceRejected::Stale { .. })),
                    "{refused}"
                );
                assert_eq!(stored, None, "nothing of a refused write is stored");
            } else {
                outcome.as_ref().expect("a current owner's write commits");
                assert_eq!(
                    stored.as_deref(),
                    Some(&[n; 8][..]),
                    "session {i}, write {n}"
                );
            }
        }
    }
    tokio::time::timeout(std::time::Duration::from_secs(5), stores[3].fenced_out())
        .await
        .expect("the stale store's connection is told to close");

    let (mut transactions, writes) = open.batched();
    if f.db.backend() == "sqlite" {
        assert_eq!(transactions, 0, "the stores have no writer of their own");
        transactions = f.db.event_log_transactions().0 - log_transactions;
    }
    assert_eq!(writes, SESSIONS as u64 * u64::from(WRITES));
    assert!(
        transactions < writes,
        "{writes} writes in {transactions} transactions"
    );
}

/// What a received message saves (its session, its sender's identity, the
/// pre-key it consumed, a group's sender key): each a batched write, none a
/// transaction of its own.
pub(super) async fn a_received_messages_signal_writes_are_all_batched(f: &Fixture) {
    let open = OpenStores::default();
    f.owner("received", 1).await;
    let s = open.open(&f.db, "received", 1).expect("store");
    s.store_prekey(7, b"pre-key", true).await.expect("pre-key");
    let before = open.batched().1;

    let peer = address(1);
    s.put_session(&peer, b"session").await.expect("session");
    s.put_identity(&peer, [4; 32]).await.expect("identity");
    s.remove_prekey(7).await.expect("pre-key removal");
    s.put_sender_key("group::peer", b"sender key")
        .await
        .expect("sender key");

    assert_eq!(open.batched().1 - before, 4, "every write batched");
    assert_eq!(s.load_identity(&peer).await.expect("read"), Some([4; 32]));
    assert_eq!(s.load_prekey(7).await.expect("read"), None);
    assert_eq!(
        s.get_sender_key("group::peer")
            .await
            .expect("read")
            .as_deref(),
        Some(&b"sender key"[..])
    );
}
