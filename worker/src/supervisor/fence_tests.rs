//! A fenced-out owner: once a newer owner's fence is in the database, the old
//! owner's event log refuses its messages, it never acknowledges one to the
//! network (nor answers a sandbox operation 200), and it stops serving the
//! session at once, without waiting for its lease renewal to fail. And a
//! claim goes above the last fence the database saw, whatever the lease
//! store remembers and the clocks say.
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use parley_network_sandbox::ops::SandboxOp;
use parley_shared::db::StatePatch;

use super::fakes::{FakeSandbox, World, cid, eventually, logged_events, text_received};
use super::tests::wiring;
use super::{Claim, Origin, Supervisor};
use crate::network::NetworkEvent;

const PHONE: &str = "4915112345678";

/// A logged session `s1`, connected on worker `a`.
async fn connected(world: &World) -> Supervisor {
    let a = Supervisor::new(super::Wiring {
        events: logged_events(&world.db),
        control: Some(Arc::new(FakeSandbox(world.network.clone()))),
        ..wiring(world, "a")
    });
    world.create(&cid("s1")).await;
    a.claim(&cid("s1"), Origin::Start).await.unwrap();
    world.network.link(&cid("s1"), PHONE).await;
    eventually("connected", || async {
        world.row(&cid("s1")).await.is_some_and(|r| r.connected)
    })
    .await;
    a
}

/// What a newer owner's claim leaves in the database: a larger fence.
async fn newer_owner_claims(world: &World) {
    owner_with_a_clock_ahead(world, Duration::from_secs(1)).await;
}

/// What the claim of an owner whose clock ran `ahead` of this machine's
/// leaves in the database (worker `b`); the fence it wrote.
async fn owner_with_a_clock_ahead(world: &World, ahead: Duration) -> u64 {
    let newer = StatePatch {
        pod_name: Some("b".into()),
        ..StatePatch::default()
    };
    let ahead = u64::try_from(ahead.as_micros()).unwrap();
    let fence = u64::try_from(Utc::now().timestamp_micros()).unwrap() + ahead;
    assert!(world.db.fenced_update("s1", fence, newer).await.unwrap());
    fence
}

#[tokio::test]
async fn a_fenced_out_owner_never_acknowledges_a_message_and_stops_at_once() {
    let world = World::new().await;
    let a = connected(&world).await;
    world
        .network
        .emit(
            &cid("s1"),
            NetworkEvent::Message(Box::new(text_received("BEFORE1"))),
        )
        .await;
    eventually("the first message acknowledged", || async {
        !world.network.acks().is_empty()
    })
    .await;
    assert_eq!(
        world.network.acks()[0].2,
        Ok(()),
        "logged, then acknowledged"
    );

    newer_owner_claims(&world).await;
    // a's lease is still renewed: only the log's fence tells it.
    world
        .network
        .emit(
            &cid("s1"),
            NetworkEvent::Message(Box::new(text_received("AFTER1"))),
        )
        .await;
    eventually("the second message answered", || async {
        world.network.acks().len() == 2
    })
    .await;
    let (_, id, outcome) = &world.network.acks()[1];
    assert_eq!(id, "AFTER1");
    let refused = outcome.as_ref().expect_err("never acknowledged");
    assert!(refused.contains("another worker"), "{refused}");

    // The owner stops at once: its connection closed, the session gone from it,
    // well before its lease (2 s here) could have lapsed.
    let t = tokio::time::Instant::now();
    eventually("the fenced-out owner stops", || async {
        a.status_of(&cid("s1")).is_none() && world.network.drivers(&cid("s1")) == 0
    })
    .await;
    assert!(
        t.elapsed() < Duration::from_millis(1_500),
        "{:?}",
        t.elapsed()
    );
    let logged = world.db.events_after("s1", 0, 10).await.unwrap();
    let ids: Vec<&str> = logged.iter().map(|e| e.event_id.as_str()).collect();
    assert_eq!(
        ids,
        ["msg_s1_BEFORE1"],
        "the refused message is not in the log"
    );
}

#[tokio::test]
async fn a_fenced_out_owner_answers_a_sandbox_message_503() {
    let world = World::new().await;
    let _a = connected(&world).await;
    newer_owner_claims(&world).await;
    let inject = SandboxOp::Message(
        serde_json::from_value(serde_json::json!({
            "from": "4915100000001",
            "content": {"type": "text", "body": "hi"}
        }))
        .unwrap(),
    );
    let reply = world
        .send(&cid("s1"), inject.command().unwrap())
        .await
        .unwrap();
    let error = reply.expect_err("not taken");
    assert_eq!(error.status, 503, "{error:?}");
    assert!(error.message.contains("send it again"), "{error:?}");
}

/// The session's last owner ran with a clock an hour ahead of this worker's,
/// and the lease store then forgot its fences (Redis restarted without
/// persistence: this worker's store never saw that grant). The claim still
/// goes above the fence in the database instead of being refused as
/// superseded until this worker's clock catches up.
#[tokio::test]
async fn a_claim_goes_above_a_fence_the_lease_store_forgot() {
    let world = World::new().await;
    world.create(&cid("s1")).await;
    let last = owner_with_a_clock_ahead(&world, Duration::from_secs(3600)).await;
    let a = world.supervisor("a");
    let claim = a.claim(&cid("s1"), Origin::Start).await.unwrap();
    assert!(matches!(claim, Claim::Ours { .. }), "{claim:?}");
    let row = world.row(&cid("s1")).await.unwrap();
    assert_eq!(row.pod_name, "a");
    assert!(
        u64::try_from(row.fence).unwrap() > last,
        "{} > {last}",
        row.fence
    );
    world.network.link(&cid("s1"), PHONE).await;
    eventually("connected", || async {
        world.row(&cid("s1")).await.is_some_and(|r| r.connected)
    })
    .await;
}
