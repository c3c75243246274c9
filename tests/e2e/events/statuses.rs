//! Opt-in events: a contact's status update (a story, `status@broadcast`)
//! reaches the webhook as a `status` event only once the session turned it
//! on with `/set-events`; with default settings it is dropped, as the spec
//! has it.
use serde_json::json;

use super::support::*;

#[tokio::test]
async fn a_contacts_status_is_an_event_once_turned_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut rx = parley_tests::receiver::Receiver::start().await;
    let p = serve_events(dir.path()).await;
    let my_lid = hooked(&p, "st", &rx.url, json!({})).await;
    let lid = contact(&p).await;
    let post_status = |body: &'static str| {
        let p = &p;
        async move {
            inject(
                p,
                "st",
                json!({"type": "text", "body": body, "chat": "status@broadcast"}),
            )
            .await
        }
    };

    // Off by default: the status is not delivered.
    post_status("closed today").await;
    let marker = text(&p, "st", "are you open?").await;
    let (_, before) = until_message(&mut rx, &marker).await;
    assert!(before.is_empty(), "a status was delivered while off");

    let set = turn_on(&p, "st", &["status"]).await;
    assert_eq!(set["events"], json!(["status"]));
    let id = post_status("open again tomorrow").await;
    let (req, before) = until_message(&mut rx, &id).await;
    assert!(before.is_empty());
    assert_headers(&req, HOOK_TOKEN);
    let e = req.json();
    assert_eq!(e["event"], "status.received", "{e}");
    assert_eq!(e["type"], "status", "{e}");
    assert_eq!(e["status"], json!({"type": "text"}), "{e}");
    assert_eq!(e["body"], "open again tomorrow", "{e}");
    assert_eq!(e["eventId"], format!("sts_st_{id}"), "{e}");
    assert_eq!(e["remoteJid"], format!("{lid}@lid"), "{e}");
    assert_eq!(e["clientLid"], lid.as_str(), "{e}");
    assert_eq!(e["remotePhone"], CONTACT, "{e}");
    assert_eq!(e["chatRoomId"], format!("st-{my_lid}-{lid}"), "{e}");
    assert_eq!(
        (e["isGroup"].as_bool(), e["fromMe"].as_bool()),
        (Some(false), Some(false)),
        "{e}"
    );
    // The contact's messages stay messages.
    let direct = text(&p, "st", "see my status").await;
    let (req, _) = until_message(&mut rx, &direct).await;
    assert_eq!(req.json()["type"], "text");
}
