//! A worker that is no member: its sessions are taken over at once by the
//! others' sweeps, before their leases expire; and a worker that cannot
//! announce itself closes its sessions before its membership lapses,
//! records them as not connected, and claims nothing until it is a member
//! again.
use std::time::Duration;

use tokio::sync::watch;

use super::fakes::{World, cid, eventually};
use super::tests::wiring;
use super::{Claim, ClaimError, Origin, Supervisor};

const PHONE: &str = "4915112345678";

/// `s1`, connected on `a`.
async fn connected_on(world: &World, a: &Supervisor) {
    world.create(&cid("s1")).await;
    let claim = a.claim(&cid("s1"), Origin::Start).await.unwrap();
    assert!(matches!(claim, Claim::Ours { .. }), "{claim:?}");
    world.network.link(&cid("s1"), PHONE).await;
    eventually("connected", || async {
        world.row(&cid("s1")).await.is_some_and(|r| r.connected)
    })
    .await;
}

#[tokio::test]
async fn a_session_of_a_worker_that_is_no_member_is_taken_over_at_once() {
    let world = World::new().await;
    let (a, b) = (world.supervisor("a"), world.supervisor("b"));
    connected_on(&world, &a).await;
    let first = world.row(&cid("s1")).await.unwrap().fence;
    // b sees a as a member: nothing to take.
    let report = b.sweep_once().await.unwrap();
    assert!(report.claimed.is_empty(), "{report:?}");
    // a's membership lapses (its lease on s1 is still renewed).
    use parley_shared::lease::Leases as _;
    world.leases.withdraw("a").await.unwrap();
    let report = b.sweep_once().await.unwrap();
    assert_eq!(report.claimed, [cid("s1")], "{report:?}");
    assert_eq!(world.leases.holder(&cid("s1")).await.as_deref(), Some("b"));
    let row = world.row(&cid("s1")).await.unwrap();
    assert!(row.fence > first, "{} > {first}", row.fence);
    assert_eq!(row.pod_name, "b");
    // a's next renewal finds the lease gone: it stops serving s1.
    eventually("a stops", || async { a.load() == 0 }).await;
    eventually("connected on b", || async {
        world.row(&cid("s1")).await.is_some_and(|r| r.connected)
    })
    .await;
}

#[tokio::test]
async fn a_worker_that_cannot_announce_itself_closes_its_sessions_and_claims_nothing() {
    let world = World::new().await;
    let mut timing = super::fakes::fast_timing();
    timing.member_ttl = Duration::from_millis(800);
    timing.member_every = Duration::from_millis(100);
    let a = Supervisor::new(super::Wiring {
        timing,
        ..wiring(&world, "a")
    });
    let (stop, stopped) = watch::channel(false);
    let presence = tokio::spawn(crate::presence::run(a.clone(), stopped));
    connected_on(&world, &a).await;
    world.create(&cid("s2")).await;

    world.leases.refuse_announcements(true);
    eventually("a closes its sessions", || async { a.load() == 0 }).await;
    // And says so: the session no longer shows connected.
    eventually("s1 recorded as not connected", || async {
        world.row(&cid("s1")).await.is_some_and(|r| !r.connected)
    })
    .await;
    let refused = a.claim(&cid("s2"), Origin::Start).await;
    assert!(
        matches!(refused, Err(ClaimError::NotAMember)),
        "{refused:?}"
    );

    world.leases.refuse_announcements(false);
    eventually("a claims again", || async {
        matches!(
            a.claim(&cid("s2"), Origin::Start).await,
            Ok(Claim::Ours { .. })
        )
    })
    .await;
    let _ = stop.send(true);
    presence.await.unwrap();
}
