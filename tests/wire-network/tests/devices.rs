//! Devices that come mid-conversation, through `parley serve` on the
//! wire-level test network: the contact links a second device (another
//! session of the same gateway) after the session has written to it, and
//! the session's next message reaches that device too.
//!
//! Runs the `parley-test-network` binary that `scripts/wire-e2e.sh` builds.
mod api;

use api::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_the_contact_links_mid_conversation_gets_the_next_message() {
    let LinkedServe {
        net,
        contact,
        mut hooks,
        p,
        // Kept alive: the phone shares the app-state key (and with it
        // the salt) and the directory holds the database.
        phone: _phone,
        dir: _dir,
        ..
    } = linked_on_serve("wired").await;
    let to = format!("+{CONTACT}");
    let (status, sent) = post(
        &p,
        "/send-message",
        json!({"clientId": "wired", "to": to, "body": "Your order shipped"}),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    let first = sent["messageId"].as_str().expect("messageId").to_string();
    contact
        .wait_for(WAIT, |r| r.id == first)
        .await
        .expect("the contact gets the first message");

    // The contact links a second device: another session of this gateway.
    let second = start_for_qr(&p, "wiredb", &hooks.url).await;
    let linked = contact
        .scan(&net, &second)
        .expect("the contact links a second device");
    connected(&p, "wiredb").await;
    // Until its keys are on the server nobody can write to it.
    assert!(
        net.watcher()
            .keys_uploaded(CONTACT, linked.device, WAIT)
            .await,
        "the new device uploads its keys"
    );

    let (status, sent) = post(
        &p,
        "/send-message",
        json!({"clientId": "wired", "to": to, "body": "It arrives tomorrow"}),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    let id = sent["messageId"].as_str().expect("messageId").to_string();
    let e = event_where(&mut hooks, &p, &id, |e| {
        e["messageId"] == id.as_str() && e["clientId"] == "wiredb"
    })
    .await;
    assert_eq!(
        (&e["body"], &e["fromMe"]),
        (&json!("It arrives tomorrow"), &json!(false)),
        "{e}"
    );
    contact
        .wait_for(WAIT, |r| r.id == id)
        .await
        .expect("the contact's phone gets it too");
}
