//! Getting a media send's file in hand: fetched from its URL (through the
//! egress guard, within the limits) or read back from the media store where
//! the API streamed an upload; typed and named; captions dropped where the
//! network shows none (audio, stickers).
use parley_contract::error::ApiError;
use parley_contract::spool::{FileBody, Spool};
use parley_model::outgoing::{MediaRequest, MediaSource};
use parley_shared::media::{MediaStore, UPLOAD_MAX};

use super::download::{Fetched, Fetcher};
use super::mime;
use crate::network::{MediaFile, MediaInfo};

/// What goes out for a media send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prepared {
    /// The file, attached.
    Attach(MediaFile),
    /// Over the attachment limit: a text message with the link.
    Link { text: String },
}

/// Gets the file of `request`.
pub async fn prepare(
    request: &MediaRequest,
    fetcher: &Fetcher,
    store: &dyn MediaStore,
) -> Result<Prepared, ApiError> {
    let (data, header_type, url_name) = match &request.source {
        MediaSource::Url { url } => match fetcher.fetch(url).await {
            Ok(Fetched::File { data, content_type }) => {
                (data, content_type, mime::file_name_of(url))
            }
            Ok(Fetched::TooLargeToAttach { .. }) => {
                return Ok(Prepared::Link {
                    text: link_text(url, &request.info.caption),
                });
            }
            Err(e) => return Err(ApiError::bad_gateway(e.to_string())),
        },
        MediaSource::Upload { key } => {
            let (content_type, data) = read_upload(store, key).await?;
            (data, Some(content_type), None)
        }
    };
    let asked = &request.info;
    let file_name = Some(asked.file_name.clone())
        .filter(|n| !n.is_empty())
        .or(url_name);
    let mime_type = mime::detect(
        Some(asked.mime_type.as_str()).filter(|t| !t.is_empty()),
        header_type.as_deref(),
        file_name.as_deref(),
    );
    let kind = mime::kind(&mime_type, request.sticker);
    let info = MediaInfo {
        mime_type,
        file_name: file_name.unwrap_or_default(),
        ..asked.clone()
    };
    Ok(Prepared::Attach(MediaFile {
        kind,
        data,
        info: info.fitted(kind),
    }))
}

/// Spools an upload back from the media store, where the API streamed it.
async fn read_upload(store: &dyn MediaStore, key: &str) -> Result<(String, FileBody), ApiError> {
    let unavailable = |what: &str, e: &dyn std::fmt::Display| {
        tracing::error!(error = %e, "media store: {what} an upload");
        ApiError::unavailable("media store unavailable")
    };
    let object = match store.get_stream(key).await {
        Ok(Some(found)) => found,
        Ok(None) => {
            return Err(ApiError::bad_gateway(
                "the uploaded file is no longer in the media store; upload it again",
            ));
        }
        Err(e) => return Err(unavailable("reading", &e)),
    };
    match Spool::all(object.chunks, UPLOAD_MAX).await {
        Ok(Some(data)) => Ok((object.content_type, data)),
        Ok(None) => Err(ApiError::payload_too_large(
            "the uploaded file is larger than the upload limit",
        )),
        Err(e) => Err(unavailable("spooling", &e)),
    }
}

/// The text sent instead of a file too large to attach.
fn link_text(url: &str, caption: &str) -> String {
    match caption.trim() {
        "" => url.to_string(),
        caption => format!("{caption}\n{url}"),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bytes::Bytes;
    use parley_shared::egress::Egress;
    use parley_shared::media::fs::FsMediaStore;

    use super::*;
    use crate::network::MediaKind;
    use crate::send::download::Limits;
    use parley_tests::files::{self, Answer};

    fn request(source: MediaSource) -> MediaRequest {
        MediaRequest {
            source,
            info: MediaInfo {
                caption: "look".into(),
                ..MediaInfo::default()
            },
            sticker: false,
        }
    }

    /// A server that answers every request with `body` as `application/octet-stream`.
    async fn serve(body: Vec<u8>) -> String {
        files::serve(Answer::file("application/octet-stream", body))
            .await
            .base
    }

    fn fetcher(attach_max: u64) -> Fetcher {
        Fetcher::new(
            Egress::direct(true),
            Limits {
                timeout: Duration::from_secs(5),
                max_bytes: 1_000_000,
                attach_max,
            },
        )
        .unwrap()
    }

    #[tokio::test]
    async fn a_fetched_file_is_typed_by_its_name_when_the_header_is_generic() {
        let dir = tempfile::tempdir().unwrap();
        let store = FsMediaStore::new(dir.path().to_path_buf(), "http://x");
        let base = serve(b"%PDF-1.7".to_vec()).await;
        let req = request(MediaSource::Url {
            url: format!("{base}/files/Invoice%207.pdf"),
        });
        let Prepared::Attach(file) = prepare(&req, &fetcher(1_000), &store).await.unwrap() else {
            panic!("attached");
        };
        assert!(file.data.is_spooled(), "a fetched file waits on disk");
        assert_eq!(file.data.to_bytes().await.unwrap(), &b"%PDF-1.7"[..]);
        assert_eq!(
            MediaFile {
                data: FileBody::from_bytes(Bytes::new()),
                ..file
            },
            MediaFile {
                kind: MediaKind::Document,
                data: FileBody::from_bytes(Bytes::new()),
                info: MediaInfo {
                    mime_type: "application/pdf".into(),
                    file_name: "Invoice 7.pdf".into(),
                    caption: "look".into(),
                    ptt: false,
                    view_once: false,
                },
            }
        );
    }

    #[tokio::test]
    async fn over_the_attachment_limit_the_link_goes_out_as_text() {
        let dir = tempfile::tempdir().unwrap();
        let store = FsMediaStore::new(dir.path().to_path_buf(), "http://x");
        let base = serve(vec![1u8; 2_000]).await;
        let url = format!("{base}/clip.mp4");
        let req = request(MediaSource::Url { url: url.clone() });
        let got = prepare(&req, &fetcher(1_000), &store).await.unwrap();
        assert_eq!(
            got,
            Prepared::Link {
                text: format!("look\n{url}")
            }
        );
    }

    #[tokio::test]
    async fn uploads_are_read_back_and_audio_loses_its_caption() {
        let dir = tempfile::tempdir().unwrap();
        let store = FsMediaStore::new(dir.path().to_path_buf(), "http://x");
        store
            .put("tmp/abc", "audio/ogg", Bytes::from_static(b"OggS"))
            .await
            .unwrap();
        let mut req = request(MediaSource::Upload {
            key: "tmp/abc".into(),
        });
        req.info.mime_type = "audio/ogg".into();
        req.info.ptt = true;
        let Prepared::Attach(file) = prepare(&req, &fetcher(1_000), &store).await.unwrap() else {
            panic!("attached");
        };
        assert_eq!((file.kind, file.info.ptt), (MediaKind::Audio, true));
        assert_eq!(file.info.caption, "");
        assert_eq!(file.data.to_bytes().await.unwrap(), &b"OggS"[..]);
        req.source = MediaSource::Upload {
            key: "tmp/gone".into(),
        };
        let err = prepare(&req, &fetcher(1_000), &store).await.unwrap_err();
        assert_eq!(err.status, 502);
    }
}
