//! The cross-check with an independent client: Baileys (JavaScript, its own
//! Noise, Signal and media code) linked to a test contact's account talks
//! with `parley serve` on the real adapter: text and an image both ways,
//! the image decrypted by each side, and Baileys' reaction and revoke; and
//! a group, written in by both. (The group is addressed by phone number, as
//! groups made before LIDs are: Baileys 6.17 fetches the keys of a
//! LID-addressed group's members as `<lid>@s.whatsapp.net`, numbers the
//! network does not know; docs/test-network.md.)
//!
//! Runs the `parley-test-network` binary and the Baileys packages that
//! `scripts/wire-e2e.sh` builds and installs.
mod api;

use api::*;
use parley_tests::multipart::{Part, upload_form};
use parley_tests::receiver::Receiver;
use parley_wire_network::{Baileys, TestDevice, WireNetwork};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn baileys_and_the_real_adapter_exchange_text_and_images() {
    let (net, phone, contact) = network_with_phones().await;
    let mut hooks = Receiver::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let p = serve(
        dir.path(),
        &net,
        &[("PARLEY_HOSTED_RECEIVER_URL", hooks.url.as_str())],
    )
    .await;
    let code = start_for_qr(&p, "wireb", &hooks.url).await;
    let session = phone.scan(&net, &code).expect("the phone scans");
    connected(&p, "wireb").await;
    let (status, body) = post(
        &p,
        "/set-org-id",
        json!({"clientId": "wireb", "orgId": "org-b"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");

    let mut baileys = linked_baileys(&net, &contact, session.device).await;

    // Baileys → Parley: a text, then an image.
    let to_session = format!("{PHONE}@s.whatsapp.net");
    let first = baileys
        .send_text(&to_session, "Hello from another client")
        .await
        .expect("Baileys sends a text");
    let e = event_for(&mut hooks, &p, &first).await;
    assert_eq!(
        (&e["type"], &e["body"], &e["fromMe"]),
        (
            &json!("text"),
            &json!("Hello from another client"),
            &json!(false)
        ),
        "{e}"
    );
    let photo: Vec<u8> = (0..6_000u32).map(|i| (i * 13 % 256) as u8).collect();
    let id = baileys
        .send_image(&to_session, &photo, "image/jpeg", "from Baileys")
        .await
        .expect("Baileys sends an image");
    let e = event_for(&mut hooks, &p, &id).await;
    assert_eq!(
        (&e["type"], &e["body"]),
        (&json!("image"), &json!("from Baileys")),
        "{e}"
    );
    let url = e["media"]["downloadUrl"].as_str().unwrap_or_default();
    assert!(url.starts_with("http"), "mirrored: {e}\n{}", p.output());
    assert_eq!(
        fetch(url).await,
        photo,
        "Parley decrypted Baileys' upload: {e}"
    );

    // Parley → Baileys: a text, then an image.
    let id = send_text(&p, "wireb", CONTACT, "Hello from Parley").await;
    let got = baileys
        .message(&id)
        .await
        .expect("Baileys receives the text");
    assert_eq!(got.text.as_deref(), Some("Hello from Parley"));

    // Baileys reacts to Parley's text and takes its own first text back.
    let reaction = baileys
        .react(&to_session, &id, false, "👍")
        .await
        .expect("Baileys reacts");
    let e = event_for(&mut hooks, &p, &reaction).await;
    assert_eq!(
        (&e["type"], &e["reaction"]),
        (&json!("reaction"), &json!({"targetId": id, "emoji": "👍"})),
        "{e}"
    );
    baileys
        .revoke(&to_session, &first)
        .await
        .expect("Baileys revokes its text");
    let e = event_where(&mut hooks, &p, "the revoke", |e| e["type"] == "revoke").await;
    assert_eq!(e["revoke"], json!({"targetId": first}), "{e}");

    let picture = b"\x89PNG\r\n\x1a\n a picture from Parley ".repeat(100);
    let to = format!("+{CONTACT}");
    let (status, sent) = upload_form(
        &p.url("/send-media-message?clientId=wireb"),
        TOKEN,
        &[
            Part::Text("clientId", "wireb"),
            Part::Text("to", &to),
            Part::Text("caption", "from Parley"),
            Part::File {
                name: "file",
                file_name: "p.png",
                content_type: "image/png",
                data: &picture,
            },
        ],
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    let id = sent["messageId"].as_str().expect("messageId").to_string();
    let got = baileys
        .message(&id)
        .await
        .expect("Baileys receives the image");
    assert_eq!(got.text.as_deref(), Some("from Parley"));
    assert_eq!(
        got.image.as_deref(),
        Some(picture.as_slice()),
        "Baileys decrypted Parley's upload"
    );
}

/// Baileys, linked to the contact's account by a QR code the contact's
/// phone scans, once it and the session's device (`device`) have uploaded
/// their keys.
async fn linked_baileys(net: &WireNetwork, contact: &TestDevice, device: u16) -> Baileys {
    let mut baileys = Baileys::start(net).await.expect("Baileys");
    let qr = baileys.qr().await.expect("Baileys shows a QR code");
    let linked = contact
        .scan(net, &qr)
        .expect("the contact's phone scans Baileys");
    let me = baileys.opened().await.expect("Baileys logs in");
    assert!(
        me.starts_with(&format!("{CONTACT}:{}", linked.device)),
        "{me}"
    );
    let watcher = net.watcher();
    for (phone, device) in [(PHONE, device), (CONTACT, linked.device)] {
        let ready = watcher.keys_uploaded(phone, device, WAIT).await;
        assert!(ready, "{phone}:{device} uploaded its keys");
    }
    baileys
}

/// A group addressed by phone number: the session creates it through the
/// API with the contact in it; Baileys writes in it and the webhook gets
/// the group's message from the contact, and the session writes in it and
/// Baileys reads it there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn baileys_and_the_real_adapter_write_in_a_group() {
    let (net, phone, contact) = network_with_phones().await;
    net.address_groups_by_phone(true);
    let mut hooks = Receiver::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let p = serve(dir.path(), &net, &[]).await;
    let code = start_for_qr(&p, "wirebg", &hooks.url).await;
    let session = phone.scan(&net, &code).expect("the phone scans");
    connected(&p, "wirebg").await;
    let on = json!({"clientId": "wirebg", "enabled": true});
    let (status, body) = post(&p, "/set-enable-group-ai", on).await;
    assert_eq!(status, 200, "{body}");
    let mut baileys = linked_baileys(&net, &contact, session.device).await;

    let (status, created) = post(
        &p,
        "/create-group",
        json!({"clientId": "wirebg", "subject": "Suppliers", "participants": [format!("+{CONTACT}")]}),
    )
    .await;
    assert_eq!(status, 200, "{created}");
    let jid = created["groupJid"].as_str().expect("groupJid").to_string();

    // Baileys → the group.
    let id = baileys
        .send_text(&jid, "Stock arrives Monday")
        .await
        .expect("Baileys writes in the group");
    let e = event_for(&mut hooks, &p, &id).await;
    assert_eq!(
        (&e["isGroup"], &e["remoteJid"], &e["body"], &e["fromMe"]),
        (
            &json!(true),
            &json!(jid),
            &json!("Stock arrives Monday"),
            &json!(false)
        ),
        "{e}"
    );
    assert_eq!(e["group"]["subject"], "Suppliers", "{e}");
    let participant = e["group"]["participant"].as_str().unwrap_or_default();
    assert!(
        participant.starts_with(CONTACT) || e["group"]["participantPhone"] == CONTACT,
        "the contact wrote it: {e}"
    );

    // The session → the group.
    let (status, sent) = post(
        &p,
        "/send-message",
        json!({"clientId": "wirebg", "to": jid, "body": "Thanks, noted"}),
    )
    .await;
    assert_eq!(status, 200, "{sent}\n{}", p.output());
    let id = sent["messageId"].as_str().expect("messageId");
    let got = baileys
        .message(id)
        .await
        .expect("Baileys reads the session's message in the group");
    assert_eq!(
        (got.from.as_str(), got.text.as_deref()),
        (jid.as_str(), Some("Thanks, noted"))
    );
}

/// Baileys links by a pairing code instead of a QR scan: the code it gets is
/// typed into the contact's phone, it logs in as a companion of that
/// account, and what it writes reaches the other side.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn baileys_links_by_a_pairing_code() {
    let (net, phone, contact) = network_with_phones().await;
    let mut baileys = Baileys::start(&net).await.expect("Baileys");
    baileys.qr().await.expect("Baileys is ready to link");
    let code = baileys
        .pairing_code(CONTACT)
        .await
        .expect("Baileys gets a pairing code");
    let linked = contact
        .enter_code(&net, &code)
        .await
        .expect("the code typed into the contact's phone");
    let me = baileys.opened().await.expect("Baileys logs in");
    assert!(
        me.starts_with(&format!("{CONTACT}:{}", linked.device)),
        "{me}"
    );
    assert!(
        net.watcher()
            .keys_uploaded(CONTACT, linked.device, WAIT)
            .await,
        "Baileys uploaded its keys"
    );
    let id = baileys
        .send_text(&phone.jid(), "linked by code")
        .await
        .expect("Baileys writes");
    let got = phone
        .wait_for(WAIT, |r| r.id == id)
        .await
        .expect("the phone gets it");
    assert_eq!(got.text.as_deref(), Some("linked by code"));
}
