//! Messages on the real adapter beyond the contract: what the linked phone
//! sends itself reaches the session as its own (`fromMe`), and images go
//! both ways through the CDN stand-in, encrypted end to end.
mod support;

use futures::StreamExt;
use parley_contract::spool::FileBody;
use parley_model::inbound::Content;
use parley_model::media::{MediaInfo, MediaKind};
use parley_model::outgoing::Content as Sent;
use parley_network::contract::{CONTACT, DEADLINE, PHONE};
use parley_network::outgoing::{MediaFile, Outgoing};
use parley_network::{Connection, Network, NetworkEvent, SessionContext};
use parley_wire_network::TestDevice;
use parley_wire_network::devices::Received;
use parley_wire_network::kinds::{File, FileKind};
use support::{Fixture, fixture};
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_phone_sends_arrives_as_from_me() {
    let f = fixture("m1").await;
    let id = support::client_id_of("m1");
    let ctx = SessionContext {
        client_id: id.clone(),
        fence: 1,
        pod_name: "wire".into(),
        proxy: None,
    };
    let (_conn, mut events) = f.network.connect(ctx).await.expect("connect");
    let code = match tokio::time::timeout(DEADLINE, events.recv()).await {
        Ok(Some(NetworkEvent::Qr { code })) => code,
        other => panic!("expected a QR code, got {other:?}"),
    };
    parley_network::contract::Counterpart::scan(&f.wire, &id, &code, PHONE)
        .await
        .expect("scan");
    loop {
        match tokio::time::timeout(DEADLINE, events.recv()).await {
            Ok(Some(NetworkEvent::Connected(_))) => break,
            Ok(Some(_)) => continue,
            other => panic!("expected Connected, got {other:?}"),
        }
    }
    let contact = format!("{CONTACT}@s.whatsapp.net");
    let id = f
        .wire
        .phone
        .send_text(&contact, "sent on the phone")
        .await
        .expect("the phone sends");
    let echo = support::message(&mut events, &id).await;
    assert!(echo.from_me, "{echo:?}");
    assert_eq!(
        echo.content,
        Content::Text {
            body: "sent on the phone".into()
        }
    );
    assert!(
        echo.chat == contact || echo.chat.is_lid(),
        "the chat is the contact: {echo:?}"
    );
    // The contact got it too.
    let got = f
        .wire
        .contact
        .wait_for(DEADLINE, |r| r.id == id)
        .await
        .expect("the contact receives the phone's message");
    assert_eq!(got.text.as_deref(), Some("sent on the phone"));
}

/// An image for `to` (a JID), presented as `info` says.
/// Sends `picture` to the contact as an image with `info`; what the
/// contact's device received of it.
async fn image_to_contact(
    f: &Fixture,
    conn: &dyn Connection,
    picture: &[u8],
    info: MediaInfo,
) -> Received {
    let message = Outgoing {
        to: parley_network::Jid::parse(&format!("{CONTACT}@s.whatsapp.net")).expect("a JID"),
        content: Sent::Media(MediaFile {
            kind: MediaKind::Image,
            data: FileBody::from_bytes(picture.to_vec()),
            info,
        }),
        quoted_id: None,
        mentions: vec![],
        status: None,
    };
    let sent = conn.send(message).await.expect("send an image");
    f.wire
        .contact
        .wait_for(DEADLINE, |r| r.id == sent.message_id.as_str())
        .await
        .expect("the contact receives the image")
}

/// A file of 5 MiB or more is asked about at the CDN before it is sent
/// (`resume=1`), and a media auth that expired (401) sends the adapter back
/// to `media_conn` for a new one: the file still arrives whole, the CDN
/// having checked its hash against the token it was uploaded under.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_file_goes_out_after_its_media_auth_expired() {
    let f = fixture("m4").await;
    let (conn, _events, _) = support::online(&f, "m4").await;
    f.wire.net.expire_media_auths();
    let report: Vec<u8> = (0..6 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    let message = Outgoing {
        to: parley_network::Jid::parse(&format!("{CONTACT}@s.whatsapp.net")).expect("a JID"),
        content: Sent::Media(MediaFile {
            kind: MediaKind::Document,
            data: FileBody::from_bytes(report.clone()),
            info: MediaInfo {
                mime_type: "application/pdf".into(),
                file_name: "report.pdf".into(),
                ..MediaInfo::default()
            },
        }),
        quoted_id: None,
        mentions: vec![],
        status: None,
    };
    let sent = conn.send(message).await.expect("send a large document");
    let got = f
        .wire
        .contact
        .wait_for(DEADLINE, |r| r.id == sent.message_id.as_str())
        .await
        .expect("the contact receives the document");
    let bytes = f.wire.contact.download(&got).await.expect("download");
    assert!(bytes == report, "the file arrives whole");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_go_out_and_come_in_through_the_cdn() {
    let f = fixture("m2").await;
    let (conn, mut events, _) = support::online(&f, "m2").await;

    // Out: the adapter encrypts and uploads; the contact downloads and decrypts.
    let picture = b"\x89PNG\r\n\x1a\n an image from the gateway".repeat(50);
    let look = MediaInfo {
        mime_type: "image/png".into(),
        caption: "look".into(),
        ..MediaInfo::default()
    };
    let got = image_to_contact(&f, conn.as_ref(), &picture, look).await;
    assert!(
        got.message.image_message.as_option().is_some(),
        "an image message"
    );
    let bytes = f.wire.contact.download(&got).await.expect("download");
    assert_eq!(bytes, picture);

    // In: the contact uploads one; the session's message points at it and
    // the adapter downloads and decrypts it.
    let theirs = b"\xff\xd8\xff a photo from the contact".repeat(40);
    let id = f
        .wire
        .contact
        .send_image(&f.wire.phone.jid(), &theirs, "image/jpeg")
        .await
        .expect("the contact sends an image");
    let message = support::message(&mut events, &id).await;
    let Content::Media {
        kind,
        download,
        info,
    } = &message.content
    else {
        panic!("not media: {message:?}");
    };
    assert_eq!(*kind, MediaKind::Image);
    assert_eq!(info.mime_type, "image/jpeg");
    let mut stream = conn
        .download_media(*kind, download, 1 << 20)
        .await
        .expect("the adapter downloads it");
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        bytes.extend_from_slice(&chunk.expect("a chunk"));
    }
    assert_eq!(bytes, theirs);
    // Under a cap smaller than the file, nothing is downloaded.
    let capped = conn
        .download_media(*kind, download, theirs.len() as u64 - 1)
        .await;
    assert!(capped.is_err(), "a file over the cap is refused");
}

/// A view-once image goes out flagged inside the network's view-once wrapper,
/// and one the contact sends comes in with `view_once` set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn view_once_images_go_out_and_come_in_as_view_once() {
    let f = fixture("m3").await;
    let (conn, mut events, _) = support::online(&f, "m3").await;

    let picture = b"\x89PNG\r\n\x1a\n seen once".repeat(20);
    let once = MediaInfo {
        mime_type: "image/png".into(),
        view_once: true,
        ..MediaInfo::default()
    };
    let got = image_to_contact(&f, conn.as_ref(), &picture, once).await;
    let image = got.message.image_message.as_option().expect("an image");
    assert_eq!(image.view_once, Some(true), "flagged view once");
    assert_eq!(
        f.wire.contact.download(&got).await.expect("download"),
        picture
    );

    let theirs = b"\xff\xd8\xff once only".repeat(20);
    let file = File {
        kind: FileKind::Image,
        data: &theirs,
        mime: "image/jpeg",
        caption: Some("just once"),
        file_name: None,
    };
    let mut inner = f.wire.contact.upload_file(&file).await.expect("upload");
    if let Some(image) = inner.image_message.as_option_mut() {
        image.view_once = Some(true);
    }
    let wrapped = wa::Message {
        view_once_message_v2: MessageField::some(wa::message::FutureProofMessage {
            message: MessageField::some(inner),
        }),
        ..Default::default()
    };
    let id = f
        .wire
        .contact
        .send(&f.wire.phone.jid(), wrapped)
        .await
        .expect("the contact sends a view-once image");
    let message = support::message(&mut events, &id).await;
    let Content::Media { kind, info, .. } = &message.content else {
        panic!("not media: {message:?}");
    };
    assert_eq!(*kind, MediaKind::Image);
    assert!(info.view_once, "read as view once: {info:?}");
    assert_eq!(info.caption, "just once");
}

/// A text from the session to the contact; the id it went out under.
async fn text_to_contact(conn: &dyn Connection, body: &str) -> String {
    let message = Outgoing {
        to: parley_network::Jid::parse(&format!("{CONTACT}@s.whatsapp.net")).expect("a JID"),
        content: Sent::Text { body: body.into() },
        quoted_id: None,
        mentions: vec![],
        status: None,
    };
    let sent = conn.send(message).await.expect("send a text");
    sent.message_id.as_str().to_string()
}

/// The session writes to the contact, which then reinstalls (announced or
/// not); the new install, once its keys are up.
async fn text_then_reinstall(
    f: &support::Fixture,
    conn: &dyn Connection,
    announced: bool,
) -> TestDevice {
    let before = text_to_contact(conn, "before").await;
    f.wire
        .contact
        .wait_for(DEADLINE, |r| r.id == before)
        .await
        .expect("the contact gets the first text");
    // The session issued the contact its privacy token (the announced
    // reinstall issues it again).
    let watcher = f.wire.net.watcher();
    assert!(watcher.holds_token(CONTACT, 0, PHONE, DEADLINE).await);
    f.wire.net.announce_identity_changes(announced);
    TestDevice::start(&f.wire.net, CONTACT, "Contact")
        .await
        .expect("the contact's new install")
}

/// The session's next text after the reinstall, once the new install got
/// it; whether it came by the retry path (the new install could not open
/// what was sealed for the old one and asked again).
async fn text_after(
    f: &support::Fixture,
    conn: &dyn Connection,
    reinstalled: &TestDevice,
) -> (String, bool) {
    let after = text_to_contact(conn, "after the reinstall").await;
    let got = reinstalled
        .wait_for(DEADLINE, |r| r.id == after)
        .await
        .expect("the new install gets the next text");
    assert_eq!(got.text.as_deref(), Some("after the reinstall"));
    let retried = f
        .wire
        .net
        .relayed_from(CONTACT, 0)
        .iter()
        .any(|r| r.id == after && r.kind == "receipt:retry");
    (after, retried)
}

/// The contact reinstalls between two messages: the same number on a new
/// phone, with a new identity key and new Signal keys, while the session
/// still holds a Signal session with the old ones. The news of the
/// reinstall does not reach the session (the next test has it): the new
/// install asks for the message again (a retry receipt) and gets it sealed
/// for its keys; messages keep flowing both ways, each delivered once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_contact_who_reinstalled_still_gets_and_sends_messages() {
    let f = fixture("m6").await;
    let (conn, mut events, _) = support::online(&f, "m6").await;
    let reinstalled = text_then_reinstall(&f, conn.as_ref(), false).await;
    let (after, retried) = text_after(&f, conn.as_ref(), &reinstalled).await;
    assert!(retried, "{:?}", f.wire.net.relayed_from(CONTACT, 0));

    let theirs = reinstalled
        .send_text(&f.wire.phone.jid(), "hello from my new phone")
        .await
        .expect("the new install writes");
    let message = support::message(&mut events, &theirs).await;
    assert!(
        matches!(&message.content, Content::Text { body } if body == "hello from my new phone"),
        "{message:?}"
    );
    assert_eq!(
        reinstalled
            .received()
            .iter()
            .filter(|r| r.id == after)
            .count(),
        1,
        "delivered once"
    );
}

/// A contact who reinstalls, announced: the server tells the session of the
/// number's new identity once the new install uploaded its keys; the
/// session drops its session with the old keys, seals the next message for
/// the new ones at once (no retry receipt), and issues the new install its
/// privacy token again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_contact_s_announced_reinstall_needs_no_retry_and_gets_its_token_again() {
    let f = fixture("m7").await;
    let (conn, _events, device) = support::online(&f, "m7").await;
    let reinstalled = text_then_reinstall(&f, conn.as_ref(), true).await;
    let watcher = f.wire.net.watcher();
    assert!(
        watcher
            .heard_identity_change(PHONE, device, CONTACT, DEADLINE)
            .await,
        "the session handled the news of the new identity"
    );
    let phone_lid = f.wire.net.lid_of(PHONE).expect("a LID");
    let reissued = async {
        let until = tokio::time::Instant::now() + DEADLINE;
        while tokio::time::Instant::now() < until {
            if reinstalled.token_from(&phone_lid).await.is_some() {
                return true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        false
    };
    assert!(
        reissued.await,
        "the new install got the session's token again"
    );
    let (_, retried) = text_after(&f, conn.as_ref(), &reinstalled).await;
    assert!(!retried, "sealed for the new keys at once");
}
