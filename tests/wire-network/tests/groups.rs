//! Groups with the real adapter, through `parley serve` and a cluster (an
//! API and two workers) on the wire-level
//! test network: a group created through the API with a test contact in it,
//! messages both ways (sender keys fanned out by the server), a subject the
//! contact changes showing in the next event, the invite link, members
//! removed, and leaving; a rename while the session was offline reaching
//! it at its next login; and who may change a group's settings.
//!
//! Runs the `parley-test-network` binary that `scripts/wire-e2e.sh` builds.
mod api;

use api::*;
use parley_model::inbound::GroupSetting;
use parley_tests::receiver::Receiver;
use parley_wire_network::faults::Fault;
use parley_wire_network::{Signal, TestDevice};
use serde_json::{Value, json};
use whatsapp_rust::wacore::iq::groups::{GroupCreateOptions, GroupParticipantOptions};
use whatsapp_rust::{GroupError, IqError, PreviousDescription};

fn phones(group: &Value) -> Vec<String> {
    group["participants"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .map(|p| p["phone"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The group event of the contact's message `id`, checked for its group fields.
async fn group_event(hooks: &mut Receiver, p: &parley_tests::Parley, id: &str, jid: &str) -> Value {
    let e = event_for(hooks, p, id).await;
    assert_eq!(
        (&e["isGroup"], &e["remoteJid"], &e["group"]["jid"]),
        (&json!(true), &json!(jid), &json!(jid)),
        "{e}"
    );
    let participant = e["group"]["participant"].as_str().unwrap_or_default();
    assert!(
        participant.starts_with(CONTACT) || e["group"]["participantPhone"] == CONTACT,
        "the sender is the contact: {e}"
    );
    e
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_are_created_written_to_renamed_and_left_on_serve() {
    groups_are_created_written_to_renamed_and_left(Shape::Serve).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_are_created_written_to_renamed_and_left_on_a_cluster() {
    groups_are_created_written_to_renamed_and_left(Shape::Cluster).await;
}

async fn groups_are_created_written_to_renamed_and_left(shape: Shape) {
    let (net, phone, contact) = network_with_phones().await;
    let mut hooks = Receiver::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (p, workers) = gateway(shape, dir.path(), &net, &[]).await;
    let code = start_for_qr(&p, "wireg", &hooks.url).await;
    phone.scan(&net, &code).expect("the phone scans");
    connected(&p, "wireg").await;
    let (status, body) = post(
        &p,
        "/set-enable-group-ai",
        json!({"clientId": "wireg", "enabled": true}),
    )
    .await;
    assert_eq!(status, 200, "{body}");

    // Created with the contact in it.
    let (status, created) = post(
        &p,
        "/create-group",
        json!({"clientId": "wireg", "subject": "Orders", "participants": [format!("+{CONTACT}")]}),
    )
    .await;
    assert_eq!(status, 200, "{created}\n{}", outputs(&p, &workers));
    let jid = created["groupJid"].as_str().expect("groupJid").to_string();
    assert!(jid.ends_with("@g.us"), "{created}");
    assert_eq!(created["participants"][0]["ok"], true, "{created}");
    let (status, group) = post(
        &p,
        "/get-group-participants",
        json!({"clientId": "wireg", "groupJid": jid}),
    )
    .await;
    assert_eq!(status, 200, "{group}");
    assert_eq!(group["subject"], "Orders", "{group}");
    let mut listed = phones(&group);
    listed.sort();
    assert_eq!(listed, [PHONE, CONTACT], "{group}");

    // Out: the API writes to the group; the contact reads it there.
    let (status, sent) = post(
        &p,
        "/send-message",
        json!({"clientId": "wireg", "to": jid, "body": "Welcome to the order group"}),
    )
    .await;
    assert_eq!(status, 200, "{sent}\n{}", outputs(&p, &workers));
    let id = sent["messageId"].as_str().expect("messageId").to_string();
    let got = contact
        .wait_for(WAIT, |r| r.id == id)
        .await
        .unwrap_or_else(|| panic!("the contact did not get {id}:\n{}", outputs(&p, &workers)));
    assert_eq!(
        (got.chat.as_str(), got.text.as_deref()),
        (jid.as_str(), Some("Welcome to the order group"))
    );

    // In: the contact writes in the group; the event names the group.
    let theirs = contact
        .send_text(&jid, "Thanks! Order 77 please")
        .await
        .expect("the contact writes in the group");
    let e = group_event(&mut hooks, &p, &theirs, &jid).await;
    assert_eq!(
        (&e["body"], &e["group"]["subject"]),
        (&json!("Thanks! Order 77 please"), &json!("Orders")),
        "{e}"
    );

    // The contact renames the group: the next event carries the new subject.
    contact
        .set_group_setting(&jid, &GroupSetting::Subject("Orders (November)".into()))
        .await
        .expect("rename");
    let again = contact
        .send_text(&jid, "Renamed it")
        .await
        .expect("the contact writes again");
    let e = group_event(&mut hooks, &p, &again, &jid).await;
    assert_eq!(e["group"]["subject"], "Orders (November)", "{e}");

    // Every group message so far, the session's and the contact's, came with
    // the participant hash the server computes.
    assert_eq!(net.stale_phashes(), 0, "no stale participant hash");

    // Invite link, a member removed, and leaving.
    let (status, invite) = post(
        &p,
        "/group-invite-link",
        json!({"clientId": "wireg", "groupJid": jid}),
    )
    .await;
    assert_eq!(status, 200, "{invite}");
    let link = invite["link"].as_str().unwrap_or_default();
    assert!(link.starts_with("https://chat.whatsapp.com/"), "{invite}");
    let (status, removed) = post(
        &p,
        "/update-group-members",
        json!({"clientId": "wireg", "groupJid": jid, "action": "remove", "participants": [format!("+{CONTACT}")]}),
    )
    .await;
    assert_eq!(status, 200, "{removed}");
    assert_eq!(removed["participants"][0]["ok"], true, "{removed}");
    let (_, group) = post(
        &p,
        "/get-group-participants",
        json!({"clientId": "wireg", "groupJid": jid}),
    )
    .await;
    assert_eq!(phones(&group), [PHONE], "{group}");

    // The removed contact may not write there any more: a client that skips
    // its library's checks is refused by the server (403, 404 for a group
    // that does not exist), and nobody gets its message.
    for (to, code) in [
        (jid.clone(), "403"),
        ("120363999999999999@g.us".into(), "404"),
    ] {
        let forged = contact
            .send_raw_group_message(&to)
            .await
            .expect("a raw group message");
        let refusal = contact
            .wait_for_signal(
                WAIT,
                |s| matches!(s, Signal::Refused { id, .. } if *id == forged),
            )
            .await;
        assert_eq!(
            refusal,
            Some(Signal::Refused {
                id: forged.clone(),
                code: code.into()
            }),
            "{to}"
        );
        assert!(
            net.relayed_from(CONTACT, 0).iter().all(|r| r.id != forged),
            "the refused message reached no one"
        );
    }
    let (status, left) = post(
        &p,
        "/leave-group",
        json!({"clientId": "wireg", "groupJid": jid}),
    )
    .await;
    assert_eq!((status, &left["ok"]), (200, &json!(true)), "{left}");
    let (status, groups) = post(&p, "/get-groups", json!({"clientId": "wireg"})).await;
    assert_eq!(status, 200, "{groups}");
    assert_eq!(groups["groups"], json!([]), "{groups}");

    // Writing to a group the session has left is a refusal naming the cause.
    let (status, refused) = post(
        &p,
        "/send-message",
        json!({"clientId": "wireg", "to": jid, "body": "Anyone?"}),
    )
    .await;
    assert_eq!(status, 502, "{refused}");
    let why = refused["error"].as_str().unwrap_or_default();
    assert!(why.contains(parley_network::NOT_A_MEMBER), "{refused}");
}

/// A group renamed while the session was offline: the `w:gp2` notification
/// waits in the session's offline queue and comes at its next login, so the
/// next event from the group names the new subject.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_renamed_while_the_session_was_offline_names_the_new_subject() {
    let LinkedServe {
        net,
        contact,
        mut hooks,
        p,
        device,
        // Kept alive: the phone shares the app-state key (and with it
        // the salt) and the directory holds the database.
        phone: _phone,
        dir: _dir,
        ..
    } = linked_on_serve("wireo").await;
    let (status, body) = post(
        &p,
        "/set-enable-group-ai",
        json!({"clientId": "wireo", "enabled": true}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, created) = post(
        &p,
        "/create-group",
        json!({"clientId": "wireo", "subject": "Orders", "participants": [format!("+{CONTACT}")]}),
    )
    .await;
    assert_eq!(status, 200, "{created}");
    let jid = created["groupJid"].as_str().expect("groupJid").to_string();
    let first = contact
        .send_text(&jid, "First")
        .await
        .expect("the contact writes in the group");
    let e = group_event(&mut hooks, &p, &first, &jid).await;
    assert_eq!(e["group"]["subject"], "Orders", "{e}");

    // Offline: the socket drops and the next logins are refused for a while.
    net.arm_fault(PHONE, device, Fault::LoginRateLimited, 3);
    assert!(net.drop_socket(PHONE, device));
    eventually("the session offline", || async {
        (!net.is_live(PHONE, device)).then_some(())
    })
    .await;
    contact
        .set_group_setting(&jid, &GroupSetting::Subject("Orders (December)".into()))
        .await
        .expect("the contact renames the group");
    eventually("the session back online", || async {
        net.is_live(PHONE, device).then_some(())
    })
    .await;
    connected(&p, "wireo").await;

    let again = contact
        .send_text(&jid, "Renamed it while you were away")
        .await
        .expect("the contact writes again");
    let e = group_event(&mut hooks, &p, &again, &jid).await;
    assert_eq!(e["group"]["subject"], "Orders (December)", "{e}");
}

/// `device`'s account changes `setting` of `group`.
async fn set(device: &TestDevice, group: &str, setting: GroupSetting) -> Result<(), GroupError> {
    device.set_group_setting(group, &setting).await
}

/// The server's code in a group request's error, if it is one.
fn code(result: Result<(), GroupError>) -> Option<u16> {
    match result {
        Err(GroupError::Iq(IqError::ServerError { code, .. })) => Some(code),
        _ => None,
    }
}

/// A group's own settings, between two accounts' clients on the network:
/// announcement and locked mode are an admin's to change, a locked group's
/// info too; a description names the one it replaces; the metadata shows
/// the settings; in announcement mode a member who is not an admin cannot
/// send to the group.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_groups_settings_are_changed_by_whom_the_network_lets() {
    let (_net, phone, contact) = network_with_phones().await;
    let member: whatsapp_rust::Jid = phone.jid().parse().expect("a JID");
    let created = contact
        .client
        .groups()
        .create_group(
            GroupCreateOptions::new("Shop")
                .with_participants(vec![GroupParticipantOptions::new(member)]),
        )
        .await
        .expect("the contact founds a group");
    let group = created.metadata.id;
    let jid = group.to_string();

    // A plain member may not turn announcement or locked mode on.
    assert_eq!(
        code(set(&phone, &jid, GroupSetting::Announce(true)).await),
        Some(401)
    );
    assert_eq!(
        code(set(&phone, &jid, GroupSetting::Locked(true)).await),
        Some(401)
    );
    // Any member describes an open group; a stale `prev` is a conflict.
    set(
        &phone,
        &jid,
        GroupSetting::Description("Orders and returns".into()),
    )
    .await
    .expect("a member describes the group");
    let stale = contact
        .client
        .groups()
        .set_description(
            group.clone(),
            Some(whatsapp_rust::GroupDescription::new("Mine").expect("a description")),
            PreviousDescription::Id("0BADC0DE"),
        )
        .await;
    assert!(
        matches!(stale, Err(GroupError::DescriptionConflict)),
        "{stale:?}"
    );
    // Disappearing messages for the durations the apps offer only.
    assert_eq!(
        code(set(&contact, &jid, GroupSetting::Ephemeral(5)).await),
        Some(400)
    );
    set(&contact, &jid, GroupSetting::Ephemeral(86_400))
        .await
        .expect("a day");
    // The admin locks the group: its info is the admins' now.
    set(&contact, &jid, GroupSetting::Locked(true))
        .await
        .expect("the admin locks it");
    let rename = GroupSetting::Subject("Renamed".into());
    assert_eq!(code(set(&phone, &jid, rename).await), Some(401));
    let describe = GroupSetting::Description("Mine".into());
    assert_eq!(code(set(&phone, &jid, describe).await), Some(401));
    let meta = phone
        .client
        .groups()
        .get_metadata(&group)
        .await
        .expect("the group's metadata");
    assert_eq!(
        (
            meta.description.as_deref(),
            meta.is_locked,
            meta.is_announcement
        ),
        (Some("Orders and returns"), true, false)
    );
    assert_eq!(meta.ephemeral.and_then(|e| e.expiration), Some(86_400));

    // Announcement mode: the member's group message is refused.
    set(&contact, &jid, GroupSetting::Announce(true))
        .await
        .expect("the admin turns announcement mode on");
    let refused = phone
        .send_raw_group_message(&jid)
        .await
        .expect("a raw group message");
    let answer = phone
        .wait_for_signal(
            WAIT,
            |s| matches!(s, Signal::Refused { id, .. } if *id == refused),
        )
        .await;
    assert_eq!(
        answer,
        Some(Signal::Refused {
            id: refused,
            code: "401".into()
        })
    );
    let admin = contact.send_text(&jid, "Doors open at nine").await;
    assert!(admin.is_ok(), "the admin still writes: {admin:?}");
}
