//! Every kind of message, both ways, between the gateway (the real adapter,
//! hosted inbox on; `parley serve`, and a cluster of an API and two workers)
//! and a test contact on the wire-level test network: files
//! of every kind (mirrored to storage, and decryptable by the other side),
//! locations, contact cards, reactions, edits, revokes, polls and votes,
//! buttons and taps, typing, read receipts and marking a chat unread (an
//! app-state patch the phone decrypts). The webhooks carry the spec's fields.
//!
//! Runs the `parley-test-network` binary that `scripts/wire-e2e.sh` builds.
mod api;

use api::*;
use parley_tests::Parley;
use parley_tests::multipart::{Part, upload_form};
use parley_tests::receiver::Receiver;
use parley_wire_network::{File, FileKind, Signal, TestDevice, WireNetwork};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// A `serve` session paired with the phone, its webhook the hosted receiver.
struct Paired {
    net: WireNetwork,
    phone: TestDevice,
    contact: TestDevice,
    hooks: Receiver,
    /// The process that takes every request (`serve`, or the cluster's API).
    p: Parley,
    /// The cluster's workers, kept alive beside it.
    workers: Vec<(String, Parley)>,
    id: &'static str,
    _dir: tempfile::TempDir,
}

impl Paired {
    async fn start(id: &'static str, shape: Shape) -> Paired {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".into()))
            .with_test_writer()
            .try_init();
        let (net, phone, contact) = network_with_phones().await;
        let hooks = Receiver::start().await;
        let dir = tempfile::tempdir().expect("temp dir");
        let (p, workers) = gateway(
            shape,
            dir.path(),
            &net,
            &[("PARLEY_HOSTED_RECEIVER_URL", hooks.url.as_str())],
        )
        .await;
        let code = start_for_qr(&p, id, &hooks.url).await;
        let linked = phone.scan(&net, &code).expect("the phone scans");
        connected(&p, id).await;
        // Until the new device has uploaded its keys, a contact's first
        // message cannot be encrypted for it (the network has no prekeys).
        let ready = net
            .watcher()
            .keys_uploaded(PHONE, linked.device, WAIT)
            .await;
        let outputs = || outputs(&p, &workers);
        assert!(ready, "the session uploaded its keys:\n{}", outputs());
        let (status, body) =
            post(&p, "/set-org-id", json!({"clientId": id, "orgId": "org-w"})).await;
        assert_eq!(status, 200, "{body}");
        Paired {
            net,
            phone,
            contact,
            hooks,
            p,
            workers,
            id,
            _dir: dir,
        }
    }

    /// Every process's output, for a failure message.
    fn outputs(&self) -> String {
        outputs(&self.p, &self.workers)
    }

    /// The event of message `id`.
    async fn event(&mut self, id: &str) -> Value {
        event_for(&mut self.hooks, &self.p, id).await
    }

    /// Posts `body` (with this session's `clientId`) to `path`; expects 200.
    async fn send(&self, path: &str, mut body: Value) -> Value {
        body["clientId"] = json!(self.id);
        body["to"] = json!(format!("+{CONTACT}"));
        let (status, answer) = post(&self.p, path, body).await;
        assert_eq!(status, 200, "{path}: {answer}\n{}", self.outputs());
        answer
    }

    /// What the contact received as message `id`.
    async fn at_contact(&self, id: &str) -> parley_wire_network::Received {
        self.contact
            .wait_for(WAIT, |r| r.id == id)
            .await
            .unwrap_or_else(|| panic!("the contact did not get {id}:\n{}", self.outputs()))
    }

    fn session_jid(&self) -> String {
        self.phone.jid()
    }
}

/// Distinct bytes for each file.
fn bytes_for(kind: FileKind, len: usize) -> Vec<u8> {
    let seed = kind as u8;
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// (event type, MIME type, file name) of each kind of file.
fn kind_shape(kind: FileKind) -> (&'static str, &'static str, Option<&'static str>) {
    match kind {
        FileKind::Image => ("image", "image/jpeg", None),
        FileKind::Video => ("video", "video/mp4", None),
        FileKind::Audio => ("audio", "audio/mpeg", None),
        FileKind::Voice => ("audio", "audio/ogg; codecs=opus", None),
        FileKind::Document => ("document", "application/pdf", Some("invoice.pdf")),
        FileKind::Sticker => ("sticker", "image/webp", None),
    }
}

fn hash(option: &str) -> String {
    hex::encode(Sha256::digest(option.as_bytes()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_of_every_kind_go_both_ways_and_are_mirrored_on_serve() {
    files_of_every_kind_go_both_ways_and_are_mirrored(Shape::Serve, "kindsfiles").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_of_every_kind_go_both_ways_and_are_mirrored_on_a_cluster() {
    files_of_every_kind_go_both_ways_and_are_mirrored(Shape::Cluster, "kindsfilesc").await;
}

async fn files_of_every_kind_go_both_ways_and_are_mirrored(shape: Shape, id: &'static str) {
    let mut s = Paired::start(id, shape).await;

    // In: the contact uploads each kind; the webhook names it, and the
    // hosted inbox's permanent link serves the decrypted bytes.
    for (i, kind) in FileKind::ALL.into_iter().enumerate() {
        let (kind_name, mime, file_name) = kind_shape(kind);
        let data = bytes_for(kind, 3_000 + 701 * i);
        let caption = matches!(kind, FileKind::Image | FileKind::Video | FileKind::Document)
            .then_some("see this");
        let file = File {
            kind,
            data: &data,
            mime,
            caption,
            file_name,
        };
        let id = s
            .contact
            .send_file(&s.session_jid(), &file)
            .await
            .expect("the contact sends a file");
        let e = s.event(&id).await;
        assert_eq!(e["type"], kind_name, "{kind:?}: {e}");
        assert_eq!(e["fromMe"], false, "{e}");
        let media = &e["media"];
        assert_eq!(media["mimeType"], mime, "{kind:?}: {e}");
        assert_eq!(media["fileSize"], data.len(), "{kind:?}: {e}");
        if kind == FileKind::Voice {
            assert_eq!(media["ptt"], true, "{e}");
        }
        if let Some(name) = file_name {
            assert_eq!(media["fileName"], name, "{e}");
        }
        if let Some(caption) = caption {
            assert_eq!(e["body"], caption, "{e}");
        }
        let url = media["downloadUrl"].as_str().unwrap_or_default();
        assert!(url.starts_with("http"), "mirrored to storage: {e}");
        assert_eq!(
            fetch(url).await,
            data,
            "{kind:?}: the stored file is the sent one"
        );
    }

    // From the phone itself: a file the phone sends reaches the session as
    // its own (`fromMe`), mirrored like any other.
    let from_phone = bytes_for(FileKind::Video, 4_321);
    let file = File {
        kind: FileKind::Video,
        data: &from_phone,
        mime: "video/mp4",
        caption: Some("sent on the phone"),
        file_name: None,
    };
    let contact_jid = s.contact.jid();
    let id = s
        .phone
        .send_file(&contact_jid, &file)
        .await
        .expect("the phone sends a video");
    let e = s.event(&id).await;
    assert_eq!(
        (&e["type"], &e["fromMe"], &e["body"]),
        (&json!("video"), &json!(true), &json!("sent on the phone")),
        "{e}"
    );
    let url = e["media"]["downloadUrl"].as_str().unwrap_or_default();
    assert_eq!(
        fetch(url).await,
        from_phone,
        "the phone's file, stored: {e}"
    );

    // Out: the API uploads each kind; the contact downloads and decrypts
    // the same bytes, and the `fromMe` event links the stored copy.
    for (i, kind) in FileKind::ALL.into_iter().enumerate() {
        let (kind_name, mime, file_name) = kind_shape(kind);
        let data = bytes_for(kind, 2_000 + 503 * i);
        let to = format!("+{CONTACT}");
        let mut parts = vec![
            Part::Text("clientId", s.id),
            Part::Text("to", &to),
            Part::File {
                name: "file",
                file_name: file_name.unwrap_or("file.bin"),
                content_type: mime,
                data: &data,
            },
        ];
        match kind {
            FileKind::Voice => parts.push(Part::Text("sendAudioAsVoice", "true")),
            FileKind::Sticker => parts.push(Part::Text("asSticker", "true")),
            _ => {}
        }
        let (status, sent) = upload_form(
            &s.p.url(&format!("/send-media-message?clientId={}", s.id)),
            TOKEN,
            &parts,
        )
        .await;
        assert_eq!(status, 200, "{kind:?}: {sent}\n{}", s.outputs());
        assert_eq!(sent["mediaType"], kind_name, "{sent}");
        let id = sent["messageId"].as_str().expect("messageId").to_string();
        let got = s.at_contact(&id).await;
        let m = &got.message;
        let arrived_as = match kind {
            FileKind::Image => m.image_message.as_option().is_some(),
            FileKind::Video => m.video_message.as_option().is_some(),
            FileKind::Audio => m
                .audio_message
                .as_option()
                .is_some_and(|a| a.ptt != Some(true)),
            FileKind::Voice => m
                .audio_message
                .as_option()
                .is_some_and(|a| a.ptt == Some(true)),
            FileKind::Document => m
                .document_message
                .as_option()
                .is_some_and(|d| d.file_name.as_deref() == file_name),
            FileKind::Sticker => m.sticker_message.as_option().is_some(),
        };
        assert!(arrived_as, "{kind:?} arrived as {m:?}");
        let bytes = s.contact.download(&got).await.expect("download");
        assert_eq!(bytes, data, "{kind:?}: the contact decrypts what was sent");
        let e = s.event(&id).await;
        assert_eq!(
            (&e["type"], &e["fromMe"]),
            (&json!(kind_name), &json!(true)),
            "{e}"
        );
        let url = e["media"]["downloadUrl"].as_str().unwrap_or_default();
        assert_eq!(
            fetch(url).await,
            data,
            "{kind:?}: the stored copy of a send"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_locations_and_cards_go_both_ways_on_serve() {
    updates_locations_and_cards_go_both_ways(Shape::Serve, "kindsupdates").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_locations_and_cards_go_both_ways_on_a_cluster() {
    updates_locations_and_cards_go_both_ways(Shape::Cluster, "kindsupdatesc").await;
}

async fn updates_locations_and_cards_go_both_ways(shape: Shape, id: &'static str) {
    let mut s = Paired::start(id, shape).await;
    let session = s.session_jid();
    let vcard = "BEGIN:VCARD\nVERSION:3.0\nFN:Ada Shop\nTEL;type=CELL;waid=4915100000499:+49 151 00000499\nEND:VCARD";

    // In: a location, a card, and updates to the contact's own text.
    let here = s
        .contact
        .send_location(&session, 52.52, 13.405, "Alexanderplatz")
        .await
        .expect("location");
    let e = s.event(&here).await;
    assert_eq!(e["type"], "location", "{e}");
    let l = &e["location"];
    assert_eq!(
        (&l["latitude"], &l["longitude"], &l["name"], &l["live"]),
        (
            &json!(52.52),
            &json!(13.405),
            &json!("Alexanderplatz"),
            &json!(false)
        ),
        "{e}"
    );
    let card = s
        .contact
        .send_contact_card(&session, "Ada Shop", vcard)
        .await
        .expect("card");
    let e = s.event(&card).await;
    assert_eq!(e["type"], "contact", "{e}");
    assert_eq!(
        (&e["contact"]["displayName"], &e["contact"]["vcard"]),
        (&json!("Ada Shop"), &json!(vcard)),
        "{e}"
    );
    let text = s
        .contact
        .send_text(&session, "Where is my parcel?")
        .await
        .expect("text");
    s.event(&text).await;
    s.contact
        .edit(&session, &text, "Where is my parcel? (order 77)")
        .await
        .expect("edit");
    let e = event_where(&mut s.hooks, &s.p, "the edit", |e| e["type"] == "edit").await;
    assert_ne!(
        e["messageId"],
        text.as_str(),
        "an edit has an id of its own: {e}"
    );
    assert_eq!(
        e["edit"],
        json!({"targetId": text, "body": "Where is my parcel? (order 77)"})
    );

    // Out: a text from the API, then a reaction to theirs, an edit and a
    // revoke of ours, a location and a card; the contact sees each.
    let ours = s.send("/send-message", json!({"body": "On its way"})).await;
    let ours = ours["messageId"].as_str().expect("messageId").to_string();
    s.at_contact(&ours).await;
    let reacted = s
        .send(
            "/send-reaction",
            json!({"messageId": text, "emoji": "👍", "targetFromMe": false}),
        )
        .await;
    assert_eq!(reacted["targetId"], text.as_str(), "{reacted}");
    let got = s
        .at_contact(reacted["messageId"].as_str().expect("id"))
        .await;
    let r = got
        .message
        .reaction_message
        .as_option()
        .expect("a reaction");
    assert_eq!(r.text.as_deref(), Some("👍"));
    assert_eq!(
        r.key.as_option().and_then(|k| k.id.as_deref()),
        Some(text.as_str())
    );
    let edited = s
        .send(
            "/edit-message",
            json!({"messageId": ours, "body": "On its way: arrives Friday"}),
        )
        .await;
    let got = s
        .contact
        .wait_for(WAIT, |r| {
            r.message.protocol_message.as_option().is_some_and(|p| {
                p.key.as_option().and_then(|k| k.id.as_deref()) == Some(ours.as_str())
                    && p.edited_message
                        .as_option()
                        .and_then(|m| m.conversation.as_deref())
                        == Some("On its way: arrives Friday")
            })
        })
        .await;
    assert!(got.is_some(), "the contact sees the edit {edited}");
    let loc = s
        .send(
            "/send-location",
            json!({"latitude": 48.137, "longitude": 11.575, "name": "Shop"}),
        )
        .await;
    let got = s.at_contact(loc["messageId"].as_str().expect("id")).await;
    let l = got
        .message
        .location_message
        .as_option()
        .expect("a location");
    assert_eq!(
        (l.degrees_latitude, l.degrees_longitude, l.name.as_deref()),
        (Some(48.137), Some(11.575), Some("Shop"))
    );
    let sent_card = s
        .send(
            "/send-contact",
            json!({"displayName": "Ada Shop", "vcard": vcard}),
        )
        .await;
    let got = s
        .at_contact(sent_card["messageId"].as_str().expect("id"))
        .await;
    let c = got.message.contact_message.as_option().expect("a card");
    assert_eq!(
        (c.display_name.as_deref(), c.vcard.as_deref()),
        (Some("Ada Shop"), Some(vcard))
    );
    s.send(
        "/delete-message",
        json!({"messageId": ours, "fromMe": true, "mode": "everyone"}),
    )
    .await;
    let got = s
        .contact
        .wait_for(WAIT, |r| {
            r.message.protocol_message.as_option().is_some_and(|p| {
                p.r#type
                    == Some(
                        whatsapp_rust::waproto::whatsapp::message::protocol_message::Type::REVOKE,
                    )
                    && p.key.as_option().and_then(|k| k.id.as_deref()) == Some(ours.as_str())
            })
        })
        .await;
    assert!(got.is_some(), "the contact sees the revoke");

    // In again: the contact reacts to ours and revokes its own text.
    let reaction = s
        .contact
        .react(
            &session,
            loc["messageId"].as_str().unwrap_or_default(),
            false,
            "❤️",
        )
        .await
        .expect("react");
    let e = s.event(&reaction).await;
    assert_eq!(e["type"], "reaction", "{e}");
    assert_eq!(
        e["reaction"],
        json!({"targetId": loc["messageId"], "emoji": "❤️"})
    );
    s.contact.revoke(&session, &text).await.expect("revoke");
    let e = event_where(&mut s.hooks, &s.p, "the revoke", |e| e["type"] == "revoke").await;
    assert_eq!(e["revoke"], json!({"targetId": text}), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn polls_buttons_typing_and_receipts_on_serve() {
    polls_buttons_typing_and_receipts(Shape::Serve, "kindspolls").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn polls_buttons_typing_and_receipts_on_a_cluster() {
    polls_buttons_typing_and_receipts(Shape::Cluster, "kindspollsc").await;
}

async fn polls_buttons_typing_and_receipts(shape: Shape, id: &'static str) {
    let mut s = Paired::start(id, shape).await;
    let session = s.session_jid();

    // A poll from the API; the contact votes; the vote resolves from history.
    let poll = s
        .send(
            "/send-poll-message",
            json!({"pollName": "Delivery slot?", "pollOptions": ["Morning", "Evening", "Weekend"], "selectableCount": 2}),
        )
        .await;
    let poll_id = poll["messageId"].as_str().expect("messageId").to_string();
    let got = s.at_contact(&poll_id).await;
    let creation = got
        .message
        .poll_creation_message
        .as_option()
        .or_else(|| got.message.poll_creation_message_v3.as_option())
        .expect("a poll");
    assert_eq!(creation.name.as_deref(), Some("Delivery slot?"));
    let e = s.event(&poll_id).await;
    assert_eq!(e["type"], "poll_creation", "{e}");
    let vote = s
        .contact
        .vote(&session, &got, &session, &["Evening", "Weekend"])
        .await
        .expect("vote");
    let e = s.event(&vote).await;
    assert_eq!(e["type"], "vote_update", "{e}");
    let v = &e["pollVote"];
    assert_eq!(v["pollMessageId"], poll_id.as_str(), "{e}");
    assert_eq!(v["resolved"], true, "resolved from hosted history: {e}");
    let mut chosen: Vec<String> = v["selectedOptions"]
        .as_array()
        .expect("selectedOptions")
        .iter()
        .map(|o| o.as_str().unwrap_or_default().to_string())
        .collect();
    chosen.sort();
    assert_eq!(chosen, ["Evening", "Weekend"], "{e}");
    let mut hashes: Vec<&str> = v["selectedHashes"]
        .as_array()
        .expect("selectedHashes")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    hashes.sort();
    let mut expected = [hash("Evening"), hash("Weekend")];
    expected.sort();
    assert_eq!(hashes, expected, "{e}");

    // Buttons from the API; the contact taps one.
    let buttons = s
        .send(
            "/send-interactive-message",
            json!({"bodyText": "Rate us", "footerText": "Shop", "buttons": [
                {"type": "quick_reply", "displayText": "Great", "id": "great"},
                {"type": "quick_reply", "displayText": "Meh", "id": "meh"}
            ]}),
        )
        .await;
    let buttons_id = buttons["messageId"]
        .as_str()
        .expect("messageId")
        .to_string();
    let got = s.at_contact(&buttons_id).await;
    assert!(
        format!("{:?}", got.message).contains("Rate us"),
        "the contact gets the buttons: {:?}",
        got.message
    );
    let tap = s
        .contact
        .tap_button(&session, &buttons_id, "great", "Great")
        .await
        .expect("tap");
    let e = s.event(&tap).await;
    assert_eq!(e["type"], "interactive_reply", "{e}");
    let i = &e["interactive"];
    assert_eq!(
        (&i["targetId"], &i["buttonId"], &i["displayText"]),
        (&json!(buttons_id), &json!("great"), &json!("Great")),
        "{e}"
    );

    // Typing, then paused.
    let (status, body) = post(
        &s.p,
        "/send-typing",
        json!({"clientId": s.id, "to": format!("+{CONTACT}")}),
    )
    .await;
    assert_eq!((status, &body["status"]), (200, &json!("ok")), "{body}");
    let typing = s
        .contact
        .wait_for_signal(
            WAIT,
            |sig| matches!(sig, Signal::Typing { state, .. } if state == "composing"),
        )
        .await;
    assert!(typing.is_some(), "the contact sees the session typing");
    s.send("/send-typing", json!({"composing": false})).await;
    let paused = s
        .contact
        .wait_for_signal(
            WAIT,
            |sig| matches!(sig, Signal::Typing { state, .. } if state == "paused"),
        )
        .await;
    assert!(paused.is_some(), "the contact sees typing stop");

    // Delivery and read receipts for the contact's text.
    let text = s
        .contact
        .send_text(&session, "Evening works")
        .await
        .expect("text");
    s.event(&text).await;
    let delivered = s
        .contact
        .wait_for_signal(WAIT, |sig| matches!(sig, Signal::Receipt { kind, ids } if kind == "delivered" && ids.contains(&text)))
        .await;
    assert!(
        delivered.is_some(),
        "the session's device acknowledged delivery"
    );
    let (status, body) = post(
        &s.p,
        "/mark-read",
        json!({"clientId": s.id, "to": format!("+{CONTACT}"), "messageIds": [text]}),
    )
    .await;
    assert_eq!((status, &body["count"]), (200, &json!(1)), "{body}");
    let read = s
        .contact
        .wait_for_signal(WAIT, |sig| matches!(sig, Signal::Receipt { kind, ids } if kind == "read" && ids.contains(&text)))
        .await;
    assert!(read.is_some(), "the contact sees the read receipt");

    // Marked unread again: the phone receives an app-state patch that opens
    // with the key it shared, naming the chat.
    let (status, body) = post(
        &s.p,
        "/mark-unread",
        json!({"clientId": s.id, "to": format!("+{CONTACT}")}),
    )
    .await;
    assert_eq!(status, 200, "{body}\n{}", s.outputs());
    let changes = s
        .phone
        .app_state_changes(&s.net)
        .expect("the patch opens with the phone's key");
    let unread = changes
        .iter()
        .find(|c| c.index.first().map(String::as_str) == Some("markChatAsRead"))
        .unwrap_or_else(|| panic!("no markChatAsRead change: {changes:?}"));
    let chat = unread.index.get(1).cloned().unwrap_or_default();
    let contact_lid = s.net.lid_of(CONTACT).expect("the contact's LID");
    assert!(
        chat == format!("{CONTACT}@s.whatsapp.net") || chat == format!("{contact_lid}@lid"),
        "the contact's chat: {chat}"
    );
    let action = unread
        .value
        .as_ref()
        .and_then(|v| v.mark_chat_as_read_action.as_option())
        .unwrap_or_else(|| panic!("a markChatAsRead action: {unread:?}"));
    assert_eq!(action.read, Some(false), "{unread:?}");
}
