//! Sends through the session actor on the sandbox network: a repeated request
//! id sends once (answered from memory, or joined while in flight), uploads are
//! read back and deleted, files over the attachment limit go out as a link,
//! unpaired sessions are 404 and faults 502 with nothing sent.
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use parley_contract::command::SendResult;
use parley_contract::command::{Command, Reply};
use parley_model::address::PhoneNumber;
use parley_model::ids::ClientId;
use parley_model::media::MediaInfo;
use parley_model::outgoing::{Content, MediaRequest, MediaSource, OutgoingMessage};
use parley_model::recipients::Recipient;
use parley_network_sandbox::ops::SandboxOp;
use parley_network_sandbox::store::{OutboxEntry, Store};
use parley_shared::egress::Egress;

use super::fakes::{World, cid, eventually, fast_timing, test_fetcher};
use super::{Origin, Supervisor, Wiring};
use crate::network::Network;
use crate::send::download::{Fetcher, Limits};
use parley_network_sandbox::SandboxNetwork;
use parley_tests::files::{Answer, serve};

const CONTACT_LID: &str = "123456789012345";

/// A supervisor on the sandbox network of `world`, downloading with `fetcher`.
fn sandbox_supervisor(world: &World, fetcher: Fetcher) -> Supervisor {
    sandbox_supervisor_through(world, fetcher, "a", |sandbox| sandbox)
}

/// A supervisor (pod `pod`) on the sandbox network of `world`, connecting
/// through what `through` makes of it.
pub(super) fn sandbox_supervisor_through(
    world: &World,
    fetcher: Fetcher,
    pod: &str,
    through: impl FnOnce(Arc<dyn Network>) -> Arc<dyn Network>,
) -> Supervisor {
    let sandbox = Arc::new(SandboxNetwork::new(
        world.db.clone(),
        Duration::from_secs(600),
        Duration::from_secs(600),
    ));
    Supervisor::new(Wiring {
        db: world.db.clone(),
        bus: Arc::new(world.bus.clone()),
        leases: Arc::new(world.leases.clone()),
        network: through(sandbox.clone()),
        control: Some(sandbox),
        pod_name: pod.into(),
        timing: fast_timing(),
        media: world.media(),
        fetcher,
        events: super::fakes::test_events(),
    })
}

/// Starts `id` and links it through the simulated phone.
pub(super) async fn linked(world: &World, supervisor: &Supervisor, id: &ClientId) {
    world.create(id).await;
    supervisor.claim(id, Origin::Start).await.unwrap();
    eventually("the session shows a QR", || async {
        world.row(id).await.is_some_and(|r| r.status == "qr")
    })
    .await;
    let link = SandboxOp::Link {
        phone: PhoneNumber::from_digits("4915112345678").unwrap(),
        name: String::new(),
        qr: None,
    };
    let reply = world.send(id, link.command().unwrap()).await.unwrap();
    assert!(matches!(reply, Ok(Reply::Linked { .. })), "{reply:?}");
}

fn send(content: Content) -> Command {
    Command::Send(OutgoingMessage {
        to: Recipient::Lid(CONTACT_LID.into()),
        content,
        quoted_message_id: None,
        mentions: vec![],
        meta: None,
        status: None,
    })
}

pub(super) fn text(body: &str) -> Command {
    send(Content::Text { body: body.into() })
}

fn media(source: MediaSource) -> Command {
    send(Content::Media(MediaRequest {
        source,
        info: MediaInfo::default(),
        sticker: false,
    }))
}

pub(super) async fn outbox(world: &World, id: &str) -> Vec<OutboxEntry> {
    Store::new(world.db.clone())
        .outbox(id, None, None, 1000)
        .await
        .unwrap()
}

pub(super) fn sent(reply: Reply) -> SendResult {
    match reply {
        Reply::Sent(result) => result,
        other => panic!("expected Sent, got {other:?}"),
    }
}

#[tokio::test]
async fn a_repeated_request_id_sends_once() {
    let world = World::new().await;
    let a = sandbox_supervisor(&world, test_fetcher());
    linked(&world, &a, &cid("s1")).await;
    let first = world
        .send_as(&cid("s1"), text("hi"), "req-1")
        .await
        .unwrap();
    let again = world
        .send_as(&cid("s1"), text("hi"), "req-1")
        .await
        .unwrap();
    assert_eq!(first, again);
    let id = sent(first.unwrap()).message_id;
    let rows = outbox(&world, "s1").await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].message_id, id);
    assert_eq!(rows[0].to_jid, format!("{CONTACT_LID}@lid"));
    // Another request id is another message.
    world
        .send_as(&cid("s1"), text("hi"), "req-2")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outbox(&world, "s1").await.len(), 2);
}

#[tokio::test]
async fn a_repeat_while_the_send_runs_waits_for_the_same_outcome() {
    let world = World::new().await;
    let a = sandbox_supervisor(&world, test_fetcher());
    linked(&world, &a, &cid("s1")).await;
    let server = serve(Answer::Full {
        status: 200,
        content_type: "image/png",
        body: b"\x89PNG".to_vec(),
        delay: Duration::from_millis(400),
    })
    .await;
    let s1 = cid("s1");
    let command = media(MediaSource::Url {
        url: format!("{}/a.png", server.base),
    });
    let (one, two) = tokio::join!(world.send_as(&s1, command.clone(), "req-media"), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        world.send_as(&s1, command.clone(), "req-media").await
    });
    let (one, two) = (one.unwrap().unwrap(), two.unwrap().unwrap());
    assert_eq!(one, two);
    assert_eq!(server.hits(), 1, "downloaded once");
    let result = sent(one);
    assert_eq!(
        (result.media_type.as_deref(), result.bytes),
        (Some("image"), Some(4))
    );
    assert_eq!(outbox(&world, "s1").await.len(), 1);

    // Meanwhile the session went on answering other commands.
    let (slow, quick) = tokio::join!(world.send_as(&s1, command.clone(), "req-media-2"), async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let started = tokio::time::Instant::now();
        let reply = world.send(&cid("s1"), text("quick")).await;
        (reply, started.elapsed())
    });
    slow.unwrap().unwrap();
    let (reply, took) = quick;
    reply.unwrap().unwrap();
    assert!(
        took < Duration::from_millis(250),
        "not held up by the download: {took:?}"
    );
}

#[tokio::test]
async fn uploads_are_read_back_sent_and_deleted() {
    let world = World::new().await;
    let a = sandbox_supervisor(&world, test_fetcher());
    linked(&world, &a, &cid("s1")).await;
    let store = world.media();
    let data = Bytes::from_static(b"%PDF-1.7 test");
    store
        .put("tmp/upload1", "application/pdf", data.clone())
        .await
        .unwrap();
    let command = send(Content::Media(MediaRequest {
        source: MediaSource::Upload {
            key: "tmp/upload1".into(),
        },
        info: MediaInfo {
            mime_type: "application/pdf".into(),
            caption: "invoice".into(),
            file_name: "inv.pdf".into(),
            ptt: false,
            view_once: false,
        },
        sticker: false,
    }));
    let result = sent(world.send(&cid("s1"), command).await.unwrap().unwrap());
    assert_eq!(result.media_type.as_deref(), Some("document"));
    let row = outbox(&world, "s1").await.pop().unwrap();
    assert_eq!(row.kind, "document");
    assert_eq!(row.payload["fileName"], "inv.pdf");
    assert_eq!(row.payload["caption"], "invoice");
    let digest = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(&data))
    };
    assert_eq!(row.payload["sha256"], digest.as_str());
    assert_eq!(row.payload["bytes"], data.len());
    assert_eq!(
        store.get("tmp/upload1").await.unwrap(),
        None,
        "deleted after the send"
    );
}

#[tokio::test]
async fn files_over_the_attachment_limit_go_out_as_a_link() {
    let world = World::new().await;
    let limits = Limits {
        attach_max: 1_000,
        ..Limits::SPEC
    };
    let fetcher = Fetcher::new(Egress::direct(true), limits).unwrap();
    let a = sandbox_supervisor(&world, fetcher);
    linked(&world, &a, &cid("s1")).await;
    let server = serve(Answer::file("video/mp4", vec![0u8; 5_000])).await;
    let url = format!("{}/big.mp4", server.base);
    let reply = world
        .send(&cid("s1"), media(MediaSource::Url { url: url.clone() }))
        .await
        .unwrap()
        .unwrap();
    let result = sent(reply);
    assert_eq!(result.fallback.as_deref(), Some("text"));
    assert_eq!((result.media_type, result.bytes), (None, None));
    let row = outbox(&world, "s1").await.pop().unwrap();
    assert_eq!(
        (row.kind.as_str(), row.payload["body"].as_str()),
        ("text", Some(url.as_str()))
    );
}

#[tokio::test]
async fn unpaired_sessions_are_404_and_faults_502_with_nothing_sent() {
    let world = World::new().await;
    let a = sandbox_supervisor(&world, test_fetcher());
    world.create(&cid("fresh")).await;
    a.claim(&cid("fresh"), Origin::Start).await.unwrap();
    eventually("the session shows a QR", || async {
        world
            .row(&cid("fresh"))
            .await
            .is_some_and(|r| r.status == "qr")
    })
    .await;
    let err = world
        .send(&cid("fresh"), text("x"))
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(
        (err.status, err.message.as_str()),
        (404, "unknown or unpaired clientId")
    );

    linked(&world, &a, &cid("s1")).await;
    let fault = SandboxOp::Fault {
        op: "send".into(),
        count: 1,
    };
    world
        .send(&cid("s1"), fault.command().unwrap())
        .await
        .unwrap()
        .unwrap();
    let err = world
        .send(&cid("s1"), text("x"))
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(err.status, 502, "{err:?}");
    assert!(outbox(&world, "s1").await.is_empty());
    world.send(&cid("s1"), text("y")).await.unwrap().unwrap();
    assert_eq!(outbox(&world, "s1").await.len(), 1);
}
