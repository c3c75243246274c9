//! The download limits against a test HTTP server on loopback:
//! status, size caps (declared and streamed), the attachment limit, the
//! deadline (a server that never answers, a body that never ends) and the
//! egress guard.
use std::time::Duration;

use super::*;
use parley_tests::files::{Answer, serve};

fn fetcher(limits: Limits) -> Fetcher {
    Fetcher::new(Egress::direct(true), limits).unwrap()
}

fn small() -> Limits {
    Limits {
        timeout: Duration::from_secs(5),
        max_bytes: 100_000,
        attach_max: 60_000,
    }
}

#[tokio::test]
async fn a_file_comes_back_with_its_content_type() {
    let base = serve(Answer::file("image/png", *b"\x89PNG data"))
        .await
        .base;
    let got = fetcher(small()).fetch(&format!("{base}/a.png")).await;
    let Ok(Fetched::File { data, content_type }) = got else {
        panic!("a file: {got:?}");
    };
    assert_eq!(content_type.as_deref(), Some("image/png"));
    assert!(data.is_spooled(), "kept on disk, not in memory");
    assert_eq!(data.to_bytes().await.unwrap(), &b"\x89PNG data"[..]);
}

#[tokio::test]
async fn a_file_at_the_attachment_limit_is_kept_whole_and_one_more_byte_is_a_link() {
    let limits = small();
    let at = vec![7u8; limits.attach_max as usize];
    let base = serve(Answer::file("application/pdf", at.clone()))
        .await
        .base;
    let got = fetcher(limits).fetch(&format!("{base}/a.pdf")).await;
    let Ok(Fetched::File { data, .. }) = got else {
        panic!("a file: {got:?}");
    };
    assert_eq!(data.to_bytes().await.unwrap(), at.as_slice());
    let over = vec![7u8; limits.attach_max as usize + 1];
    let base = serve(Answer::file("application/pdf", over)).await.base;
    let got = fetcher(limits).fetch(&format!("{base}/b.pdf")).await;
    assert_eq!(
        got,
        Ok(Fetched::TooLargeToAttach {
            size: limits.attach_max + 1
        })
    );
}

#[tokio::test]
async fn a_status_other_than_200_fails() {
    let base = serve(Answer::Full {
        status: 404,
        content_type: "text/plain",
        body: b"nope".to_vec(),
        delay: Duration::ZERO,
    })
    .await
    .base;
    let err = fetcher(small())
        .fetch(&format!("{base}/x"))
        .await
        .unwrap_err();
    assert_eq!(err, FetchError::Status(404));
    assert_eq!(err.to_string(), "downloadUrl answered HTTP 404");
}

#[tokio::test]
async fn a_declared_size_over_the_cap_fails_before_reading() {
    let base = serve(Answer::Endless {
        content_length: Some(10 * 1024 * 1024 * 1024),
    })
    .await
    .base;
    let err = fetcher(small())
        .fetch(&format!("{base}/big"))
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::TooLarge(_)), "{err:?}");
}

#[tokio::test]
async fn a_body_that_keeps_going_is_cut_at_the_cap() {
    let base = serve(Answer::Endless {
        content_length: None,
    })
    .await
    .base;
    let err = fetcher(small())
        .fetch(&format!("{base}/stream"))
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::TooLarge(_)), "{err:?}");
    assert_eq!(
        fetcher(Limits::SPEC).too_large().to_string(),
        "downloadUrl is larger than 100 MB"
    );
}

#[tokio::test]
async fn files_over_the_attachment_limit_are_counted_not_kept() {
    let body = vec![7u8; 70_000];
    let base = serve(Answer::file("video/mp4", body)).await.base;
    let got = fetcher(small()).fetch(&format!("{base}/v.mp4")).await;
    assert_eq!(got, Ok(Fetched::TooLargeToAttach { size: 70_000 }));
    // Without a declared length, the body is counted to its end.
    let base = serve(Answer::Endless {
        content_length: None,
    })
    .await
    .base;
    let limits = Limits {
        attach_max: 20_000,
        ..small()
    };
    let err = fetcher(limits)
        .fetch(&format!("{base}/v"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, FetchError::TooLarge(_)),
        "still capped: {err:?}"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let base = serve(Answer::Silent).await.base;
    let limits = Limits {
        timeout: Duration::from_millis(300),
        ..small()
    };
    let started = std::time::Instant::now();
    let err = fetcher(limits)
        .fetch(&format!("{base}/slow"))
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::Timeout(_)), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn a_body_that_never_ends_times_out_under_a_large_cap() {
    let base = serve(Answer::Endless {
        content_length: None,
    })
    .await
    .base;
    let limits = Limits {
        timeout: Duration::from_millis(300),
        max_bytes: u64::MAX,
        attach_max: 1_000,
    };
    let err = fetcher(limits)
        .fetch(&format!("{base}/forever"))
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::Timeout(_)), "{err:?}");
}

#[tokio::test]
async fn the_egress_guard_refuses_loopback_by_address_and_by_name() {
    let port = serve(Answer::file("image/png", *b"x")).await.port;
    let guarded = Fetcher::new(Egress::direct(false), small()).unwrap();
    for url in [
        format!("http://127.0.0.1:{port}/x"),
        format!("http://localhost:{port}/x"),
    ] {
        let err = guarded.fetch(&url).await.unwrap_err();
        assert!(
            matches!(err, FetchError::Refused(EgressError::Forbidden(_))),
            "{url}: {err:?}"
        );
        assert!(err.to_string().contains("egress guard"), "{err}");
    }
    let err = guarded.fetch("ftp://example.com/x").await.unwrap_err();
    assert_eq!(err, FetchError::Refused(EgressError::Scheme));
}
