use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use futures::StreamExt;
use parley_shared::media::fs::FsMediaStore;
use sha2::{Digest, Sha256};

use super::*;

struct Fixture {
    store: FsMediaStore,
    _dir: tempfile::TempDir,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    Fixture {
        store: FsMediaStore::new(dir.path().to_path_buf(), "http://gw.test"),
        _dir: dir,
    }
}

fn target<'a>(f: &'a Fixture, key: &'a str) -> Target<'a> {
    Target {
        store: &f.store,
        key,
        content_type: "application/pdf",
    }
}

fn mirror(max_bytes: u64, transfers: usize) -> Mirror {
    Mirror::new(MirrorLimits {
        max_bytes,
        transfers,
    })
}

fn chunks(parts: &[&'static [u8]]) -> ByteStream {
    let items: Vec<std::io::Result<Bytes>> =
        parts.iter().map(|p| Ok(Bytes::from_static(p))).collect();
    futures::stream::iter(items).boxed()
}

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

async fn opened(stream: ByteStream) -> Result<ByteStream, NetworkError> {
    Ok(stream)
}

#[tokio::test]
async fn a_streamed_file_is_stored_with_its_size_and_hash() {
    let f = fixture();
    let out = mirror(100, 2)
        .copy_from(
            target(&f, "h/a.pdf"),
            11,
            Some(&sha(b"hello world")),
            || opened(chunks(&[b"hello", b" ", b"world"])),
        )
        .await
        .unwrap();
    let Mirrored::Stored { object, sha256 } = out else {
        panic!("not stored: {out:?}");
    };
    assert_eq!(object.size, 11);
    assert_eq!(sha256, sha(b"hello world"));
    let (_, bytes) = f.store.get("h/a.pdf").await.unwrap().expect("stored");
    assert_eq!(bytes.as_ref(), b"hello world");
}

#[tokio::test]
async fn a_file_declared_over_the_cap_is_not_downloaded() {
    let f = fixture();
    let asked = AtomicBool::new(false);
    let out = mirror(10, 2)
        .copy_from(target(&f, "h/b.pdf"), 11, None, || {
            asked.store(true, Ordering::SeqCst);
            opened(chunks(&[b"hello world"]))
        })
        .await
        .unwrap();
    assert!(
        matches!(&out, Mirrored::NotStored(why) if why.contains("10 bytes")),
        "{out:?}"
    );
    assert!(!asked.load(Ordering::SeqCst), "no download was started");
    assert!(f.store.get("h/b.pdf").await.unwrap().is_none());
}

#[tokio::test]
async fn a_file_longer_than_it_declared_stops_at_the_cap_and_leaves_nothing() {
    let f = fixture();
    let out = mirror(10, 2)
        .copy_from(target(&f, "h/c.pdf"), 4, None, || {
            opened(chunks(&[b"0123", b"4567", b"89ab"]))
        })
        .await
        .unwrap();
    assert!(
        matches!(&out, Mirrored::NotStored(why) if why.contains("larger")),
        "{out:?}"
    );
    assert!(f.store.get("h/c.pdf").await.unwrap().is_none());
}

#[tokio::test]
async fn a_failed_download_is_a_reason_not_an_error() {
    let f = fixture();
    let broken: Vec<std::io::Result<Bytes>> = vec![
        Ok(Bytes::from_static(b"abc")),
        Err(std::io::Error::other("connection reset")),
    ];
    let out = mirror(100, 2)
        .copy_from(target(&f, "h/d.pdf"), 6, None, || {
            opened(futures::stream::iter(broken).boxed())
        })
        .await
        .unwrap();
    assert!(
        matches!(&out, Mirrored::NotStored(why) if why.contains("connection reset")),
        "{out:?}"
    );
    assert!(f.store.get("h/d.pdf").await.unwrap().is_none());

    let refused = mirror(100, 2)
        .copy_from(target(&f, "h/e.pdf"), 6, None, || async {
            Err(NetworkError::Rejected("gone from the CDN".into()))
        })
        .await
        .unwrap();
    assert!(
        matches!(&refused, Mirrored::NotStored(why) if why.contains("gone from the CDN")),
        "{refused:?}"
    );
}

#[tokio::test]
async fn a_file_that_does_not_match_its_hash_is_removed() {
    let f = fixture();
    let out = mirror(100, 2)
        .copy_from(target(&f, "h/f.pdf"), 5, Some(&sha(b"other")), || {
            opened(chunks(&[b"hello"]))
        })
        .await
        .unwrap();
    assert!(
        matches!(&out, Mirrored::NotStored(why) if why.contains("hash")),
        "{out:?}"
    );
    assert!(f.store.get("h/f.pdf").await.unwrap().is_none());
}

#[tokio::test]
async fn transfers_past_the_limit_wait_for_a_turn() {
    let f = fixture();
    let m = mirror(100, 1);
    let (tx, rx) = futures::channel::mpsc::unbounded::<std::io::Result<Bytes>>();
    let first_opened = AtomicBool::new(false);
    let second_opened = AtomicBool::new(false);
    let first = m.copy_from(target(&f, "h/g.pdf"), 2, None, || {
        first_opened.store(true, Ordering::SeqCst);
        opened(rx.boxed())
    });
    let second = m.copy_from(target(&f, "h/h.pdf"), 2, None, || {
        second_opened.store(true, Ordering::SeqCst);
        opened(chunks(&[b"hi"]))
    });
    tokio::pin!(first, second);
    assert!(futures::poll!(&mut first).is_pending());
    assert!(
        first_opened.load(Ordering::SeqCst),
        "the first transfer runs"
    );
    assert!(futures::poll!(&mut second).is_pending());
    assert!(
        !second_opened.load(Ordering::SeqCst),
        "the second waits while the only turn is taken"
    );
    tx.unbounded_send(Ok(Bytes::from_static(b"ok"))).unwrap();
    drop(tx);
    assert!(matches!(first.await.unwrap(), Mirrored::Stored { .. }));
    assert!(matches!(second.await.unwrap(), Mirrored::Stored { .. }));
    assert!(second_opened.load(Ordering::SeqCst));
}
