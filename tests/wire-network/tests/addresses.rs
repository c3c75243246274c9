//! Addresses on the real adapter, through `parley serve` on the wire-level
//! test network, where 1:1 chats are on LIDs: a contact who writes first is
//! named by its LID with its phone number beside it, and the session can
//! answer it by that LID, by its LID JID or by its phone number; every
//! event of the conversation carries the same parties and chat room.
//!
//! Runs the `parley-test-network` binary that `scripts/wire-e2e.sh` builds.
mod api;

use api::*;
use serde_json::{Value, json};

/// The parties and chat room of an event.
fn parties(e: &Value) -> (String, String, String, String) {
    let field = |k: &str| e[k].as_str().unwrap_or_default().to_string();
    (
        field("myLid"),
        field("clientLid"),
        field("remoteJid"),
        field("chatRoomId"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_contact_is_named_by_lid_and_answered_by_lid_or_number() {
    let LinkedServe {
        net,
        phone,
        contact,
        mut hooks,
        p,
        // Kept alive: the directory holds the database (and `p`'s log).
        dir: _dir,
        ..
    } = linked_on_serve("wirea").await;
    let my_lid = net.lid_of(PHONE).expect("the session's LID");
    let their_lid = net.lid_of(CONTACT).expect("the contact's LID");
    let expected = (
        my_lid.clone(),
        their_lid.clone(),
        format!("{their_lid}@lid"),
        format!("wirea-{my_lid}-{their_lid}"),
    );

    // The contact writes first: named by its LID, its number beside it.
    let id = contact
        .send_text(&phone.jid(), "Is my order ready?")
        .await
        .expect("the contact writes");
    let e = event_for(&mut hooks, &p, &id).await;
    assert_eq!(parties(&e), expected, "{e}");
    assert_eq!(e["remotePhone"], CONTACT, "{e}");

    // The session answers by the LID, the LID JID and the number: each
    // reaches the contact, and each fromMe event names the same chat.
    for to in [
        their_lid.clone(),
        format!("{their_lid}@lid"),
        format!("+{CONTACT}"),
    ] {
        let body = format!("Yes, answered to {to}");
        let (status, sent) = post(
            &p,
            "/send-message",
            json!({"clientId": "wirea", "to": to, "body": body}),
        )
        .await;
        assert_eq!(status, 200, "{sent}");
        let id = sent["messageId"].as_str().expect("messageId").to_string();
        let got = contact.wait_for(WAIT, |r| r.id == id).await;
        assert_eq!(
            got.and_then(|r| r.text).as_deref(),
            Some(body.as_str()),
            "to {to}"
        );
        let e = event_for(&mut hooks, &p, &id).await;
        assert_eq!(e["fromMe"], json!(true), "{e}");
        assert_eq!(parties(&e), expected, "to {to}: {e}");
    }
}
