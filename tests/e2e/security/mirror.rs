//! Inbound files are mirrored as they download, up to a cap: a file under the
//! cap lands whole behind its permanent link (on S3 as a multipart upload), a
//! file over it is not downloaded, and both events are delivered with their
//! media metadata; history keeps the second without a link and says why.
use parley_network_sandbox::store::generated::Generated;
use parley_tests::receiver::Receiver;
use serde_json::{Value, json};

use crate::events::history::{messages, org, rooms, serve_hosted};
use crate::events::support::*;
use crate::support::*;

/// The cap the tests set: 12 MiB.
const CAP: u64 = 12 << 20;
const CAP_VAR: (&str, &str) = ("PARLEY_MEDIA_MIRROR_MAX_BYTES", "12582912");
/// Under the cap, and more than one S3 multipart part (8 MiB).
const UNDER: u64 = 10 << 20;
const SEED: u64 = 0x5eed;

/// Injects a generated document of `size` bytes and returns its event.
async fn generated(p: &Parley, rx: &mut Receiver, id: &str, size: u64) -> Value {
    let sent = inject(
        p,
        id,
        json!({"type": "document", "mimeType": "application/pdf", "fileName": "big.pdf",
               "generate": {"size": size, "seed": SEED}}),
    )
    .await;
    let (e, _) = until_message(rx, &sent).await;
    e.json()
}

async fn check(p: &Parley, rx: &mut Receiver, id: &str) {
    let under = generated(p, rx, id, UNDER).await;
    assert_eq!(under["media"]["fileSize"], UNDER, "{under}");
    let link = under["media"]["downloadUrl"].as_str().unwrap_or_default();
    assert!(link.starts_with("http"), "a stored link: {under}");
    let res = client().get(link).send().await.unwrap();
    assert_eq!(res.status(), 200, "{link}");
    let body = res.bytes().await.unwrap();
    assert!(
        body.as_ref() == Generated::all(SEED, UNDER).as_slice(),
        "the stored file is the generated one ({} bytes came back)",
        body.len()
    );

    let over = generated(p, rx, id, CAP + 1).await;
    assert_eq!(over["media"]["fileSize"], CAP + 1, "metadata kept: {over}");
    assert_eq!(over["media"]["mimeType"], "application/pdf", "{over}");
    assert!(
        over["media"]["download"]["directPath"]
            .as_str()
            .is_some_and(|p| !p.is_empty()),
        "the event still says where the file is: {over}"
    );
    assert_eq!(over["media"]["downloadUrl"], "", "not mirrored: {over}");

    let room = rooms(p, id).await[0]["chatRoomId"]
        .as_str()
        .unwrap()
        .to_string();
    let stored = messages(p, id, &room).await;
    let row = |e: &Value| {
        stored
            .iter()
            .find(|m| m["messageId"] == e["messageId"])
            .cloned()
            .unwrap_or_else(|| panic!("{} not in history: {stored:?}", e["messageId"]))
    };
    assert_eq!(row(&under)["downloadUrl"], link);
    let over_row = row(&over);
    assert!(
        over_row["downloadUrl"]
            .as_str()
            .unwrap_or_default()
            .is_empty(),
        "no link: {over_row}"
    );
    let why = over_row["extras"]["media"]["notStored"]
        .as_str()
        .unwrap_or_default();
    assert!(
        why.contains("larger than"),
        "the reason is stored: {over_row}"
    );
}

#[tokio::test]
async fn serve_mirrors_files_up_to_the_cap_and_says_why_not_beyond() {
    let dir = tempfile::tempdir().unwrap();
    let mut rx = Receiver::start().await;
    let p = serve_hosted(dir.path(), &rx.url, &[CAP_VAR]).await;
    hooked(&p, "cap1", &rx.url, json!({})).await;
    org(&p, "cap1").await;
    contact(&p).await;
    check(&p, &mut rx, "cap1").await;
}

#[tokio::test]
async fn the_cluster_mirrors_files_up_to_the_cap_and_says_why_not_beyond() {
    let dir = tempfile::tempdir().unwrap();
    let env = services::ClusterEnv::new().await;
    let mut rx = Receiver::start().await;
    let mut more = EVENT_VARS.to_vec();
    more.push(("PARLEY_HOSTED_RECEIVER_URL", &rx.url));
    more.push(CAP_VAR);
    let (api, _worker) = api_and_worker(&env, dir.path(), &more).await;
    hooked(&api, "cap2", &rx.url, json!({})).await;
    org(&api, "cap2").await;
    contact(&api).await;
    check(&api, &mut rx, "cap2").await;
}
