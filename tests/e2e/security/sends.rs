//! Large files sent by URL and by upload travel through disk, not memory (the
//! figures come from the harness, see docs/benchmarks.md): the network gets
//! every byte (size and digest in the sandbox's outbox), and the hosted
//! inbox's copy, written as a stream (an S3 multipart upload on the cluster),
//! is the same file behind its permanent link.
use parley_tests::receiver::Receiver;
use serde_json::{Value, json};

use crate::events::history::{messages, org, rooms, serve_hosted};
use crate::events::support::*;
use crate::sends::support::{Answer, Part, file_server, outbox, sha256, upload};
use crate::support::*;

/// More than two S3 multipart parts (8 MiB each).
const SIZE: usize = 20 << 20;

fn pattern(seed: u32) -> Vec<u8> {
    (0..SIZE as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 11) as u8)
        .collect()
}

async fn check(p: &Parley, id: &str) {
    contact(p).await;
    let to = format!("+{CONTACT}");
    let by_url = pattern(1);
    let server = file_server(Answer::file("application/pdf", by_url.clone())).await;
    let (status, sent_url) = post(
        p,
        "/send-media-message",
        json!({"clientId": id, "to": to, "downloadUrl": format!("{}/report.pdf", server.base)}),
    )
    .await;
    assert_eq!(status, 200, "{sent_url}");
    assert_eq!(sent_url["bytes"], SIZE, "{sent_url}");

    let uploaded = pattern(2);
    let (status, sent_upload) = upload(
        p,
        &format!("?clientId={id}"),
        &[
            Part::File {
                name: "file",
                file_name: "scan.pdf",
                content_type: "application/pdf",
                data: &uploaded,
            },
            Part::Text("to", &to),
        ],
    )
    .await;
    assert_eq!(status, 200, "{sent_upload}");

    let sent = outbox(p, id, "").await;
    let stored = eventually(60, "both sends stored with their links", || async {
        let room = rooms(p, id).await.first()?["chatRoomId"]
            .as_str()?
            .to_string();
        let rows = messages(p, id, &room).await;
        let link = |sent: &Value| {
            rows.iter()
                .find(|r| r["messageId"] == sent["messageId"])
                .and_then(|r| r["downloadUrl"].as_str())
                .filter(|l| !l.is_empty())
                .map(str::to_string)
        };
        Some([link(&sent_url)?, link(&sent_upload)?])
    })
    .await;
    for ((reply, data), link) in [(&sent_url, &by_url), (&sent_upload, &uploaded)]
        .into_iter()
        .zip(stored)
    {
        let entry = sent
            .iter()
            .find(|e| e["messageId"] == reply["messageId"])
            .unwrap_or_else(|| panic!("{reply} not in the outbox: {sent:?}"));
        assert_eq!(entry["payload"]["bytes"], SIZE, "{entry}");
        assert_eq!(
            entry["payload"]["sha256"],
            sha256(data),
            "every byte went out"
        );
        let res = client().get(&link).send().await.unwrap();
        assert_eq!(res.status(), 200, "{link}");
        let copy = res.bytes().await.unwrap();
        assert_eq!(copy.len(), SIZE, "{link}");
        assert!(
            sha256(&copy) == sha256(data),
            "the stored copy is the sent file"
        );
    }
}

#[tokio::test]
async fn serve_streams_large_sends_to_the_network_and_the_inbox() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start().await;
    let p = serve_hosted(dir.path(), &rx.url, &[]).await;
    hooked(&p, "big1", &rx.url, json!({})).await;
    org(&p, "big1").await;
    check(&p, "big1").await;
}

#[tokio::test]
async fn the_cluster_streams_large_sends_to_the_network_and_the_inbox() {
    let dir = tempfile::tempdir().unwrap();
    let env = services::ClusterEnv::new().await;
    let rx = Receiver::start().await;
    let mut more = EVENT_VARS.to_vec();
    more.push(("PARLEY_HOSTED_RECEIVER_URL", &rx.url));
    let (api, _worker) = api_and_worker(&env, dir.path(), &more).await;
    hooked(&api, "big2", &rx.url, json!({})).await;
    org(&api, "big2").await;
    check(&api, "big2").await;
}
