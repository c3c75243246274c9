//! The lease contract, run against the in-process store and Redis.
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use parley_shared::lease::memory::MemoryLeases;
use parley_shared::lease::redis::RedisLeases;
use parley_shared::lease::{Gone, Lease, Leases, Member};
use tokio::time::Instant;

use crate::support::{redis_url, unique};

/// Opens a handle on the store under the given prefix; handles opened under one
/// prefix see the same leases (two Redis connections, or one in-process store).
type Open = Arc<dyn Fn(String) -> BoxFuture<'static, Arc<dyn Leases>> + Send + Sync>;

fn memory() -> Open {
    // In-process stores have no prefix: the opener's one store is the test's own.
    let store = MemoryLeases::new();
    Arc::new(move |_prefix| {
        let store: Arc<dyn Leases> = Arc::new(store.clone());
        Box::pin(async move { store })
    })
}

fn redis() -> Open {
    Arc::new(|prefix| {
        Box::pin(async move {
            let store = RedisLeases::connect(&redis_url(), &prefix).await;
            let store = store.unwrap_or_else(|e| panic!("Redis must run at {}: {e}", redis_url()));
            Arc::new(store) as Arc<dyn Leases>
        })
    })
}

/// Expands every case into one test per adapter.
macro_rules! contract_tests {
    ($adapter:ident, $open:expr) => {
        mod $adapter {
            cases!($open; one_holder_under_contention, acquire_while_held_is_refused,
                renew_before_and_after_expiry, release_lets_another_acquire_at_once,
                stale_lease_cannot_renew_or_release, fence_grows_across_grants,
                a_grant_is_above_the_floor_it_is_given,
                a_lease_of_a_holder_that_is_no_member_is_taken_over,
                a_lease_of_a_silent_holder_is_taken_over_only_as_silent_as_named,
                holders_are_reported, members_announce_expire_withdraw,
                api_pods_are_apart_from_members_and_expire, healthy);
        }
    };
}

macro_rules! cases {
    ($open:expr; $($case:ident),*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                super::$case($open).await;
            }
        )*
    };
}

contract_tests!(memory, super::memory());
contract_tests!(redis, super::redis());

const LONG: Duration = Duration::from_secs(30);
const SHORT: Duration = Duration::from_millis(150);

/// Two handles on one fresh store.
async fn two(open: &Open) -> (Arc<dyn Leases>, Arc<dyn Leases>) {
    let prefix = unique("lease");
    (open(prefix.clone()).await, open(prefix).await)
}

/// Waits until `check` holds; fails the test after a few seconds.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(5);
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Acquires `key` for `holder` as soon as the current lease expires.
async fn acquire_after_expiry(store: &Arc<dyn Leases>, key: &str, holder: &str) -> Lease {
    acquire_when_granted(store, key, holder, LONG).await
}

/// Acquires `key` for `holder`, for `ttl`, as soon as it is granted.
async fn acquire_when_granted(
    store: &Arc<dyn Leases>,
    key: &str,
    holder: &str,
    ttl: Duration,
) -> Lease {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(lease) = store.acquire(key, holder, ttl, 0).await.unwrap() {
            return lease;
        }
        assert!(Instant::now() < deadline, "{key} was never granted");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn one_holder_under_contention(open: Open) {
    let (a, b) = two(&open).await;
    let mut last_fence = 0;
    for round in 0..200 {
        let race = |store: Arc<dyn Leases>, holder: &'static str| {
            tokio::spawn(async move {
                store
                    .acquire("session:race", holder, LONG, 0)
                    .await
                    .unwrap()
            })
        };
        let (won_a, won_b) = tokio::join!(race(a.clone(), "a"), race(b.clone(), "b"));
        let winners: Vec<Lease> = [won_a.unwrap(), won_b.unwrap()]
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: winners {winners:?}");
        assert!(
            winners[0].fence > last_fence,
            "round {round}: fence did not grow"
        );
        last_fence = winners[0].fence;
        assert!(
            a.release(&winners[0]).await.unwrap(),
            "round {round}: release"
        );
    }
}

async fn acquire_while_held_is_refused(open: Open) {
    let (a, b) = two(&open).await;
    let lease = a
        .acquire("session:held", "a", LONG, 0)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (lease.key.as_str(), lease.holder.as_str()),
        ("session:held", "a")
    );
    assert_eq!(b.acquire("session:held", "b", LONG, 0).await.unwrap(), None);
    assert_eq!(a.acquire("session:held", "a", LONG, 0).await.unwrap(), None);
    // Other keys are independent.
    assert!(
        b.acquire("session:other", "b", LONG, 0)
            .await
            .unwrap()
            .is_some()
    );
}

async fn renew_before_and_after_expiry(open: Open) {
    let (a, b) = two(&open).await;
    let lease = a
        .acquire("session:renew", "a", SHORT, 0)
        .await
        .unwrap()
        .unwrap();
    assert!(a.renew(&lease, Duration::from_secs(2)).await.unwrap());
    // Well past the first TTL, the renewed lease still holds.
    tokio::time::sleep(SHORT * 2).await;
    assert_eq!(
        b.acquire("session:renew", "b", LONG, 0).await.unwrap(),
        None
    );

    assert!(a.renew(&lease, SHORT).await.unwrap());
    let key = ["session:renew".to_string()];
    eventually("the lease expires", || async {
        b.holders(&key).await.unwrap() == [None::<String>]
    })
    .await;
    assert!(!a.renew(&lease, LONG).await.unwrap());
    assert!(
        b.acquire("session:renew", "b", LONG, 0)
            .await
            .unwrap()
            .is_some()
    );
}

async fn release_lets_another_acquire_at_once(open: Open) {
    let (a, b) = two(&open).await;
    let lease = a
        .acquire("session:release", "a", LONG, 0)
        .await
        .unwrap()
        .unwrap();
    assert!(a.release(&lease).await.unwrap());
    let next = b.acquire("session:release", "b", LONG, 0).await.unwrap();
    assert_eq!(next.map(|l| l.holder).as_deref(), Some("b"));
    assert!(
        !a.release(&lease).await.unwrap(),
        "a second release is refused"
    );
}

async fn stale_lease_cannot_renew_or_release(open: Open) {
    let (a, b) = two(&open).await;
    let stale = a
        .acquire("session:stale", "a", SHORT, 0)
        .await
        .unwrap()
        .unwrap();
    let fresh = acquire_after_expiry(&b, "session:stale", "b").await;

    assert!(!a.renew(&stale, LONG).await.unwrap());
    assert!(!a.release(&stale).await.unwrap());
    // The token decides: same key, holder and fence with another grant's token is refused.
    let held = b
        .acquire("session:stale2", "a", LONG, 0)
        .await
        .unwrap()
        .unwrap();
    let impostor = Lease {
        token: stale.token.clone(),
        ..held.clone()
    };
    assert!(!a.renew(&impostor, LONG).await.unwrap());
    assert!(!a.release(&impostor).await.unwrap());
    assert!(a.release(&held).await.unwrap());

    let key = ["session:stale".to_string()];
    assert_eq!(a.holders(&key).await.unwrap(), [Some("b".to_string())]);
    assert!(b.renew(&fresh, LONG).await.unwrap());
    assert!(b.release(&fresh).await.unwrap());
}

async fn fence_grows_across_grants(open: Open) {
    let (a, b) = two(&open).await;
    let first = a
        .acquire("session:fence", "a", LONG, 0)
        .await
        .unwrap()
        .unwrap();
    assert!(a.release(&first).await.unwrap());
    let second = b
        .acquire("session:fence", "b", SHORT, 0)
        .await
        .unwrap()
        .unwrap();
    assert!(
        second.fence > first.fence,
        "after release: {} > {}",
        second.fence,
        first.fence
    );
    let third = acquire_after_expiry(&a, "session:fence", "a").await;
    assert!(
        third.fence > second.fence,
        "after expiry: {} > {}",
        third.fence,
        second.fence
    );
    assert_ne!(third.token, first.token);
}

/// The floor is the last fence a key's stored rows saw: a store that forgot
/// its counter (Redis without persistence) or a worker whose clock is behind
/// the last owner's still grants above it.
async fn a_grant_is_above_the_floor_it_is_given(open: Open) {
    let (a, b) = two(&open).await;
    // As if the last owner's clock ran an hour ahead of this one's.
    let ahead = u64::try_from(chrono::Utc::now().timestamp_micros()).unwrap() + 3_600_000_000;
    let first = a
        .acquire("session:floor", "a", LONG, ahead)
        .await
        .unwrap()
        .unwrap();
    assert!(first.fence > ahead, "{} > {ahead}", first.fence);
    assert!(a.release(&first).await.unwrap());
    // The store remembers its own grants: a lower floor changes nothing.
    let second = b
        .acquire("session:floor", "b", LONG, 0)
        .await
        .unwrap()
        .unwrap();
    assert!(
        second.fence > first.fence,
        "{} > {}",
        second.fence,
        first.fence
    );
}

/// A lease whose holder is no live member (it died, or lost the store) is
/// taken over at once, before it expires, with a larger fence, and its old
/// holder can no longer renew it; a holder that is a live member, or
/// another holder than the one named, keeps it.
async fn a_lease_of_a_holder_that_is_no_member_is_taken_over(open: Open) {
    let (a, b) = two(&open).await;
    let key = "session:take";
    a.announce("a", 1, LONG).await.unwrap();
    let held = a.acquire(key, "a", LONG, 0).await.unwrap().unwrap();
    let refused = b
        .take_over(key, "b", ("a", Gone::Lapsed), LONG, 0)
        .await
        .unwrap();
    assert_eq!(refused, None, "a is a member");
    let refused = b
        .take_over(key, "b", ("c", Gone::Lapsed), LONG, 0)
        .await
        .unwrap();
    assert_eq!(refused, None, "c does not hold it");
    a.withdraw("a").await.unwrap();
    let taken = b
        .take_over(key, "b", ("a", Gone::Lapsed), LONG, 0)
        .await
        .unwrap()
        .expect("taken over from a holder that is no member");
    assert!(taken.fence > held.fence, "{} > {}", taken.fence, held.fence);
    assert!(
        !a.renew(&held, LONG).await.unwrap(),
        "its old holder lost it"
    );
    let keys = [key.to_string()];
    assert_eq!(a.holders(&keys).await.unwrap(), [Some("b".to_string())]);
    // Nobody holds it: taken as it is acquired.
    assert!(b.release(&taken).await.unwrap());
    assert!(
        a.take_over(key, "a", ("b", Gone::Lapsed), LONG, 0)
            .await
            .unwrap()
            .is_some()
    );
    // A holder whose name the one named begins with is another holder.
    a.acquire("session:take2", "worker|1", LONG, 0)
        .await
        .unwrap()
        .unwrap();
    let refused = b
        .take_over("session:take2", "b", ("worker", Gone::Lapsed), LONG, 0)
        .await;
    assert_eq!(refused.unwrap(), None);
}

/// A holder that is still a member but stopped announcing itself (and is
/// known gone by other means) is taken over only when its membership has
/// at most as long left as the caller names: an announcement in between
/// keeps the lease where it is.
async fn a_lease_of_a_silent_holder_is_taken_over_only_as_silent_as_named(open: Open) {
    let (a, b) = two(&open).await;
    let key = "session:silent";
    a.announce("a", 1, LONG).await.unwrap();
    let held = a.acquire(key, "a", LONG, 0).await.unwrap().unwrap();
    let left = a.members().await.unwrap()[0].left;
    assert!(left <= LONG && left > LONG / 2, "{left:?} of {LONG:?}");
    let barely = Gone::Silent {
        left_at_most: LONG / 2,
    };
    let refused = b.take_over(key, "b", ("a", barely), LONG, 0).await.unwrap();
    assert_eq!(refused, None, "a announced itself too recently");
    let lapsed = b.take_over(key, "b", ("a", Gone::Lapsed), LONG, 0);
    assert_eq!(lapsed.await.unwrap(), None, "a is a member");
    let silent = Gone::Silent { left_at_most: LONG };
    let taken = b
        .take_over(key, "b", ("a", silent), LONG, 0)
        .await
        .unwrap()
        .expect("taken over from a holder silent long enough");
    assert!(taken.fence > held.fence, "{} > {}", taken.fence, held.fence);
    assert!(
        !a.renew(&held, LONG).await.unwrap(),
        "its old holder lost it"
    );
    // Only from the holder named.
    let refused = a.take_over(key, "a", ("c", silent), LONG, 0).await.unwrap();
    assert_eq!(refused, None, "c does not hold it");
    a.withdraw("a").await.unwrap();
}

/// Each member's name and load.
fn loads(members: Vec<Member>) -> Vec<(String, u64)> {
    members.into_iter().map(|m| (m.name, m.load)).collect()
}

async fn holders_are_reported(open: Open) {
    let (a, b) = two(&open).await;
    a.acquire("session:h1", "worker|1", LONG, 0)
        .await
        .unwrap()
        .unwrap();
    b.acquire("session:h3", "worker-2", LONG, 0)
        .await
        .unwrap()
        .unwrap();
    let keys: Vec<String> = ["session:h1", "session:h2", "session:h3"]
        .map(String::from)
        .into();
    let expected = vec![
        Some("worker|1".to_string()),
        None,
        Some("worker-2".to_string()),
    ];
    assert_eq!(a.holders(&keys).await.unwrap(), expected);
    assert_eq!(b.holders(&keys).await.unwrap(), expected);
    assert!(a.holders(&[]).await.unwrap().is_empty());
}

async fn members_announce_expire_withdraw(open: Open) {
    let (a, b) = two(&open).await;
    assert!(a.members().await.unwrap().is_empty());
    a.announce("w2", 3, LONG).await.unwrap();
    b.announce("w1", 5, SHORT).await.unwrap();
    let both = vec![("w1".to_string(), 5), ("w2".to_string(), 3)];
    assert_eq!(loads(a.members().await.unwrap()), both);

    a.announce("w2", 4, LONG).await.unwrap();
    let only_w2 = vec![("w2".to_string(), 4)];
    eventually("w1 expires", || async {
        loads(b.members().await.unwrap()) == only_w2
    })
    .await;

    a.withdraw("w2").await.unwrap();
    assert!(b.members().await.unwrap().is_empty());
    a.withdraw("w2").await.unwrap();
}

async fn api_pods_are_apart_from_members_and_expire(open: Open) {
    let (a, b) = two(&open).await;
    assert!(a.api_pods().await.unwrap().is_empty());
    a.announce_api_pod("api-b", LONG).await.unwrap();
    b.announce_api_pod("api-a", SHORT).await.unwrap();
    b.announce("w1", 2, LONG).await.unwrap();
    assert_eq!(a.api_pods().await.unwrap(), ["api-a", "api-b"]);
    assert_eq!(
        loads(a.members().await.unwrap()),
        [("w1".to_string(), 2)],
        "API pods are not workers"
    );
    eventually("api-a expires", || async {
        b.api_pods().await.unwrap() == ["api-b"]
    })
    .await;
    a.withdraw("w1").await.unwrap();
}

async fn healthy(open: Open) {
    let (store, _) = two(&open).await;
    assert!(store.healthy().await);
    assert!(["redis", "in-process"].contains(&store.kind()));
}

/// Removes every key under `prefix`, as a Redis restarted without persistence
/// (or flushed) would have lost them.
async fn lose_data(prefix: &str) {
    let client = ::redis::Client::open(redis_url()).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = ::redis::cmd("KEYS")
        .arg(format!("{prefix}:*"))
        .query_async(&mut connection)
        .await
        .unwrap();
    assert!(!keys.is_empty(), "the store held keys under {prefix}");
    let _: () = ::redis::cmd("DEL")
        .arg(&keys)
        .query_async(&mut connection)
        .await
        .unwrap();
}

/// Redis only (the in-process store cannot lose its data): after a loss, a
/// live owner's renewal takes its lease back with its fence, and nobody else
/// is granted a lease until the store has settled for a lease time; a lease
/// that merely expired is still not taken back; fences keep growing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_that_lost_its_data_lets_owners_take_their_leases_back_first() {
    let prefix = unique("lease");
    let open = redis();
    let (a, b) = (open(prefix.clone()).await, open(prefix.clone()).await);
    // d connects before the store has an epoch (no grant yet).
    let d = open(prefix.clone()).await;
    let owned = a
        .acquire("session:kept", "a", LONG, 0)
        .await
        .unwrap()
        .unwrap();
    let expiring = a
        .acquire("session:expiring", "a", SHORT, 0)
        .await
        .unwrap()
        .unwrap();
    // c knew the store before the loss (it connected after the first grant),
    // and d looked a holder up, though neither claimed anything.
    let c = open(prefix.clone()).await;
    let kept = ["session:kept".to_string()];
    assert_eq!(d.holders(&kept).await.unwrap(), [Some("a".to_string())]);
    // b has seen the store before the loss too.
    b.acquire("session:b", "b", LONG, 0).await.unwrap().unwrap();

    assert!(b.reset_seen().is_none() && c.reset_seen().is_none());
    lose_data(&prefix).await;
    // A handle finds the loss with its next holder lookup, as a sweep's.
    assert!(c.reset_seen().is_none(), "not looked yet");
    c.holders(&kept).await.unwrap();
    assert!(c.reset_seen().is_some(), "a lookup finds the loss");
    // Settling: no grant, not even of a key nobody holds, for the TTL asked.
    assert_eq!(b.acquire("session:kept", "b", LONG, 0).await.unwrap(), None);
    assert!(b.reset_seen().is_some(), "a claim finds the loss");
    assert_eq!(b.acquire("session:new", "b", LONG, 0).await.unwrap(), None);
    assert_eq!(c.acquire("session:new", "c", LONG, 0).await.unwrap(), None);
    assert_eq!(d.acquire("session:new", "d", LONG, 0).await.unwrap(), None);
    // The owner's renewal takes its lease back.
    assert!(a.renew(&owned, LONG).await.unwrap(), "taken back");
    let key = ["session:kept".to_string()];
    assert_eq!(b.holders(&key).await.unwrap(), [Some("a".to_string())]);
    assert!(a.renew(&owned, LONG).await.unwrap(), "and renewed as usual");

    // Once settled (a short settling time here), grants resume; the taken
    // back lease still holds, and new fences are above the old ones.
    let fresh = acquire_when_granted(&b, "session:new", "b", SHORT).await;
    assert_eq!(
        b.acquire("session:kept", "b", SHORT, 0).await.unwrap(),
        None
    );
    assert!(fresh.fence > owned.fence);
    // A lease that expires after the loss is lost as usual.
    let again = acquire_when_granted(&a, "session:expiring", "a", SHORT).await;
    assert!(again.fence > expiring.fence);
    let short = b
        .acquire("session:short", "b", SHORT, 0)
        .await
        .unwrap()
        .unwrap();
    let key = ["session:short".to_string()];
    eventually("the short lease expires", || async {
        b.holders(&key).await.unwrap() == [None::<String>]
    })
    .await;
    assert!(!b.renew(&short, LONG).await.unwrap(), "expired, not lost");
    assert!(a.release(&owned).await.unwrap());
}

/// A worker that never saw the store before the loss (started after it)
/// is not held back, but the handles that did see it notice the new epoch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handle_new_to_the_store_is_not_held_back() {
    let prefix = unique("lease");
    let open = redis();
    let a = open(prefix.clone()).await;
    let lease = a.acquire("session:x", "a", LONG, 0).await.unwrap().unwrap();
    lose_data(&prefix).await;
    let newcomer = open(prefix.clone()).await;
    let taken = newcomer.acquire("session:x", "c", LONG, 0).await.unwrap();
    assert!(taken.is_some(), "no earlier epoch known: granted");
    assert!(newcomer.reset_seen().is_none());
    // The old owner learns at its next renewal that another holds it.
    assert!(!a.renew(&lease, LONG).await.unwrap());
    // And marks the store as settling for the others that knew it.
    assert_eq!(a.acquire("session:y", "a", LONG, 0).await.unwrap(), None);
}
