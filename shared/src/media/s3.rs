//! The S3 media store (cluster mode): one bucket on any S3-compatible server,
//! addressed path style, with public links under the bucket (or a CDN in front).
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;
use s3::creds::Credentials;
use s3::error::S3Error;
use s3::{Bucket, BucketConfiguration, Region};

use super::{ByteStream, MediaError, MediaStore, ObjectStream, StoredObject, safety, valid_key};

/// Multipart parts (8 MiB each) uploaded at once by one streamed write.
const PARTS_IN_FLIGHT: usize = 2;

/// How long `healthy()` waits for the server.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(3);

/// Where the bucket is and how to reach it.
#[derive(Clone)]
pub struct S3Settings {
    /// Base URL of the server, e.g. `http://minio:9000`.
    pub endpoint: String,
    pub bucket: String,
    /// Signing region, e.g. `eu-west-1`.
    pub region: String,
    pub access_key: String,
    pub secret_key: String,
    /// Base of public links (e.g. a CDN); default `{endpoint}/{bucket}`.
    pub public_url: Option<String>,
}
parley_contract::debug_redacted!(S3Settings { endpoint, bucket, region, public_url; access_key, secret_key });

/// Objects are readable by anyone with the link: a bucket this store creates
/// gets a policy allowing anonymous `GetObject`; an existing bucket (or the proxy
/// in front of it) is the operator's to open.
pub struct S3MediaStore {
    bucket: Box<Bucket>,
    public_base: String,
}

impl std::fmt::Debug for S3MediaStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3MediaStore")
            .field("bucket", &self.bucket.name())
            .field("public_base", &self.public_base)
            .finish_non_exhaustive()
    }
}

impl S3MediaStore {
    /// Connects and creates the bucket when it does not exist. The bucket is
    /// created with a location constraint of `cfg.region`; servers that refuse one
    /// for `us-east-1` (AWS, moto) need the bucket created beforehand.
    pub async fn new(cfg: S3Settings) -> Result<Self, MediaError> {
        let endpoint = cfg.endpoint.trim_end_matches('/').to_string();
        let region = Region::Custom {
            region: cfg.region,
            endpoint: endpoint.clone(),
        };
        let credentials = Credentials::new(
            Some(&cfg.access_key),
            Some(&cfg.secret_key),
            None,
            None,
            None,
        )
        .map_err(|e| MediaError::Unavailable(format!("s3 credentials: {e}")))?;
        let bucket = Bucket::new(&cfg.bucket, region.clone(), credentials.clone())
            .map_err(|e| unavailable("s3 client", e))?
            .with_path_style();

        ensure_bucket(&bucket, region, credentials).await?;
        let public_base = match cfg.public_url {
            Some(url) => url.trim_end_matches('/').to_string(),
            None => format!("{endpoint}/{}", cfg.bucket),
        };
        Ok(S3MediaStore {
            bucket,
            public_base,
        })
    }
}

/// Creates the bucket, open to anonymous reads, when it does not exist.
async fn ensure_bucket(
    bucket: &Bucket,
    region: Region,
    credentials: Credentials,
) -> Result<(), MediaError> {
    // Listing one key needs only bucket-level rights (unlike `Bucket::exists`,
    // which lists every bucket of the account).
    match bucket
        .list_page(String::new(), None, None, None, Some(1))
        .await
    {
        Ok(_) => return Ok(()),
        Err(S3Error::HttpFailWithBody(404, _)) => {}
        Err(e) => return Err(unavailable("check bucket", e)),
    }
    let name = bucket.name();
    let created =
        Bucket::create_with_path_style(&name, region, credentials, BucketConfiguration::default())
            .await;
    match created {
        Ok(_) => {}
        // Someone else created it meanwhile, and owns its policy.
        Err(S3Error::HttpFailWithBody(409, _)) => return Ok(()),
        Err(e) => return Err(unavailable("create bucket", e)),
    }
    let policy = serde_json::json!({
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": "*",
            "Action": ["s3:GetObject"],
            "Resource": [format!("arn:aws:s3:::{name}/*")],
        }],
    });
    if let Err(e) = bucket.put_bucket_policy(&policy.to_string()).await {
        // Public links will not work, but storing does: say why and go on.
        tracing::warn!(bucket = %name, error = %e, "could not make the new bucket publicly readable");
    }
    Ok(())
}

fn unavailable(what: &str, e: S3Error) -> MediaError {
    MediaError::Unavailable(format!("{what}: {e}"))
}

fn checked(key: &str) -> Result<&str, MediaError> {
    if valid_key(key) {
        Ok(key)
    } else {
        Err(MediaError::InvalidKey)
    }
}

#[async_trait]
impl MediaStore for S3MediaStore {
    async fn put(
        &self,
        key: &str,
        content_type: &str,
        data: Bytes,
    ) -> Result<StoredObject, MediaError> {
        let key = checked(key)?;
        self.bucket
            .put_object_builder(key, &data)
            .with_content_type(safety::served_type(content_type))
            .with_content_disposition(safety::disposition(content_type))
            .map_err(|e| unavailable("put object", e))?
            .execute()
            .await
            .map_err(|e| unavailable("put object", e))?;
        Ok(StoredObject {
            key: key.to_string(),
            url: self.public_url(key),
            size: data.len() as u64,
            content_type: content_type.to_string(),
        })
    }

    /// Objects of 8 MiB and more go up as a multipart upload, two parts at a
    /// time (so a transfer holds a few parts of memory, whatever the object's
    /// size); a failed stream aborts the upload.
    async fn put_stream(
        &self,
        key: &str,
        content_type: &str,
        data: ByteStream,
    ) -> Result<StoredObject, MediaError> {
        let key = checked(key)?;
        let counted = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&counted);
        let data = data.inspect(move |chunk| {
            if let Ok(chunk) = chunk {
                counter.fetch_add(chunk.len() as u64, Ordering::Relaxed);
            }
        });
        let mut reader = tokio_util::io::StreamReader::new(data);
        let request = self
            .bucket
            .put_object_stream_builder(key)
            .with_content_type(safety::served_type(content_type))
            .with_header(
                http::header::CONTENT_DISPOSITION,
                safety::disposition(content_type),
            )
            .map_err(|e| unavailable("put object stream", e))?
            .with_max_concurrent_chunks(PARTS_IN_FLIGHT);
        let size = match request.execute_stream(&mut reader).await {
            Ok(sent) => sent.uploaded_bytes() as u64,
            // A completion answered 200 with a body rust-s3 does not recognise
            // (moto names its root `CompleteMultipartUploadResponse`): the object
            // counts as stored when it is there with every byte streamed.
            Err(S3Error::HttpFailWithBody(200, body)) => {
                let streamed = counted.load(Ordering::Relaxed);
                let landed = self
                    .bucket
                    .head_object(key)
                    .await
                    .ok()
                    .and_then(|(head, _)| head.content_length);
                if landed != i64::try_from(streamed).ok() {
                    return Err(MediaError::Unavailable(format!(
                        "put object stream: unexpected completion: {body}"
                    )));
                }
                streamed
            }
            Err(e) => return Err(unavailable("put object stream", e)),
        };
        Ok(StoredObject {
            key: key.to_string(),
            url: self.public_url(key),
            size,
            content_type: content_type.to_string(),
        })
    }

    async fn get(&self, key: &str) -> Result<Option<(String, Bytes)>, MediaError> {
        let key = checked(key)?;
        match self.bucket.get_object(key).await {
            Ok(response) => {
                let content_type = response
                    .headers()
                    .remove("content-type")
                    .unwrap_or_else(|| "application/octet-stream".to_string());
                Ok(Some((content_type, response.into_bytes())))
            }
            Err(S3Error::HttpFailWithBody(404, _)) => Ok(None),
            Err(e) => Err(unavailable("get object", e)),
        }
    }

    async fn get_stream(&self, key: &str) -> Result<Option<ObjectStream>, MediaError> {
        let key = checked(key)?;
        let head = match self.bucket.head_object(key).await {
            Ok((_, 404)) | Err(S3Error::HttpFailWithBody(404, _)) => return Ok(None),
            Ok((head, _)) => head,
            Err(e) => return Err(unavailable("head object", e)),
        };
        let content_type = head
            .content_type
            .unwrap_or_else(|| "application/octet-stream".to_string());
        let size = head.content_length.and_then(|n| u64::try_from(n).ok());
        match self.bucket.get_object_stream(key).await {
            Ok(response) if response.status_code == 404 => Ok(None),
            Ok(response) => {
                let chunks = response
                    .bytes
                    .map(|chunk| chunk.map_err(std::io::Error::other));
                Ok(Some(ObjectStream {
                    content_type,
                    size,
                    chunks: Box::pin(chunks),
                }))
            }
            Err(S3Error::HttpFailWithBody(404, _)) => Ok(None),
            Err(e) => Err(unavailable("get object", e)),
        }
    }

    async fn delete(&self, key: &str) -> Result<(), MediaError> {
        let key = checked(key)?;
        match self.bucket.delete_object(key).await {
            Ok(_) | Err(S3Error::HttpFailWithBody(404, _)) => Ok(()),
            Err(e) => Err(unavailable("delete object", e)),
        }
    }

    fn public_url(&self, key: &str) -> String {
        format!("{}/{key}", self.public_base)
    }

    async fn healthy(&self) -> bool {
        let probe = self
            .bucket
            .list_page(String::new(), None, None, None, Some(1));
        matches!(tokio::time::timeout(HEALTH_TIMEOUT, probe).await, Ok(Ok(_)))
    }

    fn kind(&self) -> &'static str {
        "s3"
    }
}
