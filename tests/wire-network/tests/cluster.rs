//! The cluster with the real adapter on the wire-level test network: an API
//! and two workers (device keys in PostgreSQL). SIGKILL the worker holding a
//! session: another connects it from the stored keys, without a scan, and
//! messages flow; SIGTERM hands it over. The test network never sees two
//! live sockets of the device at once. A session paired by code sends and
//! receives files, mirrored to S3. Baileys, an independent client, keeps
//! chatting with a session while it moves to another worker.
//!
//! Needs the test services (`PARLEY_TEST_*`, as `scripts/test.sh` or
//! `scripts/with-services.sh` provide) and the binary `scripts/wire-e2e.sh` builds.
mod api;

use std::time::{Duration, Instant};

use api::*;
use parley_tests::Parley;
use parley_tests::multipart::{Part, upload_form};
use parley_wire_network::{Baileys, WireNetwork};
use serde_json::json;

/// Longest wait for a session to be connected by another worker (a killed
/// owner's lease must run out first).
const FAILOVER_WAIT: Duration = Duration::from_secs(45);

struct Cluster {
    dir: tempfile::TempDir,
    vars: Vec<(String, String)>,
    api: Parley,
    workers: Vec<(String, Parley)>,
}

impl Cluster {
    /// The API and two workers on `net`, plus `more` settings.
    async fn start(net: &WireNetwork, more: &[(&str, &str)]) -> Cluster {
        let dir = tempfile::tempdir().expect("temp dir");
        let vars = cluster_vars(net, more).await;
        let (ok, out) =
            parley_tests::process::run_once(&bin(), &["migrate"], dir.path(), &vars).await;
        assert!(ok, "migrate: {out}");
        let api = spawn(dir.path(), &vars, "api", "api-0").await;
        let mut c = Cluster {
            dir,
            vars,
            api,
            workers: Vec::new(),
        };
        for pod in ["worker-0", "worker-1"] {
            c.add_worker(pod).await;
        }
        c
    }

    /// Every process's output, for a failure message.
    fn outputs(&self) -> String {
        let mut all = format!("api:\n{}", self.api.output());
        for (pod, w) in &self.workers {
            all.push_str(&format!("\n{pod}:\n{}", w.output()));
        }
        all
    }

    /// The webhook event of message `id`; panics with every output after [`WAIT`].
    async fn event(
        &self,
        hooks: &mut parley_tests::receiver::Receiver,
        id: &str,
    ) -> serde_json::Value {
        match maybe_event(hooks, |e| e["messageId"] == id).await {
            Ok(event) => event,
            Err(skipped) => panic!("no webhook for {id} (got {skipped:?}):\n{}", self.outputs()),
        }
    }

    async fn add_worker(&mut self, pod: &str) {
        let w = spawn(self.dir.path(), &self.vars, "worker", pod).await;
        self.workers.push((pod.to_string(), w));
    }

    /// The worker that reports the session connected, by its index; waits
    /// out a dead owner's lease.
    async fn owner(&self, id: &str) -> usize {
        eventually_within(FAILOVER_WAIT, "an owner", || async {
            for (i, (_, w)) in self.workers.iter().enumerate() {
                let res = reqwest::get(w.url("/health/clients")).await.ok()?;
                let body: serde_json::Value = res.json().await.ok()?;
                let owns = body["clients"].as_array().is_some_and(|cs| {
                    cs.iter()
                        .any(|c| c["clientId"] == id && c["connected"] == true)
                });
                if owns {
                    return Some(i);
                }
            }
            None
        })
        .await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_worker_s_session_comes_back_elsewhere_without_a_scan() {
    let (net, phone, contact) = network_with_phones().await;
    let hooks = parley_tests::receiver::Receiver::start().await;
    let mut c = Cluster::start(&net, &[]).await;

    let code = start_for_qr(&c.api, "wirec1", &hooks.url).await;
    let linked = phone.scan(&net, &code).expect("the phone scans");
    let device = linked.device;
    assert_eq!(connected(&c.api, "wirec1").await, linked.jid);
    let id = send_text(&c.api, "wirec1", CONTACT, "before the failover").await;
    assert!(contact.wait_for(WAIT, |r| r.id == id).await.is_some());
    // The contact answers, and issues the session a privacy token, which
    // moves with the session (tests/tokens.rs has the rest of tokens).
    contact
        .send_text(&phone.jid(), "got it")
        .await
        .expect("the contact answers");
    assert!(
        net.watcher()
            .holds_token(PHONE, device, CONTACT, WAIT)
            .await,
        "{}",
        c.outputs()
    );

    // SIGKILL the owner: the other worker connects the session from its keys.
    let owner = c.owner("wirec1").await;
    let (pod, mut victim) = c.workers.remove(owner);
    let killed = Instant::now();
    victim.kill().await;
    let survivor = c.owner("wirec1").await;
    assert_ne!(c.workers[survivor].0, pod);
    let id = send_text(&c.api, "wirec1", CONTACT, "after the failover").await;
    let got = contact.wait_for(WAIT, |r| r.id == id).await;
    let flowing = killed.elapsed();
    assert_eq!(
        got.and_then(|r| r.text).as_deref(),
        Some("after the failover")
    );
    eprintln!("real adapter: SIGKILL to a message delivered from another worker in {flowing:?}");
    assert!(
        net.gated()
            .iter()
            .any(|g| g.id == id && g.proof == parley_wire_network::tokens::Proof::Trusted),
        "the message after the move carried the contact's token: {:?}",
        net.gated()
    );

    // SIGTERM the new owner: the session is handed over to a worker that joins.
    c.add_worker("worker-2").await;
    let owner = c.owner("wirec1").await;
    let (_, mut leaving) = c.workers.remove(owner);
    assert_eq!(leaving.terminate().await, Some(0), "{}", leaving.output());
    c.owner("wirec1").await;
    let id = send_text(&c.api, "wirec1", CONTACT, "after the handover").await;
    assert!(contact.wait_for(WAIT, |r| r.id == id).await.is_some());

    // No new scan, and never two sockets of the device at once.
    assert_eq!(net.devices_of(PHONE), vec![0, device]);
    assert_eq!(net.most_live_sockets(PHONE, device), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_paired_by_code_sends_and_receives_files_mirrored_to_s3() {
    let (net, phone, contact) = network_with_phones().await;
    let mut hooks = parley_tests::receiver::Receiver::start().await;
    let c = Cluster::start(&net, &[("PARLEY_HOSTED_RECEIVER_URL", hooks.url.as_str())]).await;
    // Paired by a code typed into the phone.
    let code = start_for_code(&c.api, "wirec2", &hooks.url, PHONE).await;
    let linked = phone
        .enter_code(&net, &code)
        .await
        .expect("the code is typed");
    assert_eq!(connected(&c.api, "wirec2").await, linked.jid);
    let ready = net
        .watcher()
        .keys_uploaded(PHONE, linked.device, WAIT)
        .await;
    assert!(ready, "the session uploaded its keys:\n{}", c.outputs());
    let (status, body) = post(
        &c.api,
        "/set-org-id",
        json!({"clientId": "wirec2", "orgId": "org-c"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");

    // In: the worker downloads, decrypts and stores the contact's photo in S3.
    let photo: Vec<u8> = (0..40_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let id = contact
        .send_image(&phone.jid(), &photo, "image/jpeg")
        .await
        .expect("the contact sends a photo");
    let e = c.event(&mut hooks, &id).await;
    assert_eq!(e["type"], "image", "{e}");
    let url = e["media"]["downloadUrl"].as_str().unwrap_or_default();
    assert_eq!(fetch(url).await, photo, "the stored copy: {e}");

    // Out: an uploaded document reaches the contact, decryptable, and its
    // `fromMe` event links the stored copy.
    let pdf: Vec<u8> = b"%PDF-1.4 an invoice ".repeat(900);
    let to = format!("+{CONTACT}");
    let (status, sent) = upload_form(
        &c.api.url("/send-media-message?clientId=wirec2"),
        TOKEN,
        &[
            Part::Text("clientId", "wirec2"),
            Part::Text("to", &to),
            Part::File {
                name: "file",
                file_name: "invoice.pdf",
                content_type: "application/pdf",
                data: &pdf,
            },
        ],
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    let id = sent["messageId"].as_str().expect("messageId").to_string();
    let got = contact
        .wait_for(WAIT, |r| r.id == id)
        .await
        .expect("the contact gets the document");
    assert_eq!(contact.download(&got).await.expect("download"), pdf);
    let e = c.event(&mut hooks, &id).await;
    assert_eq!(
        (&e["type"], &e["fromMe"]),
        (&json!("document"), &json!(true)),
        "{e}"
    );
    let url = e["media"]["downloadUrl"].as_str().unwrap_or_default();
    assert_eq!(fetch(url).await, pdf, "the stored copy of the send: {e}");
}

/// An independent client keeps chatting with a session while the session
/// moves to another worker: Baileys, linked to the contact's account, and
/// the session write each other before and after a handover (SIGTERM), with
/// no new scan and one socket of the device at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn baileys_keeps_chatting_while_the_session_moves() {
    let (net, phone, contact) = network_with_phones().await;
    let mut hooks = parley_tests::receiver::Receiver::start().await;
    let mut c = Cluster::start(&net, &[]).await;
    let code = start_for_qr(&c.api, "wirec3", &hooks.url).await;
    let session = phone.scan(&net, &code).expect("the phone scans");
    connected(&c.api, "wirec3").await;
    let mut baileys = Baileys::start(&net).await.expect("Baileys");
    let qr = baileys.qr().await.expect("Baileys shows a QR code");
    let linked = contact.scan(&net, &qr).expect("the contact scans Baileys");
    baileys.opened().await.expect("Baileys logs in");
    let watcher = net.watcher();
    for (who, device) in [(PHONE, session.device), (CONTACT, linked.device)] {
        let ready = watcher.keys_uploaded(who, device, WAIT).await;
        assert!(ready, "{who}:{device} uploaded its keys");
    }

    exchange(&c, &mut hooks, &mut baileys, "before the move").await;

    c.add_worker("worker-2").await;
    let owner = c.owner("wirec3").await;
    let (_, mut leaving) = c.workers.remove(owner);
    assert_eq!(leaving.terminate().await, Some(0), "{}", leaving.output());
    c.owner("wirec3").await;
    exchange(&c, &mut hooks, &mut baileys, "after the move").await;

    assert_eq!(net.devices_of(PHONE), vec![0, session.device]);
    assert_eq!(net.most_live_sockets(PHONE, session.device), 1);
}

/// Baileys writes to the session (a webhook event) and the session to
/// Baileys (received and decrypted).
async fn exchange(
    c: &Cluster,
    hooks: &mut parley_tests::receiver::Receiver,
    baileys: &mut Baileys,
    when: &str,
) {
    let text = format!("from Baileys {when}");
    let id = baileys
        .send_text(&format!("{PHONE}@s.whatsapp.net"), &text)
        .await
        .expect("Baileys writes");
    let e = c.event(hooks, &id).await;
    assert_eq!(e["body"], text.as_str(), "{e}");
    let text = format!("from Parley {when}");
    let id = send_text(&c.api, "wirec3", CONTACT, &text).await;
    let got = baileys.message(&id).await.expect("Baileys gets it");
    assert_eq!(got.text.as_deref(), Some(text.as_str()));
}
