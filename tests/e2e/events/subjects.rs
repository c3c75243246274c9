//! Group events name their group's subject, on `serve` and on the cluster: the
//! subject is learned from the group's metadata, kept with the group in the
//! database (so a session's next owner names it too), and replaced when the
//! network says it changed (`/sandbox/groups/subject`). The change itself is
//! an opt-in `group_update` event, only once the session turned it on.
use parley_tests::receiver::Receiver;
use serde_json::{Value, json};

use super::support::*;
use crate::shapes::{Deployment, Shape};
use crate::support::*;

/// The contact writes `body` in `group`; returns the event.
async fn group_text(p: &Parley, rx: &mut Receiver, group: &str, body: &str) -> Value {
    let id = inject(
        p,
        "gs",
        json!({"type": "text", "body": body, "chat": group}),
    )
    .await;
    let e = until_message(rx, &id).await.0.json();
    assert_eq!(e["isGroup"], true, "{e}");
    e
}

#[tokio::test]
async fn group_events_name_the_subject_on_serve() {
    subjects(Shape::Serve).await;
}

#[tokio::test]
async fn group_events_name_the_subject_on_a_cluster() {
    subjects(Shape::Cluster).await;
}

async fn subjects(shape: Shape) {
    let dir = tempfile::tempdir().unwrap();
    let mut d = Deployment::start(shape, dir.path(), EVENT_VARS).await;
    let mut rx = Receiver::start().await;
    hooked(&d.api, "gs", &rx.url, json!({})).await;
    let lid = contact(&d.api).await;
    let (status, body) = post(
        &d.api,
        "/set-enable-group-ai",
        json!({"clientId": "gs", "enabled": true}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, created) = post(
        &d.api,
        "/sandbox/groups",
        json!({"clientId": "gs", "subject": "Team A", "participants": [CONTACT]}),
    )
    .await;
    assert_eq!(status, 200, "{created}");
    let group = created["jid"].as_str().expect("jid").to_string();

    let e = group_text(&d.api, &mut rx, &group, "first").await;
    assert_eq!(e["group"]["subject"], "Team A", "{e}");
    assert_eq!(e["group"]["jid"], group.as_str());

    // Someone renames the group: the session is told, later events say so.
    let (status, body) = post(
        &d.api,
        "/sandbox/groups/subject",
        json!({"clientId": "gs", "jid": group, "subject": "Team B"}),
    )
    .await;
    assert_eq!(
        (status, body),
        (200, json!({"jid": group, "subject": "Team B"}))
    );
    let e = group_text(&d.api, &mut rx, &group, "second").await;
    assert_eq!(e["group"]["subject"], "Team B", "{e}");

    // Once turned on, a rename is an event of its own.
    let (status, body) = post(
        &d.api,
        "/set-events",
        json!({"clientId": "gs", "events": ["group_update"]}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = post(
        &d.api,
        "/sandbox/groups/subject",
        json!({"clientId": "gs", "jid": group, "subject": "Team C"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let e = loop {
        let e = rx.next(WAIT).await.json();
        if e["type"] == "group_update" {
            break e;
        }
    };
    assert_eq!(e["event"], "group.update", "{e}");
    assert_eq!(e["groupUpdate"], json!({"subject": "Team C"}), "{e}");
    assert_eq!(e["group"]["subject"], "Team C", "{e}");
    assert_eq!(e["remoteJid"], group.as_str(), "{e}");
    assert_eq!(e["body"], "", "{e}");
    assert_eq!(
        (e["fromMe"].as_bool(), e["isGroup"].as_bool()),
        (Some(true), Some(true)),
        "the session's own phone renamed it: {e}"
    );
    let message_id = e["messageId"].as_str().expect("messageId");
    assert_eq!(e["eventId"], format!("grpu_gs_{message_id}"), "{e}");
    // The log holds that one change and not the rename made while it was off.
    let (status, page) = get(&d.api, "/events?clientId=gs&limit=500").await;
    assert_eq!(status, 200, "{page}");
    let updates: Vec<&Value> = page["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|l| l["event"]["type"] == "group_update")
        .collect();
    assert_eq!(updates.len(), 1, "{page}");
    assert_eq!(updates[0]["eventId"], e["eventId"]);

    // Another member renames it: not the session's change.
    let (status, body) = post(
        &d.api,
        "/sandbox/groups/subject",
        json!({"clientId": "gs", "jid": group, "subject": "Team D", "by": CONTACT}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let e = loop {
        let e = rx.next(WAIT).await.json();
        if e["type"] == "group_update" && e["groupUpdate"]["subject"] == "Team D" {
            break e;
        }
    };
    assert_eq!(e["fromMe"], false, "{e}");
    assert_eq!(e["group"]["participant"], format!("{lid}@lid"), "{e}");
    assert_eq!(e["group"]["subject"], "Team D", "{e}");
    let e = group_text(&d.api, &mut rx, &group, "third").await;
    assert_eq!(e["group"]["subject"], "Team D", "{e}");
    // The session's own messages to the group too.
    let (status, sent) = post(
        &d.api,
        "/send-message",
        json!({"clientId": "gs", "to": group, "body": "mine"}),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    let e = until_message(&mut rx, sent["messageId"].as_str().unwrap())
        .await
        .0
        .json();
    assert_eq!(
        (e["fromMe"].as_bool(), e["group"]["subject"].as_str()),
        (Some(true), Some("Team D")),
        "{e}"
    );

    // The route's own errors.
    refused(
        &d.api,
        "/sandbox/groups/subject",
        [
            (
                json!({"clientId": "gs", "jid": "12345", "subject": "X"}),
                400,
            ),
            (
                json!({"clientId": "gs", "jid": group, "subject": "  "}),
                400,
            ),
            (
                json!({"clientId": "gs", "jid": "120363999999999999@g.us", "subject": "X"}),
                404,
            ),
            (
                json!({"clientId": "nobody", "jid": group, "subject": "X"}),
                404,
            ),
            (
                json!({"clientId": "gs", "jid": group, "subject": "X", "by": "12"}),
                400,
            ),
            (
                json!({"clientId": "gs", "jid": group, "subject": "X", "by": "4915100000999"}),
                409,
            ),
        ],
    )
    .await;

    // The session's next owner names the group the same way.
    if shape == Shape::Cluster {
        d.move_session("gs").await;
        let e = group_text(&d.api, &mut rx, &group, "after the move").await;
        assert_eq!(e["group"]["subject"], "Team D", "{e}");
    }
}
