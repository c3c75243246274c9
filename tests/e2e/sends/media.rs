//! Media sends end to end: by URL (types, names, voice notes, stickers, 404 and
//! oversize as 502), the egress guard refusing loopback by address and by name,
//! and multipart uploads (digest in the outbox, the temporary object removed,
//! bad forms 400, bodies over the ingress cap 413).
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::support::*;
use crate::support::*;

const TO: &str = "123456789012345";

async fn send_url(p: &Parley, body: Value) -> (u16, Value) {
    let mut body = body;
    body["clientId"] = json!("shop");
    body["to"] = json!(TO);
    post(p, "/send-media-message", body).await
}

/// Files left in the embedded media store's temporary folder.
fn temp_files(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir.join("parley-data/media/tmp"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn media_by_url_is_typed_named_and_digested() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_sends(dir.path(), true).await;
    linked(&p, "shop").await;
    let png: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
    let server = file_server(Answer::file("image/png", png.clone())).await;
    let (status, body) = send_url(
        &p,
        json!({"downloadUrl": format!("{}/photos/photo.png", server.base), "caption": "Look",
               "quotedMessageId": "3EB0Q", "metaData": {"userId": 7}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (
            body["status"].as_str(),
            body["mediaType"].as_str(),
            body["bytes"].as_u64()
        ),
        (Some("sent"), Some("image"), Some(5000))
    );
    assert!(body.get("fallback").is_none());
    let entry = last(&p, "shop").await;
    assert_eq!(entry["messageId"], body["messageId"]);
    assert_eq!(entry["kind"], "image");
    assert_eq!(
        entry["payload"],
        photo_as_carried(
            json!({"mimeType": "image/png", "bytes": 5000, "sha256": sha256(&png), "fileName": "photo.png",
               "caption": "Look", "quotedMessageId": "3EB0Q"})
        )
    );
    assert_eq!(server.hits(), 1);

    // A generic Content-Type: the file name decides; fileName overrides the URL's.
    let server = file_server(Answer::file(
        "application/octet-stream",
        b"%PDF-1.7".to_vec(),
    ))
    .await;
    let (status, body) = send_url(
        &p,
        json!({"downloadUrl": format!("{}/files/report.pdf", server.base), "fileName": "Q3.pdf"}),
    )
    .await;
    assert_eq!(
        (status, body["mediaType"].as_str()),
        (200, Some("document")),
        "{body}"
    );
    let payload = last(&p, "shop").await["payload"].clone();
    assert_eq!(
        (payload["mimeType"].as_str(), payload["fileName"].as_str()),
        (Some("application/pdf"), Some("Q3.pdf"))
    );

    // mimeType overrides; a voice note drops its caption.
    let server = file_server(Answer::file("application/octet-stream", b"OggS".to_vec())).await;
    let (status, body) = send_url(
        &p,
        json!({"downloadUrl": format!("{}/blob", server.base), "mimeType": "audio/ogg",
               "sendAudioAsVoice": true, "caption": "ignored"}),
    )
    .await;
    assert_eq!(
        (status, body["mediaType"].as_str()),
        (200, Some("audio")),
        "{body}"
    );
    let entry = last(&p, "shop").await;
    assert_eq!(entry["kind"], "audio");
    assert_eq!(entry["payload"]["ptt"], true);
    assert!(entry["payload"].get("caption").is_none(), "{entry}");

    // A WebP as a sticker.
    let server = file_server(Answer::file("image/webp", b"RIFF0000WEBP".to_vec())).await;
    let (status, body) = send_url(
        &p,
        json!({"downloadUrl": format!("{}/s.webp", server.base), "asSticker": true}),
    )
    .await;
    assert_eq!(
        (status, body["mediaType"].as_str()),
        (200, Some("sticker")),
        "{body}"
    );
    assert_eq!(last(&p, "shop").await["kind"], "sticker");
    assert_eq!(outbox(&p, "shop", "").await.len(), 4);
}

#[tokio::test]
async fn unfetchable_urls_are_502_and_nothing_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_sends(dir.path(), true).await;
    linked(&p, "shop").await;
    let server = file_server(Answer::status(404)).await;
    let (status, body) = send_url(
        &p,
        json!({"downloadUrl": format!("{}/gone.png", server.base)}),
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (502, Some("downloadUrl answered HTTP 404"))
    );
    // Declared over 100 MB: refused before reading the body.
    let server = file_server(Answer::Endless {
        content_length: Some(200 * 1024 * 1024),
    })
    .await;
    let started = std::time::Instant::now();
    let (status, body) = send_url(
        &p,
        json!({"downloadUrl": format!("{}/huge.mp4", server.base)}),
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (502, Some("downloadUrl is larger than 100 MB"))
    );
    assert!(started.elapsed().as_secs() < 5);
    // Nothing listens there.
    let closed = parley_tests::free_port();
    let (status, body) = send_url(
        &p,
        json!({"downloadUrl": format!("http://127.0.0.1:{closed}/a.png")}),
    )
    .await;
    assert_eq!(status, 502, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("downloadUrl could not be fetched"),
        "{body}"
    );
    assert!(outbox(&p, "shop", "").await.is_empty());
}

#[tokio::test]
async fn the_egress_guard_refuses_loopback_by_address_and_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_sends(dir.path(), false).await;
    linked(&p, "shop").await;
    let server = file_server(Answer::file("image/png", b"\x89PNG".to_vec())).await;
    let port = server.port;
    for url in [
        format!("{}/x", server.base),
        format!("http://localhost:{port}/x"),
        format!("http://[::1]:{port}/x"),
    ] {
        let (status, body) = send_url(&p, json!({"downloadUrl": url})).await;
        assert_eq!(status, 502, "{url}: {body}");
        let error = body["error"].as_str().unwrap();
        assert!(
            error.starts_with("downloadUrl was refused by the egress guard")
                && error.contains("not allowed"),
            "{url}: {error}"
        );
    }
    assert_eq!(server.hits(), 0, "no request reached the server");
    assert!(outbox(&p, "shop", "").await.is_empty());
}

#[tokio::test]
async fn multipart_uploads_round_trip_and_leave_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_sends(dir.path(), false).await;
    linked(&p, "shop").await;
    let data: Vec<u8> = (0..300_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let (status, body) = upload(
        &p,
        "?clientId=shop",
        &[
            Part::File {
                name: "file",
                file_name: "pic.jpg",
                content_type: "image/jpeg",
                data: &data,
            },
            Part::Text("to", TO),
            Part::Text("caption", "From the shop"),
            Part::Text("quotedMessageId", "3EB0Q"),
            Part::Text("mentions", "4915112345678, 123456789012345"),
            Part::Text("metaData", "{\"fromAI\": true}"),
        ],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body.as_object().unwrap().len(), 3, "{body}");
    assert_eq!(
        (body["status"].as_str(), body["mediaType"].as_str()),
        (Some("sent"), Some("image"))
    );
    let entry = last(&p, "shop").await;
    assert_eq!(entry["messageId"], body["messageId"]);
    assert_eq!(entry["to"], format!("{TO}@lid"));
    assert_eq!(
        entry["payload"],
        photo_as_carried(
            json!({"mimeType": "image/jpeg", "bytes": 300_000, "sha256": sha256(&data), "fileName": "pic.jpg",
               "caption": "From the shop", "quotedMessageId": "3EB0Q",
               "mentions": ["4915112345678", "123456789012345"]})
        )
    );

    // Audio as a voice note; anything else is a document.
    let (status, body) = upload(
        &p,
        "?clientId=shop",
        &[
            Part::Text("to", TO),
            Part::Text("sendAudioAsVoice", "true"),
            Part::File {
                name: "file",
                file_name: "v.ogg",
                content_type: "audio/ogg",
                data: b"OggS voice",
            },
        ],
    )
    .await;
    assert_eq!(
        (status, body["mediaType"].as_str()),
        (200, Some("audio")),
        "{body}"
    );
    assert_eq!(last(&p, "shop").await["payload"]["ptt"], true);
    let (status, body) = upload(
        &p,
        "?clientId=shop",
        &[
            Part::Text("to", TO),
            Part::File {
                name: "file",
                file_name: "data.bin",
                content_type: "application/x-custom",
                data: b"\x00\x01",
            },
        ],
    )
    .await;
    assert_eq!(
        (status, body["mediaType"].as_str()),
        (200, Some("document")),
        "{body}"
    );
    assert!(
        temp_files(dir.path()).is_empty(),
        "{:?}",
        temp_files(dir.path())
    );

    // Bad forms are 400 and leave nothing behind.
    let png = || Part::File {
        name: "file",
        file_name: "a.png",
        content_type: "image/png",
        data: b"\x89PNG",
    };
    let cases: Vec<(&str, Vec<Part<'_>>, &str)> = vec![
        (
            "",
            vec![Part::Text("to", TO), png()],
            "clientId is required in the query string",
        ),
        (
            "?clientId=shop",
            vec![Part::Text("to", TO)],
            "file is required",
        ),
        ("?clientId=shop", vec![png()], "to is required"),
        (
            "?clientId=shop",
            vec![Part::Text("to", "bob"), png()],
            "to must be",
        ),
        (
            "?clientId=shop",
            vec![
                Part::Text("to", TO),
                Part::Text("sendAudioAsVoice", "yes"),
                png(),
            ],
            "sendAudioAsVoice",
        ),
        (
            "?clientId=shop",
            vec![
                Part::Text("to", TO),
                Part::Text("metaData", "{broken"),
                png(),
            ],
            "metaData",
        ),
        (
            "?clientId=shop",
            vec![Part::Text("to", TO), Part::Text("metaData", "[1]"), png()],
            "metaData",
        ),
        (
            "?clientId=shop",
            vec![Part::Text("to", TO), Part::Text("mentions", "bob"), png()],
            "mentions",
        ),
        (
            "?clientId=shop",
            vec![Part::Text("to", TO), Part::Text("clientId", "other"), png()],
            "differs",
        ),
    ];
    for (query, parts, message) in cases {
        let (status, body) = upload(&p, query, &parts).await;
        assert_eq!(status, 400, "{message}: {body}");
        assert!(
            body["error"].as_str().unwrap().contains(message),
            "{message}: {body}"
        );
    }
    let empty = Part::File {
        name: "file",
        file_name: "e.png",
        content_type: "image/png",
        data: b"",
    };
    let (status, body) = upload(&p, "?clientId=shop", &[Part::Text("to", TO), empty]).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("file is empty"))
    );
    assert!(
        temp_files(dir.path()).is_empty(),
        "{:?}",
        temp_files(dir.path())
    );
    assert_eq!(outbox(&p, "shop", "").await.len(), 3);

    // A session secret works for its own session, in both modes.
    let secret = "shop-secret-0123456789";
    let (status, _) = post(
        &p,
        "/set-api-secret",
        json!({"clientId": "shop", "secret": secret}),
    )
    .await;
    assert_eq!(status, 200);
    let parts = [Part::Text("to", TO), png()];
    assert_eq!(upload_as(&p, secret, "?clientId=shop", &parts).await.0, 200);
    assert_eq!(
        upload_as(&p, secret, "?clientId=other", &parts).await.0,
        401
    );
    let res = client()
        .post(p.url("/send-media-message"))
        .bearer_auth(secret)
        .json(&json!({"clientId": "shop", "to": TO, "downloadUrl": "http://127.0.0.1:9/x.png"}))
        .send()
        .await
        .unwrap();
    let (status, body) = json(res).await;
    assert_eq!(
        status, 502,
        "authorized, then refused by the egress guard: {body}"
    );

    // Neither JSON nor multipart.
    let res = client()
        .post(p.url("/send-media-message?clientId=shop"))
        .bearer_auth(TOKEN)
        .header("content-type", "text/plain")
        .body("hello")
        .send()
        .await
        .unwrap();
    assert_eq!(json(res).await.0, 415);
}

#[tokio::test]
async fn uploads_over_the_ingress_cap_are_413() {
    let dir = tempfile::tempdir().unwrap();
    let p = serve_sends(dir.path(), false).await;
    linked(&p, "shop").await;
    // Declared over 128 MiB: answered before any of the body is read.
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", p.port))
        .await
        .unwrap();
    let head = format!(
        "POST /send-media-message?clientId=shop HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {TOKEN}\r\n\
         content-type: multipart/form-data; boundary=b\r\ncontent-length: {}\r\n\r\n",
        200 * 1024 * 1024
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 1024];
    let n = tokio::time::timeout(std::time::Duration::from_secs(10), stream.read(&mut answer))
        .await
        .expect("an answer before the body")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("larger than 128 MiB"), "{answer}");

    // No declared length (chunked): cut off on the running count.
    let head = "--b\r\ncontent-disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n\
                content-type: application/octet-stream\r\n\r\n";
    let chunks = std::iter::once(head.as_bytes().to_vec())
        .chain((0..130).map(|_| vec![0u8; 1024 * 1024]))
        .map(Ok::<_, std::io::Error>);
    let res = client()
        .post(p.url("/send-media-message?clientId=shop"))
        .bearer_auth(TOKEN)
        .header("content-type", "multipart/form-data; boundary=b")
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await;
    // The server may answer 413 and close before the client has sent everything.
    if let Ok(res) = res {
        let (status, body) = json(res).await;
        assert_eq!(status, 413, "{body}");
    }
    assert!(
        temp_files(dir.path()).is_empty(),
        "{:?}",
        temp_files(dir.path())
    );
    let (_, body) = post(&p, "/check-state", json!({"clientId": "shop"})).await;
    assert_eq!(body["status"], true, "the server is fine");
}
