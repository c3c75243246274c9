//! View-once images and videos, a kind the spec does not name, end to end on
//! the sandbox: sent by URL and by upload (the outbox records the flag, the
//! `fromMe` event carries `media.viewOnce`), and received (the event says it;
//! a kind that cannot be shown once never is).
use parley_tests::receiver::Receiver;
use serde_json::json;

use super::support::*;
use crate::sends::support::{Answer, Part, file_server, last, upload};
use crate::support::*;

#[tokio::test]
async fn view_once_media_go_out_and_come_in_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_events(dir.path()).await;
    let mut rx = Receiver::start().await;
    hooked(&p, "vo1", &rx.url, json!({})).await;
    contact(&p).await;

    // By URL: an image shown once.
    let server = file_server(Answer::file("image/png", b"\x89PNG once".to_vec())).await;
    let (status, sent) = post(
        &p,
        "/send-media-message",
        json!({"clientId": "vo1", "to": format!("+{CONTACT}"), "viewOnce": true,
               "downloadUrl": format!("{}/once.png", server.base)}),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    let entry = last(&p, "vo1").await;
    assert_eq!(entry["messageId"], sent["messageId"]);
    assert_eq!(entry["payload"]["viewOnce"], true, "{entry}");
    let (event, _) = until_message(&mut rx, sent["messageId"].as_str().unwrap()).await;
    let e = event.json();
    assert_eq!(
        (e["type"].as_str(), e["fromMe"].as_bool()),
        (Some("image"), Some(true))
    );
    assert_eq!(e["media"]["viewOnce"], true, "{e}");

    // By upload: a document cannot be shown once, so it goes out as usual.
    let (status, sent) = upload(
        &p,
        "?clientId=vo1",
        &[
            Part::File {
                name: "file",
                file_name: "terms.pdf",
                content_type: "application/pdf",
                data: b"%PDF-1.7",
            },
            Part::Text("to", &format!("+{CONTACT}")),
            Part::Text("viewOnce", "true"),
        ],
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    let entry = last(&p, "vo1").await;
    assert_eq!(entry["kind"], "document");
    assert!(entry["payload"].get("viewOnce").is_none(), "{entry}");
    let (event, _) = until_message(&mut rx, sent["messageId"].as_str().unwrap()).await;
    assert_eq!(event.json()["media"]["viewOnce"], false);
    let (status, body) = upload(
        &p,
        "?clientId=vo1",
        &[
            Part::File {
                name: "file",
                file_name: "a.png",
                content_type: "image/png",
                data: b"\x89PNG",
            },
            Part::Text("to", &format!("+{CONTACT}")),
            Part::Text("viewOnce", "maybe"),
        ],
    )
    .await;
    assert_eq!(status, 400, "{body}");

    // Received: a contact's view-once video, and an audio the flag cannot apply to.
    let id = inject(
        &p,
        "vo1",
        json!({"type": "video", "data": "AAAA", "mimeType": "video/mp4", "viewOnce": true}),
    )
    .await;
    let (event, _) = until_message(&mut rx, &id).await;
    let e = event.json();
    assert_eq!(
        (e["type"].as_str(), e["fromMe"].as_bool()),
        (Some("video"), Some(false))
    );
    assert_eq!(e["media"]["viewOnce"], true, "{e}");
    let id = inject(
        &p,
        "vo1",
        json!({"type": "audio", "data": "AAAA", "mimeType": "audio/ogg", "viewOnce": true}),
    )
    .await;
    let (event, _) = until_message(&mut rx, &id).await;
    assert_eq!(event.json()["media"]["viewOnce"], false);
}
