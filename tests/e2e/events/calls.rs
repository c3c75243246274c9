//! Calls: a contact's call rings the session as `call.offer` and
//! `call.ended` events once the session turned `call` on with
//! `/set-events` (nothing says it otherwise); `/reject-call` rejects one
//! that rings (the outbox shows the rejection going to the caller);
//! `/set-call-rejection` rejects every call as it comes and sends the
//! caller a text, a setting that holds after a move to another worker.
use parley_tests::receiver::Receiver;
use serde_json::{Value, json};

use super::support::*;
use crate::shapes::{Deployment, Shape};
use crate::support::*;

#[tokio::test]
async fn calls_ring_as_events_and_are_rejected_on_serve() {
    calls(Shape::Serve).await;
}

#[tokio::test]
async fn calls_are_rejected_as_they_come_after_a_move_on_a_cluster() {
    calls(Shape::Cluster).await;
}

/// A session's account that takes calls from its contacts only
/// (`/sandbox/contacts` `callPrivacy`): a contact it never wrote to holds
/// no privacy token from it, so the network refuses that contact's call
/// (error 463) and nothing rings; once the session wrote to the contact,
/// its call rings as any other.
#[tokio::test]
async fn a_call_rings_an_account_for_its_contacts_once_the_session_wrote_to_the_caller() {
    let dir = tempfile::tempdir().unwrap();
    let d = Deployment::start(Shape::Serve, dir.path(), EVENT_VARS).await;
    let mut rx = Receiver::start().await;
    hooked(&d.api, "ca", &rx.url, json!({})).await;
    let p = &d.api;
    contact(p).await;
    turn_on(p, "ca", &["call"]).await;
    refused(
        p,
        "/sandbox/contacts",
        [(json!({"phone": OWN_PHONE, "callPrivacy": "friends"}), 400)],
    )
    .await;
    let (status, own) = post(
        p,
        "/sandbox/contacts",
        json!({"phone": OWN_PHONE, "callPrivacy": "contacts"}),
    )
    .await;
    assert_eq!(status, 200, "{own}");

    let call = json!({"clientId": "ca", "from": CONTACT});
    let (status, refusal) = post(p, "/sandbox/calls", call.clone()).await;
    assert_eq!(status, 409, "{refusal}");
    let error = refusal["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("463") && error.contains(CONTACT),
        "{refusal}"
    );
    no_call_before_text(p, &mut rx, "I tried to call you", "a refused call rang").await;

    // The session writes to the contact: its account issues the contact a
    // token (over the test network the contact's phone stores it a moment
    // later, so the call is placed until it rings).
    let (status, sent) = post(
        p,
        "/send-message",
        json!({"clientId": "ca", "to": format!("+{CONTACT}"), "body": "Call me any time"}),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    let rang = eventually(15, "the contact's call rings", || async {
        let (status, placed) = post(p, "/sandbox/calls", call.clone()).await;
        (status == 200).then(|| placed["callId"].as_str().unwrap_or_default().to_string())
    })
    .await;
    let e = next_call(&mut rx).await;
    assert_eq!(e["event"], "call.offer", "{e}");
    assert_eq!(e["call"]["callId"], rang.as_str(), "{e}");
}

/// The text a rejected caller gets.
const REPLY: &str = "Calls are not answered here: please write instead.";

/// The contact calls the session; the call's id.
async fn place(p: &Parley, video: bool) -> String {
    let (status, placed) = post(
        p,
        "/sandbox/calls",
        json!({"clientId": "ca", "from": CONTACT, "video": video}),
    )
    .await;
    assert_eq!(status, 200, "{placed}");
    placed["callId"].as_str().expect("callId").to_string()
}

/// The next `call` event at `rx` (others skipped).
async fn next_call(rx: &mut Receiver) -> Value {
    loop {
        let e = rx.next(WAIT).await.json();
        if e["type"] == "call" {
            return e;
        }
    }
}

/// The contact writes `body`; no `call` event reached `rx` before it
/// (`what` says what one would be).
async fn no_call_before_text(p: &Parley, rx: &mut Receiver, body: &str, what: &str) {
    let marker = text(p, "ca", body).await;
    let (_, before) = until_message(rx, &marker).await;
    assert!(
        before.iter().all(|r| r.json()["type"] != "call"),
        "{what}: {:?}",
        before.iter().map(|r| r.json()).collect::<Vec<_>>()
    );
}

/// The calls the session rejected, as the outbox lists them (oldest first).
async fn rejected(p: &Parley) -> Vec<String> {
    let (status, outbox) = get(p, &format!("/sandbox/outbox?clientId=ca&to=%2B{CONTACT}")).await;
    assert_eq!(status, 200, "{outbox}");
    outbox["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["kind"] == "call_reject")
        .map(|m| {
            m["payload"]["callId"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

async fn reject(p: &Parley, call_id: &str) -> (u16, Value) {
    post(
        p,
        "/reject-call",
        json!({"clientId": "ca", "callId": call_id}),
    )
    .await
}

async fn calls(shape: Shape) {
    let dir = tempfile::tempdir().unwrap();
    let mut d = Deployment::start(shape, dir.path(), EVENT_VARS).await;
    let mut rx = Receiver::start().await;
    let my_lid = hooked(&d.api, "ca", &rx.url, json!({})).await;
    let p = &d.api;
    let lid = contact(p).await;

    // Off by default: the call rings, and nothing says it.
    let unseen = place(p, false).await;
    no_call_before_text(p, &mut rx, "did you see my call?", "call events while off").await;
    // It rings all the same: rejected by id, which is no event.
    let (status, done) = reject(p, &unseen).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(
        done,
        json!({"ok": true, "clientId": "ca", "callId": unseen})
    );
    eventually(10, "the rejection in the outbox", || async {
        rejected(p).await.contains(&unseen).then_some(())
    })
    .await;

    turn_on(p, "ca", &["call"]).await;
    let video = place(p, true).await;
    let e = next_call(&mut rx).await;
    assert_eq!(e["event"], "call.offer", "{e}");
    assert_eq!(
        e["call"],
        json!({"callId": video, "state": "offer", "video": true, "rejected": false}),
        "{e}"
    );
    assert_eq!(e["messageId"], video.as_str(), "{e}");
    assert_eq!(e["eventId"], format!("call_ca_{video}_offer"), "{e}");
    assert_eq!(e["body"], "", "{e}");
    assert_eq!(e["remoteJid"], format!("{lid}@lid"), "{e}");
    assert_eq!(e["clientLid"], lid.as_str(), "{e}");
    assert_eq!(e["remotePhone"], CONTACT, "{e}");
    assert_eq!(e["chatRoomId"], format!("ca-{my_lid}-{lid}"), "{e}");
    assert_eq!(
        (e["fromMe"].as_bool(), e["isGroup"].as_bool()),
        (Some(false), Some(false)),
        "{e}"
    );
    // The caller gives up.
    let (status, ok) = post(
        p,
        "/sandbox/calls/end",
        json!({"clientId": "ca", "from": CONTACT, "callId": video, "reason": "timeout"}),
    )
    .await;
    assert_eq!(status, 200, "{ok}");
    let e = next_call(&mut rx).await;
    assert_eq!(e["event"], "call.ended", "{e}");
    assert_eq!(
        e["call"],
        json!({"callId": video, "state": "ended", "video": false, "rejected": false,
            "reason": "timeout"}),
        "{e}"
    );
    assert_eq!(e["eventId"], format!("call_ca_{video}_ended"), "{e}");
    // It no longer rings.
    let (status, gone) = reject(p, &video).await;
    assert_eq!(status, 404, "{gone}");

    // A group's call comes from the member who starts it, naming the group.
    let (status, group) = post(
        p,
        "/sandbox/groups",
        json!({"clientId": "ca", "subject": "Team", "participants": [CONTACT]}),
    )
    .await;
    assert_eq!(status, 200, "{group}");
    let jid = group["jid"].as_str().expect("jid").to_string();
    let (status, placed) = post(
        p,
        "/sandbox/calls",
        json!({"clientId": "ca", "from": CONTACT, "group": jid}),
    )
    .await;
    assert_eq!(status, 200, "{placed}");
    let e = next_call(&mut rx).await;
    assert_eq!(e["call"]["callId"], placed["callId"], "{e}");
    assert_eq!(e["call"]["groupJid"], jid.as_str(), "{e}");
    assert_eq!(e["remoteJid"], format!("{lid}@lid"), "{e}");
    assert_eq!(e["isGroup"], false, "{e}");

    refused(
        p,
        "/reject-call",
        [
            (json!({"clientId": "ca"}), 400),
            (json!({"clientId": "ca", "callId": "not an id"}), 400),
            (json!({"clientId": "ca", "callId": "0123456789ABCDEF"}), 404),
            (
                json!({"clientId": "nobody", "callId": "0123456789ABCDEF"}),
                404,
            ),
        ],
    )
    .await;
    refused(
        p,
        "/set-call-rejection",
        [
            (json!({"clientId": "ca"}), 400),
            (
                json!({"clientId": "ca", "reject": false, "replyText": "busy"}),
                400,
            ),
            (json!({"clientId": "nobody", "reject": true}), 404),
        ],
    )
    .await;
    refused(
        p,
        "/sandbox/calls/end",
        [
            (
                json!({"clientId": "ca", "from": CONTACT, "callId": video, "reason": "bored"}),
                400,
            ),
            (json!({"clientId": "ca", "from": CONTACT}), 400),
            (
                json!({"clientId": "ca", "from": "12", "callId": video}),
                400,
            ),
        ],
    )
    .await;
    refused(
        p,
        "/sandbox/calls",
        [
            (json!({"clientId": "ca", "from": "12"}), 400),
            (
                json!({"clientId": "ca", "from": CONTACT, "group": "team"}),
                400,
            ),
            (json!({"clientId": "nobody", "from": CONTACT}), 404),
        ],
    )
    .await;

    let (status, set) = post(
        p,
        "/set-call-rejection",
        json!({"clientId": "ca", "reject": true, "replyText": REPLY}),
    )
    .await;
    assert_eq!(status, 200, "{set}");
    assert_eq!(
        set,
        json!({"ok": true, "clientId": "ca", "reject": true, "replyText": REPLY})
    );
    if shape == Shape::Cluster {
        d.move_session("ca").await;
    }
    let p = &d.api;
    let voice = place(p, false).await;
    // The reply follows the rejection, as a text of the session's own
    // (deliveries run side by side: either event may come first).
    let (mut offer, mut reply) = (None, None);
    while offer.is_none() || reply.is_none() {
        let e = rx.next(WAIT).await.json();
        if e["type"] == "call" {
            offer = Some(e);
        } else if e["fromMe"] == true && e["type"] == "text" {
            reply = Some(e);
        }
    }
    let (e, reply) = (offer.unwrap(), reply.unwrap());
    assert_eq!(e["event"], "call.offer", "{e}");
    assert_eq!(e["call"]["callId"], voice.as_str(), "{e}");
    assert_eq!(e["call"]["rejected"], true, "{e}");
    assert_eq!(reply["body"], REPLY, "{reply}");
    assert_eq!(reply["remoteJid"], format!("{lid}@lid"), "{reply}");
    eventually(10, "the rejection and the reply in the outbox", || async {
        let (_, outbox) = get(p, &format!("/sandbox/outbox?clientId=ca&to=%2B{CONTACT}")).await;
        let replied = outbox["messages"].as_array().is_some_and(|m| {
            m.iter()
                .any(|m| m["kind"] == "text" && m["payload"]["body"] == REPLY)
        });
        (replied && rejected(p).await.contains(&voice)).then_some(())
    })
    .await;
    let (status, page) = get(p, "/sessions?clientId=ca").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        page["sessions"][0]["calls"],
        json!({"reject": true, "replyText": REPLY}),
        "{page}"
    );

    // Calls ring again once the session stops rejecting them.
    let (status, set) = post(
        p,
        "/set-call-rejection",
        json!({"clientId": "ca", "reject": false}),
    )
    .await;
    assert_eq!(status, 200, "{set}");
    assert_eq!(set["replyText"], "", "{set}");
    let rings = place(p, false).await;
    let e = next_call(&mut rx).await;
    assert_eq!(e["call"]["callId"], rings.as_str(), "{e}");
    assert_eq!(e["call"]["rejected"], false, "{e}");
    let (status, done) = reject(p, &rings).await;
    assert_eq!(status, 200, "{done}");
}
