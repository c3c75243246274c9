//! A group's own settings (`/sandbox/groups/settings`): its description,
//! announcement mode, locked mode and disappearing messages, changed by its
//! members as the network lets them (announcement and locked mode by
//! admins; the rest by any member unless the group is locked), each an
//! opt-in `group_update` event; in announcement mode a member who is not an
//! admin cannot send to the group, and the customer is told why.
use parley_tests::receiver::Receiver;
use serde_json::{Value, json};

use super::support::*;
use crate::support::*;

const ROUTE: &str = "/sandbox/groups/settings";

/// Asks for a change of `group`'s settings (`by`: a member's phone, or the
/// session's own phone when `None`).
async fn set(p: &Parley, group: &str, by: Option<&str>, setting: Value) -> (u16, Value) {
    let mut body = json!({"clientId": "gset", "jid": group});
    if let Some(by) = by {
        body["by"] = json!(by);
    }
    for (k, v) in setting.as_object().expect("one setting") {
        body[k] = v.clone();
    }
    post(p, ROUTE, body).await
}

/// The next `group_update` event whose `groupUpdate` is `update`.
async fn update_event(rx: &mut Receiver, update: &Value) -> Value {
    loop {
        let e = rx.next(WAIT).await.json();
        if e["type"] == "group_update" && e["groupUpdate"] == *update {
            return e;
        }
    }
}

#[tokio::test]
async fn group_settings_change_as_the_network_lets_them_and_are_events() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_events(dir.path()).await;
    let mut rx = Receiver::start().await;
    hooked(&p, "gset", &rx.url, json!({})).await;
    let admin_lid = contact(&p).await;
    let (status, body) = post(
        &p,
        "/set-events",
        json!({"clientId": "gset", "events": ["group_update"]}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    // The contact is the group's admin; the session's phone a plain member.
    let (status, created) = post(
        &p,
        "/sandbox/groups",
        json!({"clientId": "gset", "subject": "Shop", "participants": [CONTACT], "admins": [CONTACT]}),
    )
    .await;
    assert_eq!(status, 200, "{created}");
    let group = created["jid"].as_str().expect("jid").to_string();

    // The admin describes the group: an event, not the session's change.
    let description = json!({"description": "Orders and returns"});
    let (status, body) = set(&p, &group, Some(CONTACT), description.clone()).await;
    assert_eq!(
        (status, &body),
        (200, &json!({"jid": group, "groupUpdate": description}))
    );
    let e = update_event(&mut rx, &description).await;
    assert_eq!(e["event"], "group.update", "{e}");
    assert_eq!(e["fromMe"], false, "{e}");
    assert_eq!(e["group"]["participant"], format!("{admin_lid}@lid"), "{e}");
    assert_eq!(e["group"]["subject"], "Shop", "{e}");
    assert_eq!(e["remoteJid"], group.as_str(), "{e}");

    // Any member turns on disappearing messages while the group is open.
    let week = json!({"ephemeralSeconds": 604_800});
    let (status, body) = set(&p, &group, None, week.clone()).await;
    assert_eq!(status, 200, "{body}");
    let e = update_event(&mut rx, &week).await;
    assert_eq!(e["fromMe"], true, "the session's own phone: {e}");

    // Announcement mode is the admins' to set; then only they send.
    let announce = json!({"announce": true});
    let (status, body) = set(&p, &group, None, announce.clone()).await;
    assert_eq!(status, 409, "a plain member: {body}");
    let (status, body) = set(&p, &group, Some(CONTACT), announce.clone()).await;
    assert_eq!(status, 200, "{body}");
    update_event(&mut rx, &announce).await;
    let (status, body) = post(
        &p,
        "/send-message",
        json!({"clientId": "gset", "to": group, "body": "Can I still write?"}),
    )
    .await;
    assert_eq!(status, 502, "{body}");
    let error = body["error"].as_str().unwrap_or_default();
    assert!(error.contains("only the group's admins"), "{body}");
    let open = json!({"announce": false});
    let (status, body) = set(&p, &group, Some(CONTACT), open.clone()).await;
    assert_eq!(status, 200, "{body}");
    update_event(&mut rx, &open).await;
    let (status, body) = post(
        &p,
        "/send-message",
        json!({"clientId": "gset", "to": group, "body": "Thanks for opening it"}),
    )
    .await;
    assert_eq!(status, 200, "open again: {body}");

    // Locked: only admins change the group's info, its subject included.
    let locked = json!({"locked": true});
    let (status, body) = set(&p, &group, Some(CONTACT), locked.clone()).await;
    assert_eq!(status, 200, "{body}");
    update_event(&mut rx, &locked).await;
    let (status, body) = set(&p, &group, None, json!({"description": "Mine now"})).await;
    assert_eq!(status, 409, "{body}");
    let (status, body) = post(
        &p,
        "/sandbox/groups/subject",
        json!({"clientId": "gset", "jid": group, "subject": "Renamed"}),
    )
    .await;
    assert_eq!(status, 409, "{body}");
    let removed = json!({"description": ""});
    let (status, body) = set(&p, &group, Some(CONTACT), removed.clone()).await;
    assert_eq!(status, 200, "{body}");
    update_event(&mut rx, &removed).await;

    // The log holds each change the network let through, once.
    let (status, page) = get(&p, "/events?clientId=gset&limit=500").await;
    assert_eq!(status, 200, "{page}");
    let updates: Vec<&Value> = page["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|l| &l["event"]["groupUpdate"])
        .filter(|u| u.is_object())
        .collect();
    let expected = [&description, &week, &announce, &open, &locked, &removed];
    assert_eq!(updates, expected, "{page}");

    // The route's own errors.
    let base = json!({"clientId": "gset", "jid": group, "by": CONTACT});
    let with = |more: Value| {
        let mut body = base.clone();
        for (k, v) in more.as_object().expect("fields") {
            body[k] = v.clone();
        }
        body
    };
    refused(
        &p,
        ROUTE,
        [
            (with(json!({})), 400),
            (with(json!({"announce": true, "locked": true})), 400),
            (with(json!({"ephemeralSeconds": 5})), 400),
            (with(json!({"description": "x".repeat(2_049)})), 400),
            (with(json!({"jid": "12345", "locked": false})), 400),
            (with(json!({"by": "12", "locked": false})), 400),
            (
                with(json!({"jid": "120363999999999999@g.us", "locked": false})),
                404,
            ),
            (with(json!({"clientId": "nobody", "locked": false})), 404),
            (with(json!({"by": "4915100000999", "locked": false})), 409),
        ],
    )
    .await;
}
