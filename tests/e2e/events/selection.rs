//! Event selection (`/set-webhook-types`): a session's webhook takes the
//! event types it names; the others are logged as `not_selected`, readable
//! and redeliverable by id, never pushed, never refused by the session's
//! cap; the choice is kept across a worker move.
use parley_tests::receiver::{Behaviour, Receiver};
use serde_json::{Value, json};

use super::support::*;
use crate::shapes::{Deployment, Shape};
use crate::support::*;

#[tokio::test]
async fn a_webhook_takes_the_types_it_selected_on_serve() {
    selection(Shape::Serve).await;
}

#[tokio::test]
async fn a_webhook_takes_the_types_it_selected_on_a_cluster_through_a_move() {
    selection(Shape::Cluster).await;
}

/// A place the contact shares: a `location` event.
async fn place(p: &Parley, n: usize) -> String {
    inject(
        p,
        "ws",
        json!({"type": "location", "latitude": 52.5, "longitude": 13.4, "name": format!("place {n}")}),
    )
    .await
}

/// The session's logged events, by message id.
async fn logged(p: &Parley) -> Vec<Value> {
    let (status, page) = get(p, "/events?clientId=ws&limit=500").await;
    assert_eq!(status, 200, "{page}");
    page["events"].as_array().expect("events").clone()
}

fn of<'a>(events: &'a [Value], message_id: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["event"]["messageId"] == message_id)
        .unwrap_or_else(|| panic!("{message_id} is not logged: {events:?}"))
}

async fn redeliver(p: &Parley, body: Value) -> u64 {
    let (status, queued) = post(p, "/events/redeliver", body).await;
    assert_eq!(status, 200, "{queued}");
    queued["queued"].as_u64().expect("queued")
}

async fn selection(shape: Shape) {
    let dir = tempfile::tempdir().unwrap();
    let mut more = EVENT_VARS.to_vec();
    more.push(("PARLEY_EVENT_SESSION_CAP", "3"));
    let mut d = Deployment::start(shape, dir.path(), &more).await;
    let mut rx = Receiver::start().await;
    hooked(&d.api, "ws", &rx.url, json!({})).await;
    contact(&d.api).await;

    refused(
        &d.api,
        "/set-webhook-types",
        [
            (json!({"clientId": "ws", "types": []}), 400),
            (
                json!({"clientId": "ws", "types": ["message.received"]}),
                400,
            ),
            (json!({"clientId": "ws", "types": "text"}), 400),
            (json!({"types": ["text"]}), 400),
            (json!({"clientId": "nobody", "types": ["text"]}), 404),
        ],
    )
    .await;
    let (status, set) = post(
        &d.api,
        "/set-webhook-types",
        json!({"clientId": "ws", "types": ["text", " receipt", "text"]}),
    )
    .await;
    assert_eq!(status, 200, "{set}");
    assert_eq!(
        set,
        json!({"ok": true, "clientId": "ws", "types": ["text", "receipt"]})
    );
    if shape == Shape::Cluster {
        d.move_session("ws").await;
    }
    let p = &d.api;

    // Twice the cap of places the webhook does not take: each is taken
    // (logged), none is pushed; the text after them is the first request.
    let mut places = Vec::new();
    for n in 0..6 {
        places.push(place(p, n).await);
    }
    let first = text(p, "ws", "after the places").await;
    let (req, before) = until_message(&mut rx, &first).await;
    assert_headers(&req, HOOK_TOKEN);
    assert!(
        before.is_empty(),
        "pushed before the text: {:?}",
        before.iter().map(|r| r.json()).collect::<Vec<_>>()
    );
    let events = logged(p).await;
    for id in &places {
        let e = of(&events, id);
        assert_eq!(e["event"]["type"], "location", "{e}");
        assert_eq!(
            e["delivery"],
            json!({"state": "not_selected", "attempts": 0, "lastStatus": null, "lastAttemptAt": null}),
            "{e}"
        );
    }
    if shape == Shape::Serve {
        // The cluster's workers count them, on ports of their own.
        dropped_reaches(p, "not-selected", 6).await;
    }

    // A redelivery from a seq leaves them out; one by id delivers it.
    // (Once the text's delivery is recorded: a record still on its way
    // would overwrite the redelivery's pending state.)
    eventually(10, "the text's delivery recorded", || async {
        let events = logged(p).await;
        (of(&events, &first)["delivery"]["state"] == "delivered").then_some(())
    })
    .await;
    assert_eq!(
        redeliver(p, json!({"clientId": "ws", "afterSeq": 0})).await,
        1
    );
    until_message(&mut rx, &first).await;
    let events = logged(p).await;
    assert!(
        places
            .iter()
            .all(|id| of(&events, id)["delivery"]["state"] == "not_selected"),
        "{events:?}"
    );
    let chosen = of(&events, &places[2]).clone();
    let event_id = chosen["eventId"].as_str().unwrap();
    assert_eq!(
        redeliver(p, json!({"clientId": "ws", "eventIds": [event_id]})).await,
        1
    );
    let (req, _) = until_message(&mut rx, &places[2]).await;
    assert_eq!(req.header("webhook-id"), Some(event_id));
    assert_eq!(req.json()["seq"], chosen["seq"]);
    eventually(10, "the redelivery recorded", || async {
        let events = logged(p).await;
        (of(&events, &places[2])["delivery"]["state"] == "delivered").then_some(())
    })
    .await;

    // A receiver that holds a text back: while it waits for its retry,
    // places past the cap are still taken (they are not undelivered).
    rx.set_default(Behaviour::RetryAfter(503, 4));
    let held = text(p, "ws", "held back").await;
    let (req, _) = until_message(&mut rx, &held).await;
    assert_eq!(req.status, Some(503));
    for n in 6..12 {
        places.push(place(p, n).await);
    }
    rx.set_default(Behaviour::Status(200));
    loop {
        let req = rx.next(WAIT).await;
        assert_eq!(req.json()["messageId"], held.as_str(), "{}", req.json());
        if req.status == Some(200) {
            break;
        }
    }

    // Every type again, once the held text's delivery is recorded (the cap
    // counts from the oldest undelivered event on: until then, the text).
    eventually(10, "the held text's delivery recorded", || async {
        let events = logged(p).await;
        (of(&events, &held)["delivery"]["state"] == "delivered").then_some(())
    })
    .await;
    let (status, set) = post(
        p,
        "/set-webhook-types",
        json!({"clientId": "ws", "types": null}),
    )
    .await;
    assert_eq!(status, 200, "{set}");
    assert_eq!(set, json!({"ok": true, "clientId": "ws", "types": null}));
    let last = place(p, 12).await;
    let (req, before) = until_message(&mut rx, &last).await;
    assert_eq!(req.json()["type"], "location");
    assert!(
        before.is_empty(),
        "{:?}",
        before.iter().map(|r| r.json()).collect::<Vec<_>>()
    );
    let (status, page) = get(p, "/sessions?clientId=ws").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        page["sessions"][0]["webhook"]["types"],
        Value::Null,
        "{page}"
    );
}
