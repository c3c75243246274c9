//! Group routes end to end through `parley serve` on the sandbox network:
//! listing, participants, creation and member updates answered per
//! participant, invite links (reset), leaving; 400 for bad fields, 403 for a
//! non-admin, 404 for unknown sessions and groups, 409 while not connected.
use serde_json::{Value, json};

use crate::contacts::register;
use crate::sends::support::*;
use crate::support::*;

const ANN: &str = "4917600000401";
const BOB: &str = "4917600000402";
const CARL: &str = "4917600000403";
const OFFLINE: &str = "4917600000404";
const NOBODY: &str = "4917600000499";

/// A sandbox group with the session's phone in it; returns its JID.
async fn sandbox_group(p: &Parley, id: &str, participants: &[&str], admins: &[&str]) -> String {
    let (status, body) = post(
        p,
        "/sandbox/groups",
        json!({"clientId": id, "subject": "Team", "participants": participants, "admins": admins}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["subject"], "Team");
    let jid = body["jid"].as_str().unwrap().to_string();
    assert!(jid.ends_with("@g.us"), "{jid}");
    jid
}

async fn members(p: &Parley, group: &str) -> Vec<(String, String)> {
    let (status, body) = post(
        p,
        "/get-group-participants",
        json!({"clientId": "shop", "groupJid": group}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let mut all: Vec<(String, String)> = body["participants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["phone"].as_str().unwrap().to_string(),
                m["role"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    all.sort();
    all
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = list
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    all.sort();
    all
}

/// `(participant, ok, status)` of each result.
fn outcomes(body: &Value) -> Vec<(String, bool, u64)> {
    body["participants"]
        .as_array()
        .unwrap_or_else(|| panic!("{body}"))
        .iter()
        .map(|r| {
            (
                r["participant"].as_str().unwrap().to_string(),
                r["ok"].as_bool().unwrap(),
                r["status"].as_u64().unwrap(),
            )
        })
        .collect()
}

async fn shop_with_contacts(dir: &std::path::Path) -> (Parley, String, String) {
    let p = serve_sends(dir, false).await;
    linked(&p, "shop").await;
    let ann = register(&p, ANN, json!({"name": "Ann"})).await;
    let bob = register(&p, BOB, json!({})).await;
    register(&p, CARL, json!({})).await;
    register(&p, OFFLINE, json!({"onNetwork": false})).await;
    (p, ann, bob)
}

#[tokio::test]
async fn groups_are_listed_inspected_and_created() {
    let dir = tempfile::tempdir().unwrap();
    let (p, ann, bob) = shop_with_contacts(dir.path()).await;
    let team = sandbox_group(&p, "shop", &[ANN, BOB], &[OWN_PHONE]).await;

    let (status, body) = post(&p, "/get-groups", json!({"clientId": "shop"})).await;
    assert_eq!(status, 200, "{body}");
    let groups = body["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{body}");
    assert_eq!(groups[0]["groupJid"], team);
    assert_eq!(groups[0]["subject"], "Team");
    assert_eq!(groups[0]["participants"].as_array().unwrap().len(), 3);

    let (_, body) = post(
        &p,
        "/get-group-participants",
        json!({"clientId": "shop", "groupJid": team}),
    )
    .await;
    let annie = body["participants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["phone"] == ANN)
        .cloned()
        .unwrap();
    assert_eq!(
        annie,
        json!({"jid": format!("{ann}@lid"), "lid": ann, "phone": ANN, "role": "member"})
    );
    assert!(
        body["createdAt"].as_str().is_some_and(|t| t.ends_with('Z')),
        "{body}"
    );
    assert_eq!(
        members(&p, &team).await,
        pairs(&[(OWN_PHONE, "admin"), (ANN, "member"), (BOB, "member")])
    );

    // Created by the session: a mix of valid and invalid participants.
    let (status, body) = post(
        &p,
        "/create-group",
        json!({"clientId": "shop", "subject": "  Launch  ",
               "participants": [format!("+{ANN}"), bob, format!("+{OFFLINE}"), format!("+{NOBODY}")]}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["subject"], "Launch");
    assert_eq!(
        outcomes(&body),
        vec![
            (format!("+{ANN}"), true, 200),
            (format!("{bob}@lid"), true, 200),
            (format!("+{OFFLINE}"), false, 404),
            (format!("+{NOBODY}"), false, 404),
        ]
    );
    assert_eq!(body["participants"][2]["error"], "not on the network");
    let launch = body["groupJid"].as_str().unwrap().to_string();
    assert_eq!(
        members(&p, &launch).await,
        pairs(&[(OWN_PHONE, "superadmin"), (ANN, "member"), (BOB, "member")])
    );
    let (_, body) = post(&p, "/get-groups", json!({"clientId": "shop"})).await;
    assert_eq!(body["groups"].as_array().unwrap().len(), 2);

    for body in [
        json!({"clientId": "shop", "participants": [ANN]}),
        json!({"clientId": "shop", "subject": " ", "participants": [format!("+{ANN}")]}),
        json!({"clientId": "shop", "subject": "x".repeat(101), "participants": [format!("+{ANN}")]}),
        json!({"clientId": "shop", "subject": "S"}),
        json!({"clientId": "shop", "subject": "S", "participants": []}),
        json!({"clientId": "shop", "subject": "S", "participants": ["abc"]}),
        json!({"clientId": "shop", "subject": "S", "participants": [team]}),
    ] {
        let (status, answer) = post(&p, "/create-group", body.clone()).await;
        assert_eq!(status, 400, "{body}: {answer}");
    }
}

#[tokio::test]
async fn member_updates_answer_per_participant() {
    let dir = tempfile::tempdir().unwrap();
    let (p, _ann, _bob) = shop_with_contacts(dir.path()).await;
    let team = sandbox_group(&p, "shop", &[ANN], &[OWN_PHONE]).await;
    let update = |action: &str, who: Vec<String>| json!({"clientId": "shop", "groupJid": team, "action": action, "participants": who});

    let (status, body) = post(
        &p,
        "/update-group-members",
        update(
            "add",
            vec![format!("+{ANN}"), format!("+{BOB}"), format!("+{OFFLINE}")],
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["groupJid"].as_str(), body["action"].as_str()),
        (Some(team.as_str()), Some("add"))
    );
    assert_eq!(
        outcomes(&body),
        vec![
            (format!("+{ANN}"), false, 409),
            (format!("+{BOB}"), true, 200),
            (format!("+{OFFLINE}"), false, 404),
        ]
    );
    assert_eq!(
        body["participants"][0]["error"],
        "already a member of the group"
    );
    assert_eq!(body["participants"][1]["error"], "");

    let (_, body) = post(
        &p,
        "/update-group-members",
        update("promote", vec![format!("+{BOB}"), format!("+{CARL}")]),
    )
    .await;
    assert_eq!(
        outcomes(&body),
        vec![
            (format!("+{BOB}"), true, 200),
            (format!("+{CARL}"), false, 404)
        ]
    );
    assert_eq!(
        body["participants"][1]["error"],
        "not a member of the group"
    );
    assert_eq!(
        members(&p, &team).await,
        pairs(&[(OWN_PHONE, "admin"), (ANN, "member"), (BOB, "admin")])
    );
    let (_, body) = post(
        &p,
        "/update-group-members",
        update("demote", vec![format!("+{BOB}")]),
    )
    .await;
    assert_eq!(outcomes(&body), vec![(format!("+{BOB}"), true, 200)]);
    let (_, body) = post(
        &p,
        "/update-group-members",
        update("remove", vec![format!("+{ANN}"), format!("+{CARL}")]),
    )
    .await;
    assert_eq!(
        outcomes(&body),
        vec![
            (format!("+{ANN}"), true, 200),
            (format!("+{CARL}"), false, 404)
        ]
    );
    assert_eq!(
        members(&p, &team).await,
        pairs(&[(OWN_PHONE, "admin"), (BOB, "member")])
    );

    // Not an admin: refused as a whole.
    let plain = sandbox_group(&p, "shop", &[ANN], &[ANN]).await;
    let (status, body) = post(
        &p,
        "/update-group-members",
        json!({"clientId": "shop", "groupJid": plain, "action": "add", "participants": [format!("+{BOB}")]}),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        members(&p, &plain).await,
        pairs(&[(OWN_PHONE, "member"), (ANN, "admin")])
    );

    for body in [
        update("kick", vec![format!("+{BOB}")]),
        update("", vec![format!("+{BOB}")]),
        update("add", vec![]),
        update("add", vec!["nope".into()]),
        json!({"clientId": "shop", "groupJid": "123456789@lid", "action": "add", "participants": [ANN]}),
        json!({"clientId": "shop", "action": "add", "participants": [ANN]}),
    ] {
        let (status, answer) = post(&p, "/update-group-members", body.clone()).await;
        assert_eq!(status, 400, "{body}: {answer}");
    }
}

#[tokio::test]
async fn invite_links_reset_and_leaving_a_group() {
    let dir = tempfile::tempdir().unwrap();
    let (p, _, _) = shop_with_contacts(dir.path()).await;
    let team = sandbox_group(&p, "shop", &[ANN], &[OWN_PHONE]).await;
    let link = |reset: bool| {
        let p = &p;
        let team = team.clone();
        async move {
            let (status, body) = post(
                p,
                "/group-invite-link",
                json!({"clientId": "shop", "groupJid": team, "reset": reset}),
            )
            .await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(body["groupJid"], team);
            let code = body["code"].as_str().unwrap().to_string();
            assert_eq!(body["link"], format!("https://chat.whatsapp.com/{code}"));
            assert_eq!(code.len(), 22);
            code
        }
    };
    let first = link(false).await;
    assert_eq!(link(false).await, first);
    let second = link(true).await;
    assert_ne!(second, first);
    assert_eq!(link(false).await, second);

    let plain = sandbox_group(&p, "shop", &[ANN], &[]).await;
    let (status, _) = post(
        &p,
        "/group-invite-link",
        json!({"clientId": "shop", "groupJid": plain}),
    )
    .await;
    assert_eq!(status, 403);

    let (status, body) = post(
        &p,
        "/leave-group",
        json!({"clientId": "shop", "groupJid": team}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({"ok": true, "groupJid": team}));
    let (_, body) = post(&p, "/get-groups", json!({"clientId": "shop"})).await;
    let listed: Vec<&str> = body["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["groupJid"].as_str().unwrap())
        .collect();
    assert_eq!(listed, vec![plain.as_str()]);
    // Gone for the session: every group route answers 404.
    for (route, body) in [
        (
            "/leave-group",
            json!({"clientId": "shop", "groupJid": team}),
        ),
        (
            "/get-group-participants",
            json!({"clientId": "shop", "groupJid": team}),
        ),
        (
            "/group-invite-link",
            json!({"clientId": "shop", "groupJid": team}),
        ),
        (
            "/update-group-members",
            json!({"clientId": "shop", "groupJid": team, "action": "add", "participants": [ANN]}),
        ),
        (
            "/get-group-participants",
            json!({"clientId": "shop", "groupJid": "120363999999999999@g.us"}),
        ),
    ] {
        let (status, answer) = post(&p, route, body).await;
        assert_eq!(status, 404, "{route}: {answer}");
    }
    for body in [
        json!({"clientId": "shop"}),
        json!({"clientId": "shop", "groupJid": "x@g.us"}),
    ] {
        let (status, _) = post(&p, "/leave-group", body.clone()).await;
        assert_eq!(status, 400, "{body}");
    }
}

#[tokio::test]
async fn group_routes_are_404_for_unknown_and_409_for_unconnected_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_sends(dir.path(), false).await;
    started(&p, "waiting").await;
    let group = "120363000000000001@g.us";
    for (id, expected) in [("nobody", 404), ("waiting", 409)] {
        for (route, body) in [
            ("/get-groups", json!({"clientId": id})),
            (
                "/get-group-participants",
                json!({"clientId": id, "groupJid": group}),
            ),
            (
                "/create-group",
                json!({"clientId": id, "subject": "S", "participants": [format!("+{ANN}")]}),
            ),
            (
                "/update-group-members",
                json!({"clientId": id, "groupJid": group, "action": "add", "participants": [format!("+{ANN}")]}),
            ),
            (
                "/group-invite-link",
                json!({"clientId": id, "groupJid": group}),
            ),
            ("/leave-group", json!({"clientId": id, "groupJid": group})),
        ] {
            let (status, answer) = post(&p, route, body).await;
            assert_eq!(status, expected, "{id} {route}: {answer}");
        }
    }
    // The sandbox control: the session must be linked; admins must be members.
    let create = |id: &str, admins: Vec<&str>| json!({"clientId": id, "subject": "S", "participants": [ANN], "admins": admins});
    assert_eq!(
        post(&p, "/sandbox/groups", create("waiting", vec![]))
            .await
            .0,
        409
    );
    assert_eq!(
        post(&p, "/sandbox/groups", create("nobody", vec![]))
            .await
            .0,
        404
    );
    linked(&p, "shop").await;
    for body in [
        create("shop", vec![BOB]),
        json!({"clientId": "shop", "subject": "", "participants": [ANN]}),
        json!({"clientId": "shop", "subject": "S", "participants": ["12"]}),
    ] {
        let (status, answer) = post(&p, "/sandbox/groups", body.clone()).await;
        assert_eq!(status, 400, "{body}: {answer}");
    }
}
