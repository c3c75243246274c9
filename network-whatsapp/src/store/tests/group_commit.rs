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
