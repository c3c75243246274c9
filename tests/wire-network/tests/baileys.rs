//! The cross-check with an independent client: Baileys (JavaScript, its own
//! Noise, Signal and media code) linked to a test contact's account talks
//! with `parley serve` on the real adapter: text and an image both ways,
//! the image decrypted by each side.
//!
//! Runs the `parley-test-network` binary and the Baileys packages that
//! `scripts/wire-e2e.sh` builds and installs.
mod api;

use api::*;
use parley_tests::multipart::{Part, upload_form};
use parley_tests::receiver::Receiver;
use parley_wire_network::Baileys;
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

    // Baileys shows a QR code; the contact's phone scans it.
    let mut baileys = Baileys::start(&net).await.expect("Baileys");
    let qr = baileys.qr().await.expect("Baileys shows a QR code");
    let linked = contact
        .scan(&net, &qr)
        .expect("the contact's phone scans Baileys");
    let me = baileys.opened().await.expect("Baileys logs in");
    assert!(
        me.starts_with(&format!("{CONTACT}:{}", linked.device)),
        "{me}"
    );
    let watcher = net.watcher();
    for (phone, device) in [(PHONE, session.device), (CONTACT, linked.device)] {
        let ready = watcher.keys_uploaded(phone, device, WAIT).await;
        assert!(ready, "{phone}:{device} uploaded its keys");
    }

    // Baileys → Parley: a text, then an image.
    let to_session = format!("{PHONE}@s.whatsapp.net");
    let id = baileys
        .send_text(&to_session, "Hello from another client")
        .await
        .expect("Baileys sends a text");
    let e = event_for(&mut hooks, &p, &id).await;
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
