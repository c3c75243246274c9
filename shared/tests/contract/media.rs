//! Contract of the media store: one suite, run on the filesystem and S3 adapters.
use bytes::Bytes;
use futures::{StreamExt, stream};
use parley_contract::spool::ByteStream;
use parley_shared::media::fs::FsMediaStore;
use parley_shared::media::s3::{S3MediaStore, S3Settings};
use parley_shared::media::{MediaError, MediaStore, new_key};

use crate::support;

const FS_BASE_URL: &str = "http://gateway.test:8080";

/// A fresh, empty store of one adapter.
struct Fixture {
    store: Box<dyn MediaStore>,
    /// Filesystem: the root directory, removed on drop.
    _dir: Option<tempfile::TempDir>,
}

fn s3_settings(public_url: Option<String>) -> S3Settings {
    S3Settings {
        endpoint: support::s3_endpoint(),
        bucket: support::unique("parley-"),
        region: "eu-west-1".into(),
        access_key: "test".into(),
        secret_key: "test".into(),
        public_url,
    }
}

impl Fixture {
    async fn fs() -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = FsMediaStore::new(dir.path().join("media"), &format!("{FS_BASE_URL}/"));
        Fixture {
            store: Box::new(store),
            _dir: Some(dir),
        }
    }

    async fn s3() -> Fixture {
        let settings = s3_settings(None);
        let endpoint = settings.endpoint.clone();
        let store = S3MediaStore::new(settings)
            .await
            .unwrap_or_else(|e| panic!("an S3 server is required at {endpoint}: {e}"));
        Fixture {
            store: Box::new(store),
            _dir: None,
        }
    }
}

/// Expands every case into one `#[tokio::test]` per adapter: `media::<adapter>::<case>`.
macro_rules! contract {
    (adapters: [$($adapter:ident),+], cases: $cases:tt) => {
        $( contract!(@adapter $adapter $cases); )+
    };
    (@adapter $adapter:ident [$($case:ident),+ $(,)?]) => {
        mod $adapter {
            $(
                #[tokio::test]
                async fn $case() {
                    let fixture = super::Fixture::$adapter().await;
                    super::$case(fixture.store.as_ref()).await;
                }
            )+
        }
    };
}

contract! {
    adapters: [fs, s3],
    cases: [
        put_get_round_trip,
        overwrite,
        delete,
        missing_is_none,
        invalid_keys_are_refused,
        public_link,
        healthy,
        put_stream_round_trip,
        put_stream_of_several_parts,
        failed_stream_stores_nothing,
        get_stream_reads_back_in_chunks,
    ]
}

async fn get(store: &dyn MediaStore, key: &str) -> Option<(String, Bytes)> {
    store.get(key).await.expect("get")
}

async fn put_get_round_trip(store: &dyn MediaStore) {
    let key = new_key("images", Some("png"));
    let data = Bytes::from_static(b"\x89PNG\r\n\x1a\n\0binary\xff");
    let stored = store
        .put(&key, "image/png", data.clone())
        .await
        .expect("put");
    assert_eq!(stored.key, key);
    assert_eq!(stored.size, data.len() as u64);
    assert_eq!(stored.content_type, "image/png");
    assert_eq!(stored.url, store.public_url(&key));
    assert_eq!(get(store, &key).await, Some(("image/png".into(), data)));
}

async fn overwrite(store: &dyn MediaStore) {
    let key = new_key("docs", None);
    store
        .put(&key, "text/plain", Bytes::from_static(b"first"))
        .await
        .expect("put");
    let stored = store
        .put(&key, "application/json", Bytes::from_static(b"{\"v\":2}"))
        .await
        .expect("overwrite");
    assert_eq!(stored.size, 7);
    assert_eq!(
        get(store, &key).await,
        Some(("application/json".into(), Bytes::from_static(b"{\"v\":2}")))
    );
}

async fn delete(store: &dyn MediaStore) {
    let key = new_key("tmp", Some("bin"));
    let other = new_key("tmp", Some("bin"));
    for k in [&key, &other] {
        store
            .put(k, "application/octet-stream", Bytes::from_static(b"x"))
            .await
            .expect("put");
    }
    store.delete(&key).await.expect("delete");
    assert_eq!(get(store, &key).await, None);
    assert!(get(store, &other).await.is_some(), "others are kept");
    store.delete(&key).await.expect("deleting twice is fine");
}

async fn missing_is_none(store: &dyn MediaStore) {
    assert_eq!(get(store, &new_key("nowhere", Some("jpg"))).await, None);
    store
        .delete(&new_key("nowhere", None))
        .await
        .expect("deleting a missing object is fine");
}

async fn invalid_keys_are_refused(store: &dyn MediaStore) {
    for key in [
        "",
        "../escape",
        "a/../../b",
        ".hidden",
        "a/.b",
        "a//b",
        "/abs",
        "sp ace",
        "a\\b",
    ] {
        let put = store.put(key, "text/plain", Bytes::from_static(b"x")).await;
        assert!(matches!(put, Err(MediaError::InvalidKey)), "put {key:?}");
        let got = store.get(key).await;
        assert!(matches!(got, Err(MediaError::InvalidKey)), "get {key:?}");
        let deleted = store.delete(key).await;
        assert!(
            matches!(deleted, Err(MediaError::InvalidKey)),
            "delete {key:?}"
        );
    }
}

async fn public_link(store: &dyn MediaStore) {
    let key = new_key("public", Some("txt"));
    let data = Bytes::from_static(b"hello, world");
    let stored = store
        .put(&key, "text/plain; charset=utf-8", data.clone())
        .await
        .expect("put");
    match store.kind() {
        // The gateway's own route serves these; here only the shape is ours.
        "local" => assert_eq!(stored.url, format!("{FS_BASE_URL}/media/{key}")),
        "s3" => {
            assert!(
                stored.url.starts_with(&support::s3_endpoint()) && stored.url.ends_with(&key),
                "{}",
                stored.url
            );
            let response = reqwest::get(&stored.url).await.expect("fetch public link");
            assert!(response.status().is_success(), "{}", response.status());
            let content_type = response
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            assert_eq!(content_type.as_deref(), Some("text/plain; charset=utf-8"));
            assert_eq!(response.bytes().await.expect("body"), data);
        }
        other => panic!("unknown store kind {other}"),
    }
}

/// A stream of `chunks`, then `tail` (an error, when given).
fn chunks(chunks: Vec<Bytes>, tail: Option<std::io::Error>) -> ByteStream {
    let items = chunks
        .into_iter()
        .map(Ok)
        .chain(tail.map(Err))
        .collect::<Vec<_>>();
    Box::pin(stream::iter(items))
}

async fn put_stream_round_trip(store: &dyn MediaStore) {
    let key = new_key("tmp", None);
    let parts = vec![
        Bytes::from_static(b"hello, "),
        Bytes::new(),
        Bytes::from_static(b"streamed world"),
    ];
    let stored = store
        .put_stream(&key, "text/plain", chunks(parts, None))
        .await
        .expect("put_stream");
    assert_eq!(stored.size, 21);
    assert_eq!(stored.url, store.public_url(&key));
    assert_eq!(
        get(store, &key).await,
        Some((
            "text/plain".into(),
            Bytes::from_static(b"hello, streamed world")
        ))
    );
}

/// Large enough for a multipart upload on S3 (parts of 8 MiB).
async fn put_stream_of_several_parts(store: &dyn MediaStore) {
    let key = new_key("tmp", Some("bin"));
    let chunk: Vec<u8> = (0..1024 * 1024).map(|i| (i % 251) as u8).collect();
    let parts: Vec<Bytes> = (0..9).map(|_| Bytes::from(chunk.clone())).collect();
    let stored = store
        .put_stream(&key, "application/octet-stream", chunks(parts, None))
        .await
        .expect("put_stream");
    assert_eq!(stored.size, 9 * 1024 * 1024);
    let (_, data) = get(store, &key).await.expect("stored");
    assert_eq!(data.len(), 9 * 1024 * 1024);
    assert_eq!(&data[..chunk.len()], &chunk[..]);
    assert_eq!(&data[8 * chunk.len()..], &chunk[..]);
    store.delete(&key).await.expect("delete");
}

async fn failed_stream_stores_nothing(store: &dyn MediaStore) {
    let key = new_key("tmp", None);
    let failing = chunks(
        vec![Bytes::from_static(b"partial")],
        Some(std::io::Error::other("client went away")),
    );
    let put = store.put_stream(&key, "text/plain", failing).await;
    assert!(matches!(put, Err(MediaError::Unavailable(_))), "{put:?}");
    assert_eq!(get(store, &key).await, None);
    let invalid = store
        .put_stream("../x", "text/plain", chunks(vec![], None))
        .await;
    assert!(matches!(invalid, Err(MediaError::InvalidKey)));
}

async fn healthy(store: &dyn MediaStore) {
    assert!(store.healthy().await);
}

#[tokio::test]
async fn s3_public_url_setting_replaces_the_bucket_url() {
    let store = S3MediaStore::new(s3_settings(Some("https://cdn.example/media/".into())))
        .await
        .expect("S3 server");
    assert_eq!(
        store.public_url("a/b.jpg"),
        "https://cdn.example/media/a/b.jpg"
    );
}

/// Reading back as a stream: the content type, the length known up front,
/// the bytes in more than one chunk; absent and invalid keys as for `get`.
async fn get_stream_reads_back_in_chunks(store: &dyn MediaStore) {
    let key = new_key("docs", Some("pdf"));
    let data: Vec<u8> = (0..300_000u32).map(|i| (i % 249) as u8).collect();
    store
        .put(&key, "application/pdf", Bytes::from(data.clone()))
        .await
        .expect("put");
    let object = store
        .get_stream(&key)
        .await
        .expect("get_stream")
        .expect("present");
    assert_eq!(object.content_type, "application/pdf");
    assert_eq!(object.size, Some(data.len() as u64));
    let mut back = Vec::new();
    let mut pieces = 0;
    let mut chunks = object.chunks;
    while let Some(chunk) = chunks.next().await {
        back.extend_from_slice(&chunk.expect("chunk"));
        pieces += 1;
    }
    assert_eq!(back, data);
    assert!(pieces > 1, "streamed, not read whole ({pieces} chunk)");
    let missing = store.get_stream(&new_key("nowhere", None)).await;
    assert!(matches!(missing, Ok(None)), "absent is None");
    let invalid = store.get_stream("../etc/passwd").await;
    assert!(matches!(invalid, Err(MediaError::InvalidKey)));
}
