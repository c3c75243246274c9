//! The filesystem media store (embedded mode): files under a root directory,
//! served by the gateway itself at `{public_base_url}/media/{key}`.
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;
use rand::RngCore;
use tokio::io::AsyncWriteExt;

use super::{
    ByteStream, MediaError, MediaStore, ObjectStream, StoredObject, stream_error, valid_key,
};

/// Stored when a sidecar is missing (a file placed by hand).
const DEFAULT_CONTENT_TYPE: &str = "application/octet-stream";

/// Objects live at `root/<key>`; the content type of `a/b.jpg` is kept in the
/// sidecar `root/a/.b.jpg.content-type`. Keys never have a segment starting with
/// a dot, so sidecars and temp files can never be mistaken for objects.
#[derive(Debug, Clone)]
pub struct FsMediaStore {
    root: PathBuf,
    public_base_url: String,
}

impl FsMediaStore {
    /// Directories are created on first write.
    pub fn new(root: PathBuf, public_base_url: &str) -> Self {
        FsMediaStore {
            root,
            public_base_url: public_base_url.trim_end_matches('/').to_string(),
        }
    }

    /// The object's path and its content-type sidecar's path.
    fn paths(&self, key: &str) -> Result<(PathBuf, PathBuf), MediaError> {
        if !valid_key(key) {
            return Err(MediaError::InvalidKey);
        }
        let path = self.root.join(key);
        let (dir, name) = key.rsplit_once('/').unwrap_or(("", key));
        let sidecar = self.root.join(dir).join(format!(".{name}.content-type"));
        Ok((path, sidecar))
    }
}

#[async_trait]
impl MediaStore for FsMediaStore {
    async fn put(
        &self,
        key: &str,
        content_type: &str,
        data: Bytes,
    ) -> Result<StoredObject, MediaError> {
        let (path, sidecar) = self.paths(key)?;
        write_atomically(&sidecar, content_type.as_bytes()).await?;
        write_atomically(&path, &data).await?;
        Ok(StoredObject {
            key: key.to_string(),
            url: self.public_url(key),
            size: data.len() as u64,
            content_type: content_type.to_string(),
        })
    }

    async fn put_stream(
        &self,
        key: &str,
        content_type: &str,
        data: ByteStream,
    ) -> Result<StoredObject, MediaError> {
        let (path, sidecar) = self.paths(key)?;
        let tmp = temp_beside(&path).await?;
        let size = match write_stream(&tmp, data).await {
            Ok(size) => size,
            Err(e) => {
                let _ = tokio::fs::remove_file(&tmp).await;
                return Err(e);
            }
        };
        if let Err(e) = write_atomically(&sidecar, content_type.as_bytes()).await {
            let _ = tokio::fs::remove_file(&tmp).await;
            return Err(e);
        }
        if let Err(e) = tokio::fs::rename(&tmp, &path).await {
            let _ = tokio::fs::remove_file(&tmp).await;
            return Err(io_error("rename to", &path, e));
        }
        Ok(StoredObject {
            key: key.to_string(),
            url: self.public_url(key),
            size,
            content_type: content_type.to_string(),
        })
    }

    async fn get(&self, key: &str) -> Result<Option<(String, Bytes)>, MediaError> {
        let (path, sidecar) = self.paths(key)?;
        let Some(data) = read_if_present(&path).await? else {
            return Ok(None);
        };
        let content_type = read_if_present(&sidecar)
            .await?
            .and_then(|raw| String::from_utf8(raw).ok())
            .filter(|ct| !ct.is_empty())
            .unwrap_or_else(|| DEFAULT_CONTENT_TYPE.to_string());
        Ok(Some((content_type, Bytes::from(data))))
    }

    async fn get_stream(&self, key: &str) -> Result<Option<ObjectStream>, MediaError> {
        let (path, sidecar) = self.paths(key)?;
        let file = match tokio::fs::File::open(&path).await {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error("open", &path, e)),
        };
        let content_type = read_if_present(&sidecar)
            .await?
            .and_then(|raw| String::from_utf8(raw).ok())
            .filter(|ct| !ct.is_empty())
            .unwrap_or_else(|| DEFAULT_CONTENT_TYPE.to_string());
        let size = file.metadata().await.ok().map(|m| m.len());
        let chunks =
            tokio_util::io::ReaderStream::with_capacity(file, parley_contract::spool::CHUNK);
        Ok(Some(ObjectStream {
            content_type,
            size,
            chunks: Box::pin(chunks),
        }))
    }

    async fn delete(&self, key: &str) -> Result<(), MediaError> {
        let (path, sidecar) = self.paths(key)?;
        remove_if_present(&path).await?;
        remove_if_present(&sidecar).await
    }

    fn public_url(&self, key: &str) -> String {
        format!("{}/media/{key}", self.public_base_url)
    }

    async fn healthy(&self) -> bool {
        let probe = self.root.join(format!(".health-{}", random_suffix()));
        let ok = write_atomically(&probe, b"ok").await.is_ok();
        ok && tokio::fs::remove_file(&probe).await.is_ok()
    }

    fn kind(&self) -> &'static str {
        "local"
    }
}

fn random_suffix() -> String {
    let mut raw = [0u8; 8];
    rand::thread_rng().fill_bytes(&mut raw);
    hex::encode(raw)
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> MediaError {
    MediaError::Unavailable(format!("{what} {}: {e}", path.display()))
}

/// The path of a fresh dot-named temp file in `path`'s directory (created when missing).
async fn temp_beside(path: &Path) -> Result<PathBuf, MediaError> {
    let dir = path
        .parent()
        .ok_or_else(|| MediaError::Unavailable(format!("no parent: {}", path.display())))?;
    tokio::fs::create_dir_all(dir)
        .await
        .map_err(|e| io_error("create dir", dir, e))?;
    Ok(dir.join(format!(".tmp-{}", random_suffix())))
}

/// Writes the chunks of `data` to a new file at `tmp`; returns the byte count.
async fn write_stream(tmp: &Path, mut data: ByteStream) -> Result<u64, MediaError> {
    let mut file = tokio::fs::File::create(tmp)
        .await
        .map_err(|e| io_error("create", tmp, e))?;
    let mut size = 0u64;
    while let Some(chunk) = data.next().await {
        let chunk = chunk.map_err(stream_error)?;
        file.write_all(&chunk)
            .await
            .map_err(|e| io_error("write", tmp, e))?;
        size += chunk.len() as u64;
    }
    file.flush().await.map_err(|e| io_error("write", tmp, e))?;
    Ok(size)
}

/// Writes a dot-named temp file beside `path`, then renames it over `path`, so
/// readers see the old bytes or the new ones, never a partial file.
async fn write_atomically(path: &Path, data: &[u8]) -> Result<(), MediaError> {
    let tmp = temp_beside(path).await?;
    if let Err(e) = tokio::fs::write(&tmp, data).await {
        let _ = tokio::fs::remove_file(&tmp).await;
        return Err(io_error("write", &tmp, e));
    }
    if let Err(e) = tokio::fs::rename(&tmp, path).await {
        let _ = tokio::fs::remove_file(&tmp).await;
        return Err(io_error("rename to", path, e));
    }
    Ok(())
}

/// No object there: nothing at the path, a directory (`a` when `a/b` exists),
/// or a file where a directory would be (`a/b` when `a` exists).
fn absent(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::NotFound | ErrorKind::IsADirectory | ErrorKind::NotADirectory
    )
}

async fn read_if_present(path: &Path) -> Result<Option<Vec<u8>>, MediaError> {
    match tokio::fs::read(path).await {
        Ok(data) => Ok(Some(data)),
        Err(e) if absent(&e) => Ok(None),
        Err(e) => Err(io_error("read", path, e)),
    }
}

async fn remove_if_present(path: &Path) -> Result<(), MediaError> {
    match tokio::fs::remove_file(path).await {
        Ok(()) => Ok(()),
        Err(e) if absent(&e) => Ok(()),
        Err(e) => Err(io_error("remove", path, e)),
    }
}
