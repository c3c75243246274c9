//! Contact routes end to end through `parley serve` on the sandbox network:
//! `/user-info`, `/check-owner-lid` and `/profile-picture` with every status of
//! the spec, the learned LID <-> phone mapping used by sends, the picture cache
//! (hit vs `refresh`) and the mirrored copies (once per picture version).
mod cluster;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use crate::sends::support::*;
use crate::support::*;

const ANN: &str = "4917600000301";
const BOB: &str = "4917600000302";
const OFFLINE: &str = "4917600000303";
const NOBODY: &str = "4917600000399";

/// A PNG-looking avatar (the network checks the signature only).
pub fn avatar(tag: &str) -> Vec<u8> {
    let mut data = b"\x89PNG\r\n\x1a\n".to_vec();
    data.extend_from_slice(tag.as_bytes());
    data
}

/// Registers `phone` on the simulated network with `fields`; returns its LID.
pub async fn register(p: &Parley, phone: &str, fields: Value) -> String {
    let mut body = json!({"phone": phone});
    body.as_object_mut()
        .unwrap()
        .extend(fields.as_object().unwrap().clone());
    let (status, answer) = post(p, "/sandbox/contacts", body).await;
    assert_eq!(status, 200, "{answer}");
    answer["lid"].as_str().unwrap().to_string()
}

pub fn b64(data: &[u8]) -> String {
    STANDARD.encode(data)
}

pub async fn picture(p: &Parley, id: &str, query: &str) -> (u16, Value) {
    get(p, &format!("/profile-picture?clientId={id}{query}")).await
}

pub async fn fetch(url: &str) -> Vec<u8> {
    let res = client().get(url).send().await.expect("stored copy");
    assert_eq!(res.status().as_u16(), 200, "{url}");
    res.bytes().await.unwrap().to_vec()
}

#[tokio::test]
async fn user_info_and_number_checks_answer_and_teach_the_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_sends(dir.path(), false).await;
    let (status, linked_as) = {
        started(&p, "shop").await;
        post(
            &p,
            "/sandbox/link",
            json!({"phone": OWN_PHONE, "clientId": "shop"}),
        )
        .await
    };
    assert_eq!(status, 200, "{linked_as}");
    eventually(15, "connected", || async {
        let (_, body) = post(&p, "/check-state", json!({"clientId": "shop"})).await;
        (body["status"] == true).then_some(())
    })
    .await;
    let ann = register(
        &p,
        ANN,
        json!({"name": "Ann", "username": "ann.shop", "about": "Out for lunch", "avatar": b64(&avatar("ann"))}),
    )
    .await;
    register(&p, OFFLINE, json!({"onNetwork": false})).await;

    // By +phone, LID user-part and LID JID: the same user.
    for jid in [format!("+{ANN}"), ann.clone(), format!("{ann}@lid")] {
        let (status, body) = post(&p, "/user-info", json!({"clientId": "shop", "jid": jid})).await;
        assert_eq!(status, 200, "{jid}: {body}");
        assert_eq!(body["jid"], format!("{ann}@lid"));
        assert_eq!(body["username"], "ann.shop");
        assert_eq!(body["status"], "Out for lunch");
        assert_eq!(body["devices"], 1);
        assert_eq!(body["verifiedName"], "");
        assert!(
            body["pictureId"].as_str().is_some_and(|id| id.len() == 10),
            "{body}"
        );
    }
    for jid in [
        format!("+{NOBODY}"),
        format!("+{OFFLINE}"),
        "123456789012399".into(),
    ] {
        let (status, body) = post(&p, "/user-info", json!({"clientId": "shop", "jid": jid})).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (404, Some("no info for that user")),
            "{jid}"
        );
    }

    // The session's identity, and the canonical phone -> `to` conversion.
    let (status, me) = post(&p, "/check-owner-lid", json!({"clientId": "shop"})).await;
    assert_eq!(status, 200, "{me}");
    assert_eq!(
        me,
        json!({"myLid": linked_as["lid"], "myJid": linked_as["jid"], "number": "",
               "isOnWhatsApp": false, "numberJid": "", "numberLid": "", "username": ""})
    );
    let (status, body) = post(
        &p,
        "/check-owner-lid",
        json!({"clientId": "shop", "number": format!("+49 176 0000 0302")}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["number"].as_str(), body["isOnWhatsApp"].as_bool()),
        (Some(BOB), Some(false))
    );
    let bob = register(&p, BOB, json!({"username": "bobby"})).await;
    let (_, body) = post(
        &p,
        "/check-owner-lid",
        json!({"clientId": "shop", "number": format!("+{BOB}")}),
    )
    .await;
    assert_eq!(
        body,
        json!({"myLid": linked_as["lid"], "myJid": linked_as["jid"], "number": BOB,
               "isOnWhatsApp": true, "numberJid": format!("{BOB}@s.whatsapp.net"),
               "numberLid": bob, "username": "bobby"})
    );

    // Learned: a send to +BOB goes to its LID even once the network stops
    // resolving the number.
    register(&p, BOB, json!({"onNetwork": false})).await;
    let (status, body) = post(
        &p,
        "/send-message",
        json!({"clientId": "shop", "to": format!("+{BOB}"), "body": "hi"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(last(&p, "shop").await["to"], format!("{bob}@lid"));

    // Invalid fields.
    for (route, body) in [
        ("/user-info", json!({"clientId": "shop"})),
        ("/user-info", json!({"clientId": "shop", "jid": "abc"})),
        (
            "/user-info",
            json!({"clientId": "shop", "jid": "120363000000000001@g.us"}),
        ),
        ("/user-info", json!({"clientId": "sh-op", "jid": ann})),
        (
            "/check-owner-lid",
            json!({"clientId": "shop", "number": "12"}),
        ),
        (
            "/check-owner-lid",
            json!({"clientId": "shop", "number": "+49 abc 1234567"}),
        ),
        ("/check-owner-lid", json!({"number": BOB})),
    ] {
        let (status, answer) = post(&p, route, body.clone()).await;
        assert_eq!(status, 400, "{route} {body}: {answer}");
        assert!(answer["error"].is_string(), "{answer}");
    }
}

#[tokio::test]
async fn unknown_sessions_are_404_unconnected_409_and_the_lookup_fault_502() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_sends(dir.path(), false).await;
    started(&p, "waiting").await;
    linked(&p, "shop").await;
    let ann = register(&p, ANN, json!({"avatar": b64(&avatar("ann"))})).await;
    let calls = |id: &str| {
        [
            ("/user-info", json!({"clientId": id, "jid": ann})),
            ("/check-owner-lid", json!({"clientId": id, "number": ANN})),
        ]
    };
    for (id, expected) in [("nobody", 404), ("waiting", 409)] {
        for (route, body) in calls(id) {
            let (status, answer) = post(&p, route, body).await;
            assert_eq!(status, expected, "{id} {route}: {answer}");
        }
        let (status, answer) = picture(&p, id, &format!("&jid={ann}")).await;
        assert_eq!(status, expected, "{id} /profile-picture: {answer}");
    }
    let (_, answer) = post(&p, "/user-info", json!({"clientId": "waiting", "jid": ann})).await;
    assert_eq!(answer["error"], "session not connected");

    // Three lookups fail, the fourth works again.
    let (status, _) = post(
        &p,
        "/sandbox/faults",
        json!({"clientId": "shop", "op": "lookup", "count": 3}),
    )
    .await;
    assert_eq!(status, 200);
    for (route, body) in calls("shop") {
        let (status, answer) = post(&p, route, body).await;
        assert_eq!(status, 502, "{route}: {answer}");
    }
    let (status, answer) = picture(&p, "shop", &format!("&jid={ann}")).await;
    assert_eq!(status, 502, "{answer}");
    for (route, body) in calls("shop") {
        let (status, answer) = post(&p, route, body).await;
        assert_eq!(status, 200, "{route}: {answer}");
    }

    // A session secret reaches its own session only.
    let secret = "shop-secret-0123456789";
    let (status, _) = post(
        &p,
        "/set-api-secret",
        json!({"clientId": "shop", "secret": secret}),
    )
    .await;
    assert_eq!(status, 200);
    for (id, expected) in [("shop", 200), ("waiting", 401)] {
        let res = client()
            .post(p.url("/user-info"))
            .bearer_auth(secret)
            .json(&json!({"clientId": id, "jid": ann}))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), expected, "{id}");
    }
}

#[tokio::test]
async fn profile_pictures_are_cached_and_mirrored_once_per_version() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_sends(dir.path(), false).await;
    linked(&p, "shop").await;
    let first = avatar("first");
    let ann = register(&p, ANN, json!({"avatar": b64(&first)})).await;
    let ann_jid = format!("{ann}@lid");

    let (status, one) = picture(&p, "shop", &format!("&jid=%2B{ANN}")).await;
    assert_eq!(status, 200, "{one}");
    assert_eq!(one["jid"], ann_jid);
    assert_eq!(one["type"], "preview");
    assert_eq!(one["mirrored"], true);
    assert!(one.get("reason").is_none(), "{one}");
    assert!(
        one["url"]
            .as_str()
            .is_some_and(|u| u.starts_with(&p.url("/sandbox/cdn/pictures/"))),
        "a signed link on the gateway's picture CDN: {one}"
    );
    assert_eq!(one["id"].as_str().map(str::len), Some(10));
    let stored = one["storedUrl"].as_str().unwrap().to_string();
    assert_eq!(fetch(&stored).await, first);

    // The avatar changes; within 24 h the cached answer stands and the network
    // is not asked: an armed lookup fault is not used up.
    let second = avatar("second");
    register(&p, ANN, json!({"avatar": b64(&second)})).await;
    let (status, _) = post(
        &p,
        "/sandbox/faults",
        json!({"clientId": "shop", "op": "lookup"}),
    )
    .await;
    assert_eq!(status, 200);
    let (status, cached) = picture(&p, "shop", &format!("&jid={ann}")).await;
    assert_eq!(status, 200, "{cached}");
    assert_eq!(
        (&cached["id"], &cached["storedUrl"], &cached["mirrored"]),
        (&one["id"], &one["storedUrl"], &json!(false))
    );
    // `refresh` asks the network (using up the fault), then sees the new picture.
    let (status, _) = picture(&p, "shop", &format!("&jid={ann}&refresh=true")).await;
    assert_eq!(status, 502);
    let (status, two) = picture(&p, "shop", &format!("&jid={ann}&refresh=true")).await;
    assert_eq!(status, 200, "{two}");
    assert_ne!(two["id"], one["id"]);
    assert_eq!(two["mirrored"], true);
    let stored_two = two["storedUrl"].as_str().unwrap().to_string();
    assert_ne!(stored_two, stored);
    assert_eq!(fetch(&stored_two).await, second);
    // The first copy stays: links are permanent.
    assert_eq!(fetch(&stored).await, first);
    // Unchanged: not mirrored again.
    let (_, again) = picture(&p, "shop", &format!("&jid={ann}&refresh=1")).await;
    assert_eq!(
        (&again["id"], &again["storedUrl"], &again["mirrored"]),
        (&two["id"], &two["storedUrl"], &json!(false))
    );
    // Full size is its own entry.
    let (status, full) = picture(&p, "shop", &format!("&jid={ann}&preview=false")).await;
    assert_eq!(status, 200, "{full}");
    assert_eq!(
        (full["type"].as_str(), full["id"].as_str()),
        (Some("image"), two["id"].as_str())
    );
    assert_eq!(fetch(full["storedUrl"].as_str().unwrap()).await, second);

    // No picture, a hidden one, an unknown number, a group: 200, empty url, a reason.
    let bob = register(&p, BOB, json!({"avatar": "hidden"})).await;
    let none = register(&p, OFFLINE, json!({"avatar": "none"})).await;
    for (jid, reason) in [
        (bob.clone(), "hidden by privacy settings"),
        (none, "no profile picture"),
        (format!("%2B{NOBODY}"), "no profile picture"),
        ("120363000000000001%40g.us".into(), "no profile picture"),
    ] {
        let (status, body) = picture(&p, "shop", &format!("&jid={jid}")).await;
        assert_eq!(status, 200, "{jid}: {body}");
        assert_eq!(
            (
                body["url"].as_str(),
                body["storedUrl"].as_str(),
                body["reason"].as_str()
            ),
            (Some(""), Some(""), Some(reason)),
            "{jid}"
        );
    }
    // A picture that becomes visible is seen after a refresh.
    register(&p, BOB, json!({"avatar": b64(&first)})).await;
    let (_, visible) = picture(&p, "shop", &format!("&jid={bob}&refresh=true")).await;
    assert_eq!(fetch(visible["storedUrl"].as_str().unwrap()).await, first);

    for query in [
        "".to_string(),
        "&jid=abc".into(),
        format!("&jid={ann}&preview=maybe"),
        format!("&jid={ann}&refresh=yes"),
    ] {
        let (status, body) = picture(&p, "shop", &query).await;
        assert_eq!(status, 400, "{query}: {body}");
    }
}

/// A contact that shows its picture to its contacts only: hidden from the
/// session until the contact writes to it (its client then issues the
/// session's account a privacy token, which the network asks for), then
/// found and mirrored like any other.
#[tokio::test]
async fn a_picture_for_contacts_only_shows_once_the_contact_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_sends(dir.path(), false).await;
    linked(&p, "shop").await;
    let face = avatar("for contacts");
    let fields = json!({"avatar": b64(&face), "avatarPrivacy": "contacts"});
    register(&p, ANN, fields).await;
    let query = format!("&jid=%2B{ANN}&refresh=true");
    let (status, hidden) = picture(&p, "shop", &query).await;
    assert_eq!(status, 200, "{hidden}");
    assert_eq!(
        (hidden["url"].as_str(), hidden["storedUrl"].as_str()),
        (Some(""), Some("")),
        "not shown before Ann wrote: {hidden}"
    );
    let (status, body) = post(
        &p,
        "/sandbox/messages",
        json!({"clientId": "shop", "from": ANN, "type": "text", "body": "Hi, it's Ann"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    // The token reaches the session's device a moment after the message.
    let shown = eventually(10, "Ann's picture shown", || async {
        let (status, body) = picture(&p, "shop", &query).await;
        (status == 200 && body["url"].as_str().is_some_and(|u| !u.is_empty())).then_some(body)
    })
    .await;
    assert_eq!(shown["mirrored"], true, "{shown}");
    assert_eq!(fetch(shown["storedUrl"].as_str().unwrap()).await, face);

    let (status, body) = post(
        &p,
        "/sandbox/contacts",
        json!({"phone": ANN, "avatarPrivacy": "friends"}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
}
