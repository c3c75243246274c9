//! Opt-in events: a change of a group's members (`/sandbox/groups/participants`,
//! an admin adding, removing, promoting or demoting) reaches the webhook as a
//! `group_participants` event, signed and logged as messages are, only for a
//! session that turned it on with `/set-events`, whether or not it takes
//! group messages; another session in the same group that did not sees
//! nothing of it.
use parley_tests::receiver::{Received, Receiver};
use serde_json::{Value, json};

use super::support::*;
use crate::support::*;

/// The group's admin, who changes its members.
const ADMIN: &str = "4917600000331";
/// Who the admin adds, then promotes.
const NEWCOMER: &str = "4917600000332";
/// The phone of the session that keeps events off.
const OTHER_PHONE: &str = "4915100000333";

async fn register(p: &Parley, phone: &str) -> String {
    let (status, body) = post(
        p,
        "/sandbox/contacts",
        json!({"phone": phone, "name": "Member"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["lid"].as_str().expect("lid").to_string()
}

async fn change(p: &Parley, group: &str, by: &str, action: &str, who: &str) -> (u16, Value) {
    post(
        p,
        "/sandbox/groups/participants",
        json!({"clientId": "gcon", "jid": group, "by": by, "action": action, "participants": [who]}),
    )
    .await
}

/// The `group_participants` events of `actions` concerning `who`, in that
/// order, however they arrive (deliveries run side by side); other requests
/// are skipped (a network may announce how the group was made).
async fn group_events(rx: &mut Receiver, actions: &[&str], who: &str) -> Vec<Received> {
    let mut found: Vec<Option<Received>> = actions.iter().map(|_| None).collect();
    while found.iter().any(Option::is_none) {
        let req = rx.next(WAIT).await;
        let e = req.json();
        let change = &e["groupChange"];
        let place = actions.iter().position(|a| change["action"] == *a);
        if let Some(i) = place.filter(|_| change["participants"][0] == who) {
            found[i] = Some(req);
        }
    }
    found.into_iter().flatten().collect()
}

#[tokio::test]
async fn group_member_changes_are_events_only_for_sessions_that_turned_them_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut on = Receiver::start().await;
    let mut off = Receiver::start().await;
    let p = serve_events(dir.path()).await;
    hooked(&p, "gcon", &on.url, json!({})).await;
    hooked_as(&p, "gcoff", &off.url, json!({}), OTHER_PHONE).await;
    let admin_lid = register(&p, ADMIN).await;
    let newcomer_lid = register(&p, NEWCOMER).await;
    contact(&p).await;
    let (status, group) = post(
        &p,
        "/sandbox/groups",
        json!({"clientId": "gcon", "subject": "Team", "participants": [ADMIN, OTHER_PHONE], "admins": [ADMIN]}),
    )
    .await;
    assert_eq!(status, 200, "{group}");
    let jid = group["jid"].as_str().expect("jid").to_string();

    // Turning events on: known names only.
    refused(
        &p,
        "/set-events",
        [
            (json!({"clientId": "gcon", "events": ["everything"]}), 400),
            (json!({"clientId": "gcon"}), 400),
            (json!({"clientId": "nobody", "events": []}), 404),
        ],
    )
    .await;
    let (status, set) = post(
        &p,
        "/set-events",
        json!({"clientId": "gcon", "events": ["group_participants", "group_participants"]}),
    )
    .await;
    assert_eq!(status, 200, "{set}");
    assert_eq!(
        set,
        json!({"ok": true, "clientId": "gcon", "events": ["group_participants"]})
    );

    // The admin adds a member, then makes it an admin.
    let (status, changed) = change(&p, &jid, ADMIN, "add", NEWCOMER).await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(
        changed,
        json!({"jid": jid, "action": "add", "participants": [NEWCOMER]})
    );
    let (status, changed) = change(&p, &jid, ADMIN, "promote", NEWCOMER).await;
    assert_eq!(status, 200, "{changed}");
    let newcomer = format!("{newcomer_lid}@lid");
    let events = group_events(&mut on, &["add", "promote"], &newcomer).await;
    let (added, promoted) = (&events[0], &events[1]);
    for (req, action) in [(added, "add"), (promoted, "promote")] {
        assert_headers(req, HOOK_TOKEN);
        assert_eq!(req.header("x-sn-event"), Some("group_participants"));
        let e = req.json();
        assert_eq!(e["event"], "group.participants", "{e}");
        assert_eq!(
            e["groupChange"],
            json!({"action": action, "participants": [newcomer]}),
            "{e}"
        );
        assert_eq!(e["isGroup"], true, "{e}");
        assert_eq!(e["remoteJid"], jid.as_str(), "{e}");
        assert_eq!(e["group"]["jid"], jid.as_str(), "{e}");
        assert_eq!(e["group"]["subject"], "Team", "{e}");
        let by = e["group"]["participant"].as_str().unwrap_or_default();
        assert!(
            by == format!("{admin_lid}@lid") || by == format!("{ADMIN}@s.whatsapp.net"),
            "made by the admin: {e}"
        );
        assert_eq!(e["fromMe"], false, "{e}");
        let id = e["eventId"].as_str().unwrap_or_default();
        assert!(id.starts_with("grp_gcon_"), "an id of its own: {e}");
    }
    assert_ne!(added.json()["eventId"], promoted.json()["eventId"]);

    // The other session, events off: a direct message that came after the
    // changes arrives, and nothing of them before it.
    let later = text(&p, "gcoff", "after the changes").await;
    let (_, before) = until_message(&mut off, &later).await;
    assert!(
        before
            .iter()
            .all(|r| r.json()["type"] != "group_participants"),
        "events off, yet: {:?}",
        before.iter().map(Received::json).collect::<Vec<_>>()
    );

    // Refusals: not an admin, not a member, an unknown action, not a group.
    refused(
        &p,
        "/sandbox/groups/participants",
        [
        (
            json!({"clientId": "gcon", "jid": jid, "by": OTHER_PHONE, "action": "remove", "participants": [NEWCOMER]}),
            409,
        ),
        (
            json!({"clientId": "gcon", "jid": jid, "by": ADMIN, "action": "demote", "participants": [CONTACT]}),
            409,
        ),
        (
            json!({"clientId": "gcon", "jid": jid, "by": ADMIN, "action": "ban", "participants": [NEWCOMER]}),
            400,
        ),
        (
            json!({"clientId": "gcon", "jid": "12345", "by": ADMIN, "action": "add", "participants": [NEWCOMER]}),
            400,
        ),
        (
            json!({"clientId": "gcon", "jid": jid, "by": ADMIN, "action": "add", "participants": []}),
            400,
        ),
        ],
    )
    .await;
}
