//! The live feeds' wake-up: each event a session's owner logs is announced
//! on the session's feed subject with its `seq`, in the log's order.
use std::sync::Arc;
use std::time::Duration;

use parley_shared::bus::{Bus, feed_subject};

use super::fakes::{FakeSandbox, World, announced_events, cid, eventually, text_received};
use super::tests::wiring;
use super::{Origin, Supervisor};
use crate::network::NetworkEvent;

#[tokio::test]
async fn each_logged_event_is_announced_with_its_seq() {
    let world = World::new().await;
    let mut announced = world
        .bus
        .subscribe(&feed_subject("s1"), None)
        .await
        .unwrap();
    let a = Supervisor::new(super::Wiring {
        events: announced_events(&world.db, Some(Arc::new(world.bus.clone()))),
        control: Some(Arc::new(FakeSandbox(world.network.clone()))),
        ..wiring(&world, "a")
    });
    world.create(&cid("s1")).await;
    a.claim(&cid("s1"), Origin::Start).await.unwrap();
    world.network.link(&cid("s1"), "4915112345678").await;
    eventually("connected", || async {
        world.row(&cid("s1")).await.is_some_and(|r| r.connected)
    })
    .await;
    for id in ["FEED1", "FEED2", "FEED3"] {
        let message = NetworkEvent::Message(Box::new(text_received(id)));
        world.network.emit(&cid("s1"), message).await;
    }
    eventually("three messages logged", || async {
        let events = world.db.events_after("s1", 0, 100).await.unwrap();
        events
            .iter()
            .filter(|e| e.event_id.contains("FEED"))
            .count()
            == 3
    })
    .await;
    let logged: Vec<u64> = (world.db.events_after("s1", 0, 100).await.unwrap())
        .iter()
        .map(|e| e.seq)
        .collect();
    let mut seqs = Vec::new();
    while seqs.len() < logged.len() {
        let message = tokio::time::timeout(Duration::from_secs(5), announced.next())
            .await
            .expect("announced in time")
            .expect("subscribed");
        let seq: u64 = std::str::from_utf8(&message.payload)
            .unwrap()
            .parse()
            .unwrap();
        seqs.push(seq);
    }
    assert_eq!(seqs, logged);
    assert!(announced.try_next().is_none(), "announced more than logged");
}
