//! Messages on the real adapter beyond the contract: what the linked phone
//! sends itself reaches the session as its own (`fromMe`).
mod support;

use parley_network::contract::{CONTACT, DEADLINE, PHONE};
use parley_network::inbound::Content;
use parley_network::{Network, NetworkEvent, SessionContext};
use support::fixture;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_phone_sends_arrives_as_from_me() {
    let f = fixture("m1").await;
    let ctx = SessionContext {
        client_id: "m1".into(),
        fence: 1,
        pod_name: "wire".into(),
    };
    let (_conn, mut events) = f.network.connect(ctx).await.expect("connect");
    let code = match tokio::time::timeout(DEADLINE, events.recv()).await {
        Ok(Some(NetworkEvent::Qr { code })) => code,
        other => panic!("expected a QR code, got {other:?}"),
    };
    parley_network::contract::Counterpart::scan(&f.wire, "m1", &code, PHONE)
        .await
        .expect("scan");
    loop {
        match tokio::time::timeout(DEADLINE, events.recv()).await {
            Ok(Some(NetworkEvent::Connected(_))) => break,
            Ok(Some(_)) => continue,
            other => panic!("expected Connected, got {other:?}"),
        }
    }
    let contact = format!("{CONTACT}@s.whatsapp.net");
    let id = f
        .wire
        .phone
        .send_text(&contact, "sent on the phone")
        .await
        .expect("the phone sends");
    let echo = loop {
        match tokio::time::timeout(DEADLINE, events.recv()).await {
            Ok(Some(NetworkEvent::Message(m))) if m.id == id => break m,
            Ok(Some(_)) => continue,
            other => panic!("no echo of {id}: {other:?}"),
        }
    };
    assert!(echo.from_me, "{echo:?}");
    assert_eq!(
        echo.content,
        Content::Text {
            body: "sent on the phone".into()
        }
    );
    assert!(
        echo.chat == contact || echo.chat.ends_with("@lid"),
        "the chat is the contact: {echo:?}"
    );
    // The contact got it too.
    let got = f
        .wire
        .contact
        .wait_for(DEADLINE, |r| r.id == id)
        .await
        .expect("the contact receives the phone's message");
    assert_eq!(got.text.as_deref(), Some("sent on the phone"));
}
