//! Handing sessions over to spread load: the chosen worker takes a shed
//! session up at once, and starts that the queue brings back to the worker
//! that shed it go to the chosen worker instead of being taken back.
use std::time::Duration;

use parley_contract::command::Reply;
use tokio::sync::watch;

use super::Supervisor;
use super::fakes::{World, cid};
use super::start::Route;
use super::tests::wiring;
use parley_model::ids::ClientId;

/// Pod `pod`, remembering where it handed sessions over for a long while, so
/// that a slow machine does not turn these tests into tests of the memory.
fn patient_supervisor(world: &World, pod: &str) -> Supervisor {
    let mut wiring = wiring(world, pod);
    wiring.timing.orphan_grace = Duration::from_secs(30);
    Supervisor::new(wiring)
}

/// `a` alone claims sessions `s0..s{n}`; then `b` shows up, and `a` sweeps
/// until it hands one over. Returns that session.
async fn shed_one(world: &World, a: &Supervisor, b: &Supervisor, n: usize) -> ClientId {
    for i in 0..n {
        world.create(&cid(&format!("s{i}"))).await;
    }
    assert_eq!(a.sweep_once().await.unwrap().claimed.len(), n);
    b.announce().await.unwrap();
    next_handover(a).await
}

/// Sweeps `a` until it hands a session over (members settle first); panics after 10 s.
async fn next_handover(a: &Supervisor) -> ClientId {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(id) = a.sweep_once().await.unwrap().handed_over {
            return id;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no session was handed over"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn pod_of(reply: &Reply) -> &str {
    match reply {
        Reply::Status { pod_name, .. } => pod_name,
        other => panic!("expected a status reply: {other:?}"),
    }
}

#[tokio::test]
async fn a_shed_session_is_taken_up_by_the_least_loaded_worker_at_once() {
    let world = World::new().await;
    let (a, b) = (world.supervisor("a"), world.supervisor("b"));
    let (_stop, stopped) = watch::channel(false);
    let _la = a.listen_start(stopped.clone()).await.unwrap();
    let _lb = b.listen_start(stopped).await.unwrap();
    let id = shed_one(&world, &a, &b, 4).await;
    // `b` never swept: it took the session up because `a` asked it to.
    assert_eq!(world.leases.holder(&id).await.as_deref(), Some("b"));
    assert_eq!(b.owned(), vec![id.clone()]);
    assert!(!a.owned().contains(&id));
    assert_eq!(world.network.most_drivers(), 1);
}

#[tokio::test]
async fn no_session_is_shed_while_the_lease_store_settles_after_losing_its_data() {
    let world = World::new().await;
    let (a, b) = (world.supervisor("a"), world.supervisor("b"));
    for i in 0..4 {
        world.create(&cid(&format!("s{i}"))).await;
    }
    assert_eq!(a.sweep_once().await.unwrap().claimed.len(), 4);
    b.announce().await.unwrap();
    world.leases.seem_reset();
    // Members settle within 100 ms (the test timing); for a lease time (2 s)
    // after the reset, `a` keeps all it has: `b` could not claim any.
    let quiet_until = tokio::time::Instant::now() + Duration::from_millis(1500);
    while tokio::time::Instant::now() < quiet_until {
        let swept = a.sweep_once().await.unwrap();
        assert_eq!(swept.handed_over, None, "shed while the store settles");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(a.owned().len(), 4);
    // After it, spreading resumes.
    next_handover(&a).await;
}

#[tokio::test]
async fn a_start_for_a_session_just_handed_over_goes_to_the_worker_it_went_to() {
    let world = World::new().await;
    let (a, b) = (patient_supervisor(&world, "a"), world.supervisor("b"));
    let (_stop, stopped) = watch::channel(false);
    // Only `a` serves the queue, so every start below reaches it first.
    let _la = a.listen_start(stopped.clone()).await.unwrap();
    // `b` is not listening yet: asked to take the session, it does not answer.
    let id = shed_one(&world, &a, &b, 4).await;
    assert_eq!(world.leases.holder(&id).await, None, "nobody took it up");

    let (stop_b, stopped_b) = watch::channel(false);
    let lb = b.listen(Route::Direct, stopped_b).await.unwrap();
    let reply = world.start(&id).await.unwrap().unwrap();
    assert_eq!(pod_of(&reply), "b", "passed on, not taken back");
    assert_eq!(world.leases.holder(&id).await.as_deref(), Some("b"));
    assert!(!a.owned().contains(&id));

    // When the chosen worker is gone, the start is not lost: `a` claims it.
    stop_b.send(true).unwrap();
    lb.await.unwrap();
    let next = next_handover(&a).await;
    let reply = world.start(&next).await.unwrap().unwrap();
    assert_eq!(pod_of(&reply), "a");
    assert_eq!(world.leases.holder(&next).await.as_deref(), Some("a"));
    assert_eq!(world.network.most_drivers(), 1);
}

#[tokio::test]
async fn a_take_over_never_runs_a_session_that_should_not_run() {
    use parley_contract::command::Command;
    use parley_shared::bus::{START_SUBJECT, worker_start_subject};
    use parley_shared::db::SettingsPatch;

    let world = World::new().await;
    let b = world.supervisor("b");
    let (_stop, stopped) = watch::channel(false);
    let _lb = b.listen_start(stopped).await.unwrap();
    let ask = |subject: String, command: Command| {
        let world = &world;
        async move { world.ask(&subject, &command).await.unwrap() }
    };
    let take_over = |id: &str| Command::TakeOver {
        client_id: id.into(),
    };
    // Logged out between the handover and the take-over: it stays stopped.
    world.create(&cid("s1")).await;
    let stopped_for_good = SettingsPatch {
        desired: Some(false),
        ..SettingsPatch::default()
    };
    world
        .db
        .update_settings("s1", stopped_for_good)
        .await
        .unwrap();
    let refused = ask(worker_start_subject("b"), take_over("s1")).await;
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(world.leases.holder(&cid("s1")).await, None);
    assert!(b.owned().is_empty());
    // A session that should run is taken up.
    world.create(&cid("s2")).await;
    let reply = ask(worker_start_subject("b"), take_over("s2"))
        .await
        .unwrap();
    assert_eq!(pod_of(&reply), "b");
    // The shared queue serves only `/start`.
    let wrong = ask(START_SUBJECT.into(), take_over("s2")).await;
    assert_eq!(wrong.unwrap_err().status, 400);
}
