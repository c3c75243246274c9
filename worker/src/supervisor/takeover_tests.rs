//! A worker that is no member: its sessions are taken over at once by the
//! others' sweeps, before their leases expire; and a worker that cannot
//! announce itself closes its sessions before its membership lapses,
//! records them as not connected, and claims nothing until it is a member
//! again. A member that fell silent and that the bus no longer reaches is
//! taken over before its membership lapses, and a worker that lost both
//! the bus and the store closes its sessions before that.
use std::sync::Arc;
use std::time::Duration;

use parley_shared::lease::Leases as _;
use tokio::sync::watch;

use super::fakes::{LosableBus, World, cid, eventually, fast_timing};
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
    closed_until_a_member_again(&world, &a, || world.leases.refuse_announcements(false)).await;
    let _ = stop.send(true);
    presence.await.unwrap();
}

/// `a` closes `s1` (connected on it) and records it as not connected, and
/// claims nothing (`s2`, created) until `restore` lets it be a member again.
async fn closed_until_a_member_again(world: &World, a: &Supervisor, restore: impl FnOnce()) {
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
    restore();
    eventually("a claims again", || async {
        matches!(
            a.claim(&cid("s2"), Origin::Start).await,
            Ok(Claim::Ours { .. })
        )
    })
    .await;
}

/// Fast timing in which a member silent for 300 ms that the bus does not
/// reach is gone.
fn silent_timing() -> super::Timing {
    super::Timing {
        silent_after: Some(Duration::from_millis(300)),
        ..fast_timing()
    }
}

#[tokio::test]
async fn a_silent_worker_the_bus_no_longer_reaches_is_taken_over_before_its_membership_lapses() {
    let world = World::new().await;
    let a = Supervisor::new(super::Wiring {
        timing: silent_timing(),
        ..wiring(&world, "a")
    });
    let b = Supervisor::new(super::Wiring {
        timing: silent_timing(),
        ..wiring(&world, "b")
    });
    let (stop, stopped) = watch::channel(false);
    connected_on(&world, &a).await;
    let first = world.row(&cid("s1")).await.unwrap().fence;
    // a has never answered on the bus (a worker of an older version): it is
    // not taken over while silent, only once its membership lapsed.
    eventually("a silent", || async { silent(&world).await }).await;
    let report = b.sweep_once().await.unwrap();
    assert!(report.claimed.is_empty(), "{report:?}");
    // It answers (b hears it while it announces itself).
    let alive = a.listen_alive(stopped).await.unwrap();
    a.announce().await.unwrap();
    let report = b.sweep_once().await.unwrap();
    assert!(report.claimed.is_empty(), "{report:?}");
    // a announced itself last (its membership lasts a minute): silent, but
    // it answers on the bus.
    eventually("a silent", || async { silent(&world).await }).await;
    let report = b.sweep_once().await.unwrap();
    assert!(report.claimed.is_empty(), "{report:?}");
    assert_eq!(report.live_workers, 2, "{report:?}");
    // An announcement makes it heard again, even where the bus does not
    // reach it.
    let _ = stop.send(true);
    alive.await.unwrap();
    a.announce().await.unwrap();
    let report = b.sweep_once().await.unwrap();
    assert!(report.claimed.is_empty(), "{report:?}");
    // Silent again, and nobody answers for it: gone.
    eventually("b takes s1 over", || async {
        b.sweep_once().await.unwrap().claimed == [cid("s1")]
    })
    .await;
    assert_eq!(world.leases.holder(&cid("s1")).await.as_deref(), Some("b"));
    let row = world.row(&cid("s1")).await.unwrap();
    assert!(row.fence > first, "{} > {first}", row.fence);
    eventually("a stops", || async { a.load() == 0 }).await;
}

#[tokio::test]
async fn a_worker_that_lost_the_bus_and_the_store_closes_its_sessions_before_others_take_them() {
    let world = World::new().await;
    let bus = LosableBus::new(world.bus.clone());
    // A membership of a minute: only the bus's loss closes sessions soon.
    let a = Supervisor::new(super::Wiring {
        timing: silent_timing(),
        bus: Arc::new(bus.clone()),
        ..wiring(&world, "a")
    });
    let (stop, stopped) = watch::channel(false);
    let presence = tokio::spawn(crate::presence::run(a.clone(), stopped));
    connected_on(&world, &a).await;
    world.create(&cid("s2")).await;

    // The bus lost, the store still reached: a keeps its sessions (two
    // announcements later, past the 200 ms a silent one waits).
    bus.lose(true);
    for _ in 0..2 {
        let before = left_of(&world, "a").await;
        eventually("a announced", || async {
            left_of(&world, "a").await > before
        })
        .await;
    }
    assert_eq!(a.load(), 1);

    // Both lost: a closes s1.
    world.leases.refuse_announcements(true);
    closed_until_a_member_again(&world, &a, || {
        world.leases.refuse_announcements(false);
        bus.lose(false);
    })
    .await;
    let _ = stop.send(true);
    presence.await.unwrap();
}

/// Whether `a` has not announced itself for 300 ms.
async fn silent(world: &World) -> bool {
    left_of(world, "a").await <= Duration::from_millis(59_700)
}

/// How long `member`'s membership has left.
async fn left_of(world: &World, member: &str) -> Duration {
    let members = world.leases.members().await.unwrap();
    members
        .into_iter()
        .find(|m| m.name == member)
        .map(|m| m.left)
        .unwrap_or_default()
}
