//! Sends that reach a paired session before it is online (after a reconnect,
//! or on a new owner) wait for the connection, up to the hold: they go out
//! once, are refused with nothing sent when the hold ends, and are handed to
//! the next owner when the session moves.
use std::pin::Pin;
use std::sync::Arc;

use parley_contract::command::{CallError, Command, Outcome, Reply};
use parley_network_sandbox::ops::SandboxOp;
use std::future::Future;
use tokio::time::Instant;

use parley_model::ids::ClientId;

use super::fakes::{World, cid, eventually, fast_timing, test_fetcher};
use super::gate::GatedNetwork;
use super::send_tests::{linked, outbox, sandbox_supervisor_through, sent, text};
use super::{Origin, Supervisor};

type PendingReply<'a> = Pin<Box<dyn Future<Output = Result<Outcome, CallError>> + 'a>>;

/// Pod `pod` on the sandbox behind a gate.
fn gated_supervisor(world: &World, pod: &str) -> (Supervisor, Arc<GatedNetwork>) {
    let mut gate = None;
    let supervisor = sandbox_supervisor_through(world, test_fetcher(), pod, |sandbox| {
        let gated = Arc::new(GatedNetwork::new(sandbox));
        gate = Some(Arc::clone(&gated));
        gated
    });
    (supervisor, gate.expect("the supervisor was wired"))
}

/// `id` linked, then its connection dropped while the gate is closed: it
/// connects again on the wire but is not online.
async fn reconnecting(world: &World, id: &str) -> (Supervisor, Arc<GatedNetwork>) {
    let id = &cid(id);
    let (supervisor, gate) = gated_supervisor(world, "a");
    linked(world, &supervisor, id).await;
    gate.close();
    let drop = SandboxOp::Fault {
        op: "drop".into(),
        count: 1,
    };
    world
        .send(id, drop.command().unwrap())
        .await
        .unwrap()
        .unwrap();
    eventually("the session connected again", || {
        std::future::ready(gate.connects() >= 2)
    })
    .await;
    (supervisor, gate)
}

/// Sends `text(body)` to `id` with `request_id`, and returns its pending
/// reply once the session has taken it: commands are taken in order, so when
/// a status query sent after it is answered, the send is waiting (or, without
/// a hold, answered already).
async fn taken<'a>(
    world: &'a World,
    id: &'a ClientId,
    body: &str,
    request_id: &'a str,
) -> PendingReply<'a> {
    let mut reply: PendingReply<'a> = Box::pin(world.send_as(id, text(body), request_id));
    assert!(futures::poll!(&mut reply).is_pending());
    let status = world.send(id, Command::Qr).await.unwrap().unwrap();
    assert!(
        matches!(&status, Reply::Qr { status, .. } if status == "initializing"),
        "not online yet: {status:?}"
    );
    reply
}

async fn online(world: &World, id: &str) {
    let id = &cid(id);
    eventually("the session is online", || async {
        world.row(id).await.is_some_and(|r| r.status == "connected")
    })
    .await;
}

#[tokio::test]
async fn a_send_waits_for_the_connection_and_goes_out_once() {
    let world = World::new().await;
    let (_a, gate) = reconnecting(&world, "s1").await;
    let s1 = cid("s1");
    let first = taken(&world, &s1, "kept", "req-kept").await;
    let repeat = taken(&world, &s1, "kept", "req-kept").await;
    assert!(outbox(&world, "s1").await.is_empty());
    gate.open();
    let (first, repeat) = (first.await.unwrap(), repeat.await.unwrap());
    assert_eq!(first, repeat, "the repeat joined the waiting send");
    let id = sent(first.unwrap()).message_id;
    let rows = outbox(&world, "s1").await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].message_id, id);
}

#[tokio::test]
async fn a_send_still_offline_when_the_hold_ends_is_refused_with_nothing_sent() {
    let world = World::new().await;
    let (_a, gate) = reconnecting(&world, "s1").await;
    let started = Instant::now();
    let err = world
        .send(&cid("s1"), text("late"))
        .await
        .unwrap()
        .unwrap_err();
    let waited = started.elapsed();
    assert_eq!(err.status, 502, "{err:?}");
    assert!(err.message.contains("not connected"), "{err:?}");
    let hold = fast_timing().connect_hold;
    assert!(
        waited >= hold,
        "answered after {waited:?}, before the hold {hold:?}"
    );
    assert!(outbox(&world, "s1").await.is_empty());

    gate.open();
    online(&world, "s1").await;
    world.send(&cid("s1"), text("now")).await.unwrap().unwrap();
    assert_eq!(outbox(&world, "s1").await.len(), 1);
}

#[tokio::test]
async fn sends_waiting_when_the_session_moves_go_to_its_next_owner() {
    let world = World::new().await;
    let (a, _gate) = reconnecting(&world, "s1").await;
    let s1 = cid("s1");
    let waiting = taken(&world, &s1, "moved", "req-moved").await;
    assert!(a.hand_over(&s1).await);
    // "Moved": the caller asks again at once, instead of timing out.
    assert!(matches!(waiting.await, Err(CallError::NoOwner)));
    assert!(outbox(&world, "s1").await.is_empty());

    let (b, _open) = gated_supervisor(&world, "b");
    b.claim(&cid("s1"), Origin::Start).await.unwrap();
    online(&world, "s1").await;
    let again = world.send_as(&cid("s1"), text("moved"), "req-moved").await;
    sent(again.unwrap().unwrap());
    assert_eq!(outbox(&world, "s1").await.len(), 1);
}

#[tokio::test]
async fn more_waiting_sends_than_may_run_at_once_all_go_out() {
    let world = World::new().await;
    let (_a, gate) = reconnecting(&world, "s1").await;
    // More than the sends one session runs at once (128): the rest start as
    // the first ones finish.
    let ids: Vec<String> = (0..150).map(|i| format!("req-{i}")).collect();
    let s1 = cid("s1");
    let mut replies: Vec<PendingReply<'_>> = Vec::new();
    for id in &ids {
        let mut reply: PendingReply<'_> = Box::pin(world.send_as(&s1, text(id), id));
        assert!(futures::poll!(&mut reply).is_pending());
        replies.push(reply);
    }
    let status = world.send(&cid("s1"), Command::Qr).await.unwrap().unwrap();
    assert!(matches!(&status, Reply::Qr { status, .. } if status == "initializing"));
    gate.open();
    for reply in futures::future::join_all(replies).await {
        sent(reply.unwrap().unwrap());
    }
    assert_eq!(outbox(&world, "s1").await.len(), ids.len());
}

/// A pairing is not yet the connection: the network's client logs in again
/// after it, and a send made meanwhile waits for the login instead of
/// meeting a client that is not connected (502).
#[tokio::test]
async fn a_send_right_after_the_pairing_waits_for_the_login() {
    let world = World::new().await;
    let (supervisor, gate) = gated_supervisor(&world, "a");
    gate.close();
    let s1 = cid("s1");
    linked(&world, &supervisor, &s1).await;
    eventually("the session is paired", || async {
        world
            .row(&s1)
            .await
            .is_some_and(|r| r.logged_in && !r.jid.is_empty())
    })
    .await;
    let waiting = taken(&world, &s1, "after the scan", "req-scan").await;
    assert!(outbox(&world, "s1").await.is_empty());
    gate.open();
    let id = sent(waiting.await.unwrap().unwrap()).message_id;
    online(&world, "s1").await;
    let rows = outbox(&world, "s1").await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].message_id, id);
}
