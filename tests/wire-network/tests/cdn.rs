//! The CDN stand-in checks what the real CDN checks, shown by an HTTP client
//! that breaks each rule: an upload needs a media auth `media_conn` handed
//! out and that has not expired, its body must hash to the token it names,
//! and an upload cut off part way is kept for the client to resume.
use std::time::Duration;

use base64::Engine as _;
use base64::prelude::BASE64_URL_SAFE_NO_PAD;
use parley_wire_network::{TestDevice, WireNetwork};
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;
use whatsapp_rust::wacore_binary::builder::NodeBuilder;

const CONTACT: &str = "4915100000602";
const WAIT: Duration = Duration::from_secs(15);

fn token(body: &[u8]) -> String {
    BASE64_URL_SAFE_NO_PAD.encode(Sha256::digest(body))
}

/// A media auth, asked of the server as clients ask it (`media_conn`).
async fn media_auth(device: &TestDevice) -> String {
    let answer = device
        .ask("w:m", "set", NodeBuilder::new("media_conn").build())
        .await
        .expect("media_conn");
    let conn = answer
        .get()
        .get_optional_child("media_conn")
        .expect("media_conn");
    conn.get_attr("auth").expect("auth").as_str().to_string()
}

/// A test network with a contact on it, its CDN, and a media auth.
async fn cdn_with_auth() -> (WireNetwork, TestDevice, Cdn, String) {
    let net = WireNetwork::start().await.expect("network");
    let contact = TestDevice::start(&net, CONTACT, "Contact")
        .await
        .expect("contact");
    let cdn = Cdn::of(&net);
    let auth = media_auth(&contact).await;
    (net, contact, cdn, auth)
}

struct Cdn {
    base: String,
    http: reqwest::Client,
}

impl Cdn {
    fn of(net: &WireNetwork) -> Self {
        Self {
            base: format!("http://{}", net.cdn_host()),
            http: reqwest::Client::new(),
        }
    }

    fn upload_url(&self, token: &str, auth: &str, extra: &str) -> String {
        format!(
            "{}/mms/document/{token}?auth={auth}&token={token}{extra}",
            self.base
        )
    }

    async fn post(&self, url: String, body: Vec<u8>) -> (u16, Value) {
        let res = self.http.post(url).body(body).send().await.expect("post");
        let status = res.status().as_u16();
        let text = res.text().await.expect("body");
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    async fn get(&self, path: &str, auth: &str) -> (u16, Vec<u8>) {
        let res = self
            .http
            .get(format!("{}{path}?auth={auth}", self.base))
            .send()
            .await
            .expect("get");
        let status = res.status().as_u16();
        (status, res.bytes().await.expect("body").to_vec())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_needs_a_current_auth_and_a_body_that_hashes_to_its_token() {
    let (net, contact, cdn, auth) = cdn_with_auth().await;
    let body = rand10::random::<[u8; 32]>().repeat(40);
    let name = token(&body);

    let (status, _) = cdn
        .post(cdn.upload_url(&name, "made-up", ""), body.clone())
        .await;
    assert_eq!(status, 401, "an auth nobody handed out");
    let (status, _) = cdn
        .post(cdn.upload_url(&token(b"other"), &auth, ""), body.clone())
        .await;
    assert_eq!(status, 400, "a body that is not the token's");
    let (status, _) = cdn
        .post(
            format!("{}/mms/document/{name}?auth={auth}&token=x", cdn.base),
            body.clone(),
        )
        .await;
    assert_eq!(status, 400, "a path and a token that disagree");

    let (status, stored) = cdn
        .post(cdn.upload_url(&name, &auth, ""), body.clone())
        .await;
    assert_eq!(status, 200, "{stored}");
    let path = stored["direct_path"].as_str().expect("direct_path");
    assert_eq!(cdn.get(path, &auth).await, (200, body.clone()));

    net.expire_media_auths();
    let (status, _) = cdn.post(cdn.upload_url(&name, &auth, ""), body).await;
    assert_eq!(status, 401, "an expired auth");
    assert_eq!(cdn.get(path, &auth).await.0, 401);
    let fresh = media_auth(&contact).await;
    assert_eq!(cdn.get(path, &fresh).await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_cut_off_part_way_resumes_where_it_stopped() {
    let (net, _contact, cdn, auth) = cdn_with_auth().await;
    let file: Vec<u8> = (0..6 * 1024 * 1024u32).map(|i| (i % 253) as u8).collect();
    let name = token(&file);
    let resume_check = cdn.upload_url(&name, &auth, "&resume=1");
    assert_eq!(cdn.post(resume_check.clone(), vec![]).await.0, 404);

    // A client sends 2 MiB of the 6 and its connection breaks.
    let cut = 2 * 1024 * 1024;
    let mut tcp = tokio::net::TcpStream::connect(net.cdn_host())
        .await
        .expect("connect");
    let head = format!(
        "POST /mms/document/{name}?auth={auth}&token={name} HTTP/1.1\r\nhost: cdn\r\ncontent-length: {}\r\n\r\n",
        file.len()
    );
    tcp.write_all(head.as_bytes()).await.expect("head");
    tcp.write_all(&file[..cut]).await.expect("part");
    drop(tcp);

    // The CDN says where to go on from, once it has seen the break.
    let deadline = tokio::time::Instant::now() + WAIT;
    let offset = loop {
        let (status, answer) = cdn.post(resume_check.clone(), vec![]).await;
        if status == 200 {
            break answer["resume"].as_str().expect("resume").to_string();
        }
        assert!(tokio::time::Instant::now() < deadline, "no partial upload");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(offset, cut.to_string());
    let (status, _) = cdn
        .post(
            cdn.upload_url(&name, &auth, "&file_offset=1000"),
            file[1000..5000].to_vec(),
        )
        .await;
    assert_eq!(status, 400, "a resume from another offset");
    let (status, stored) = cdn
        .post(
            cdn.upload_url(&name, &auth, &format!("&file_offset={cut}")),
            file[cut..].to_vec(),
        )
        .await;
    assert_eq!(status, 200, "{stored}");
    let path = stored["direct_path"].as_str().expect("direct_path");
    let (status, got) = cdn.get(path, &auth).await;
    assert!(status == 200 && got == file, "the file is whole");

    let (status, done) = cdn.post(resume_check, vec![]).await;
    assert_eq!(
        (status, &done["resume"], &done["direct_path"]),
        (200, &Value::from("complete"), &Value::from(path)),
        "{done}"
    );
}
