//! Poll votes travel as option hashes: resolved from polls the worker has seen,
//! through the customer's `pollLookupUrl`, or delivered unresolved with hashes.
use parley_tests::receiver::{Behaviour, Receiver};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::support::*;
use crate::support::*;

fn hash(option: &str) -> String {
    hex::encode(Sha256::digest(option.as_bytes()))
}

#[tokio::test]
async fn votes_resolve_from_seen_polls_from_the_lookup_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_events(dir.path()).await;
    let mut rx = Receiver::start().await;
    let mut lookup = Receiver::start().await;
    lookup.set_default(Behaviour::Json(
        200,
        r#"{"options": ["Red", "Blue", "Green"]}"#.into(),
    ));
    let my_lid = hooked(&p, "poll", &rx.url, json!({"pollLookupUrl": lookup.url})).await;
    let lid = contact(&p).await;

    // A poll this worker saw: names resolve without asking anyone.
    let poll = inject(
        &p,
        "poll",
        json!({"type": "poll_creation", "pollName": "Lunch?", "pollOptions": ["Pizza", "Soup"]}),
    )
    .await;
    rx.next(WAIT).await;
    inject(
        &p,
        "poll",
        json!({"type": "vote_update", "pollMessageId": poll, "selectedOptions": ["Soup"]}),
    )
    .await;
    let e = rx.next(WAIT).await.json();
    assert_eq!(e["type"], "vote_update");
    assert_eq!(
        e["pollVote"],
        json!({"pollMessageId": poll, "resolved": true, "selectedOptions": ["Soup"],
               "selectedHashes": [hash("Soup")]})
    );

    // A poll it never saw: the customer's lookup names the options.
    inject(
        &p,
        "poll",
        json!({"type": "vote_update", "pollMessageId": "3EB0FOREIGNPOLL", "selectedOptions": ["Blue", "Red"]}),
    )
    .await;
    let asked = lookup.next(WAIT).await;
    let bearer = format!("Bearer {HOOK_TOKEN}");
    assert_eq!(asked.header("authorization"), Some(bearer.as_str()));
    assert_eq!(
        asked.json(),
        json!({"clientId": "poll", "chatRoomId": format!("poll-{my_lid}-{lid}"),
               "pollMessageId": "3EB0FOREIGNPOLL"})
    );
    let e = rx.next(WAIT).await.json();
    assert_eq!(e["pollVote"]["resolved"], true);
    assert_eq!(e["pollVote"]["selectedOptions"], json!(["Blue", "Red"]));

    // The lookup fails: the vote still arrives, unresolved, with the hashes.
    lookup.set_default(Behaviour::Status(500));
    inject(
        &p,
        "poll",
        json!({"type": "vote_update", "pollMessageId": "3EB0OTHERPOLL", "selectedOptions": ["Maybe"]}),
    )
    .await;
    let e = rx.next(WAIT).await.json();
    assert_eq!(
        e["pollVote"],
        json!({"pollMessageId": "3EB0OTHERPOLL", "resolved": false, "selectedOptions": [],
               "selectedHashes": [hash("Maybe")]})
    );

    // Without a lookup URL nobody is asked.
    let (status, body) = post(
        &p,
        "/set-webhook",
        json!({"clientId": "poll", "webhookUrl": rx.url, "pollLookupUrl": ""}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    inject(
        &p,
        "poll",
        json!({"type": "vote_update", "pollMessageId": "3EB0THIRDPOLL", "selectedOptions": ["X"]}),
    )
    .await;
    let e = rx.next(WAIT).await.json();
    assert_eq!(e["pollVote"]["resolved"], false);
    while let Some(extra) = lookup
        .maybe_next(std::time::Duration::from_millis(300))
        .await
    {
        assert_ne!(
            extra.json()["pollMessageId"],
            "3EB0THIRDPOLL",
            "no lookup without a URL"
        );
    }
}
