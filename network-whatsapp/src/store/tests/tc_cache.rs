//! Privacy tokens read from memory stay what the database holds: every
//! write through any store of the session drops the contact's entry, and
//! what another owner wrote is read again when the session comes back.
use whatsapp_rust::wacore::store::traits::{ProtocolStore, TcTokenEntry};

use super::{Fixture, claim, store};
use crate::store::OpenStores;

const A: &str = "100000000000001@lid";
const B: &str = "100000000000002@lid";

fn token(store: &Option<TcTokenEntry>) -> Option<(Vec<u8>, Option<i64>)> {
    store
        .as_ref()
        .map(|e| (e.token.clone(), e.sender_timestamp))
}

fn entry(token: &[u8], at: i64) -> TcTokenEntry {
    TcTokenEntry {
        token: token.to_vec(),
        token_timestamp: at,
        sender_timestamp: None,
    }
}

pub(super) async fn tokens_read_from_memory_follow_every_write(f: &Fixture) {
    f.owner("tc", 1).await;
    let open = OpenStores::default();
    let first = open.open(&f.db, "tc", 1).expect("store");
    // An earlier connection's store of the session, in the same process.
    let earlier = open.open(&f.db, "tc", 1).expect("store");
    let read = |s: &crate::store::SeaOrmDeviceStore| {
        let s = s.clone();
        async move { token(&s.get_tc_token(A).await.expect("get")) }
    };

    assert_eq!(read(&first).await, None);
    first
        .store_received_tc_token(A, b"one", 10)
        .await
        .expect("received");
    assert_eq!(read(&first).await, Some((b"one".to_vec(), None)));
    first
        .touch_tc_token_sender_timestamp(A, 20)
        .await
        .expect("touch");
    assert_eq!(read(&first).await, Some((b"one".to_vec(), Some(20))));
    earlier
        .put_tc_token(A, &entry(b"two", 30))
        .await
        .expect("put");
    assert_eq!(read(&first).await, Some((b"two".to_vec(), None)));
    earlier.delete_tc_token(A).await.expect("delete");
    assert_eq!(read(&first).await, None);

    first
        .put_tc_token(A, &entry(b"three", 5))
        .await
        .expect("put");
    first.put_tc_token(B, &entry(b"b", 5)).await.expect("put");
    assert_eq!(read(&first).await, Some((b"three".to_vec(), None)));
    assert_eq!(
        first
            .delete_expired_tc_tokens(50, 50)
            .await
            .expect("expire"),
        2
    );
    assert_eq!(read(&first).await, None);

    // Another process owns the session a while and writes a token; back
    // here under a newer fence, the session reads it, not what it kept.
    first
        .put_tc_token(A, &entry(b"ours", 60))
        .await
        .expect("put");
    assert_eq!(read(&first).await, Some((b"ours".to_vec(), None)));
    claim(&f.db, "tc", 2).await;
    let elsewhere = store(&f.other_process().await, "tc", 2);
    elsewhere
        .put_tc_token(A, &entry(b"theirs", 70))
        .await
        .expect("put");
    claim(&f.db, "tc", 3).await;
    let back = open.open(&f.db, "tc", 3).expect("store");
    assert_eq!(read(&back).await, Some((b"theirs".to_vec(), None)));
}
