//! Devices that come and go mid-conversation, through `parley serve` on the
//! wire-level test network: the contact links a second device (another
//! session of the same gateway) after the session has written to it, and
//! the session's next message reaches that device too; the contact removes
//! it, and the session leaves it out, told by the network's news or by the
//! server's answer to a message; and a session that logs in again with
//! the device list it holds current is not sent the list again.
//!
//! Runs the `parley-test-network` binary that `scripts/wire-e2e.sh` builds.
mod api;

use api::*;
use parley_tests::Parley;
use parley_wire_network::{LinkedDevice, TestDevice};
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

/// Sends `body` from session `id` to the contact; its message id.
async fn send(p: &Parley, id: &str, body: &str) -> String {
    let (status, sent) = post(
        p,
        "/send-message",
        json!({"clientId": id, "to": format!("+{CONTACT}"), "body": body}),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    sent["messageId"].as_str().expect("messageId").to_string()
}

/// Session `id` on `serve` has written to the contact, and the contact has
/// linked a second device (session `id` + `b` of the same gateway) that
/// got the session's second message: the removal tests' start.
struct SecondDevice {
    ls: LinkedServe,
    linked: LinkedDevice,
    /// The messages sent so far: before the link, and to both devices.
    sent: [String; 2],
}

async fn with_second_device(id: &str) -> SecondDevice {
    let ls = linked_on_serve(id).await;
    let first = send(&ls.p, id, "Your order shipped").await;
    ls.contact
        .wait_for(WAIT, |r| r.id == first)
        .await
        .expect("the contact gets the first message");
    let second = start_for_qr(&ls.p, &format!("{id}b"), &ls.hooks.url).await;
    let linked = ls
        .contact
        .scan(&ls.net, &second)
        .expect("the contact links a second device");
    connected(&ls.p, &format!("{id}b")).await;
    assert!(
        ls.net
            .watcher()
            .keys_uploaded(CONTACT, linked.device, WAIT)
            .await
    );
    let both = send(&ls.p, id, "It arrives tomorrow").await;
    assert!(
        ls.net
            .watcher()
            .relayed((PHONE, ls.device), (CONTACT, linked.device), &both, WAIT)
            .await,
        "the second device gets it while linked"
    );
    SecondDevice {
        ls,
        linked,
        sent: [first, both],
    }
}

/// A contact removes a linked device and nobody tells the session: its next
/// message is still sealed for the device (the server drops that copy), and
/// the server's ack names the devices it knows (`phash`); the session drops
/// its cached lists and leaves the device out from then on. Every message
/// reaches the contact's phone once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_the_contact_removed_is_left_out_once_the_server_says_so() {
    let SecondDevice { ls, linked, sent } = with_second_device("wirer").await;
    let (net, contact, p) = (&ls.net, &ls.contact, &ls.p);
    net.unlink_untold(CONTACT, linked.device);

    // The next message is sealed for the removed device too: the server
    // drops that copy and says what it knows.
    let after = send(p, "wirer", "Did it arrive?").await;
    assert!(
        net.sealed_for_gone()
            .iter()
            .any(|(id, to)| *id == after && *to == (CONTACT.to_string(), linked.device)),
        "{:?}",
        net.sealed_for_gone()
    );
    // The session drops its lists when the ack comes (in a task of its
    // own): by the second message after, at the latest, it has.
    let mut left_out = false;
    for body in ["Tell me if not", "Thanks!"] {
        let id = send(p, "wirer", body).await;
        contact
            .wait_for(WAIT, |r| r.id == id)
            .await
            .expect("the contact's phone gets it");
        if net
            .sealed_for_gone()
            .iter()
            .all(|(sealed, _)| *sealed != id)
        {
            left_out = true;
            break;
        }
    }
    assert!(left_out, "{:?}", net.sealed_for_gone());
    delivered_once(contact, sent.iter().chain([&after]));
}

/// A contact removes a linked device and the network tells those who
/// write with it (`<notification type="devices"><remove>`): the session's
/// next message already leaves the device out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_the_contact_removes_is_left_out_once_the_news_arrives() {
    let SecondDevice { ls, linked, sent } = with_second_device("wiren").await;
    let (net, contact, p) = (&ls.net, &ls.contact, &ls.p);
    net.unlink(CONTACT, linked.device);
    assert!(
        net.watcher()
            .heard_removed((PHONE, ls.device), CONTACT, linked.device, WAIT)
            .await,
        "the session hears of the removal"
    );
    let after = send(p, "wiren", "Did it arrive?").await;
    contact
        .wait_for(WAIT, |r| r.id == after)
        .await
        .expect("the contact's phone gets it");
    assert!(
        net.sealed_for_gone().is_empty(),
        "nothing sealed for the removed device: {:?}",
        net.sealed_for_gone()
    );
    delivered_once(contact, sent.iter().chain([&after]));
}

/// Each of `ids` reached the contact's phone once.
fn delivered_once<'a>(contact: &TestDevice, ids: impl Iterator<Item = &'a String>) {
    for id in ids {
        let copies = contact.received().iter().filter(|r| r.id == *id).count();
        assert_eq!(copies, 1, "{id} delivered once");
    }
}

/// The session logs in again: it asks for its account's device list with
/// the hash it holds, and the network, whose list has not changed, leaves
/// the list out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_list_the_session_holds_is_not_sent_again() {
    let LinkedServe {
        net,
        p,
        device,
        phone: _phone,
        dir: _dir,
        ..
    } = linked_on_serve("wireh").await;
    // The first login's own query runs in the background: a socket dropped
    // before its answer leaves the session no hash to send.
    assert!(
        net.watcher()
            .own_device_list_sent(PHONE, device, WAIT)
            .await,
        "the session asked for its own device list after linking:\n{}",
        p.output()
    );
    let past = net.device_lists_unchanged(PHONE, device);
    assert!(
        net.drop_socket(PHONE, device),
        "the session's socket was live"
    );
    assert!(
        net.watcher()
            .device_lists_unchanged_past(PHONE, device, past, WAIT)
            .await,
        "the login's own device-list query left out as unchanged:\n{}",
        p.output()
    );
    let (status, body) = post(
        &p,
        "/send-message",
        json!({"clientId": "wireh", "to": format!("+{CONTACT}"), "body": "Still here"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
}
