//! A received message's reply: the network is told whether its event was
//! logged, by the inbound task, or at once when the reply is dropped untold.
use std::sync::Arc;

use super::output::Reply;
use crate::network::{Jid, MessageId, Network, SessionContext};
use crate::supervisor::fakes::{FakeNetwork, cid, eventually};

async fn connected(network: &FakeNetwork) -> Arc<dyn crate::network::Connection> {
    let ctx = SessionContext {
        client_id: cid("s1"),
        fence: 1,
        pod_name: "w1".into(),
        proxy: None,
    };
    let (connection, _events) = network.connect(ctx).await.expect("connected");
    connection.into()
}

fn reply(connection: &Arc<dyn crate::network::Connection>, id: &str) -> Reply {
    let chat = Jid::parse("15550001111@s.whatsapp.net").expect("a JID");
    Reply::network(
        Arc::clone(connection),
        chat,
        MessageId::new(id).expect("an id"),
    )
}

#[tokio::test]
async fn a_told_reply_acknowledges_its_message_once() {
    let network = FakeNetwork::default();
    let connection = connected(&network).await;
    reply(&connection, "M1").send(Ok(())).await;
    let acks = network.acks();
    assert_eq!(acks, vec![("s1".into(), "M1".into(), Ok(()))]);
}

#[tokio::test]
async fn a_reply_dropped_untold_refuses_its_message_at_once() {
    let network = FakeNetwork::default();
    let connection = connected(&network).await;
    drop(reply(&connection, "M2"));
    eventually("the dropped reply answered", || async {
        !network.acks().is_empty()
    })
    .await;
    let acks = network.acks();
    assert_eq!(acks.len(), 1, "{acks:?}");
    assert_eq!(acks[0].1, "M2");
    let refused = acks[0].2.as_ref().expect_err("not acknowledged");
    assert!(refused.contains("event task has ended"), "{refused}");
}
