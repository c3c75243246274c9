//! A file's bytes on their way through the gateway (a send's file, its copy
//! for the hosted inbox, the encrypted upload to the network): written once,
//! as they arrive, into an unnamed temporary file, then read back as often as
//! needed in chunks, so memory stays bounded whatever the file's size. Small
//! bodies built in code (tests, generated texts) may stay in memory.
use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

/// The chunks of a file, as they arrive.
pub type ByteStream = std::pin::Pin<Box<dyn futures::Stream<Item = io::Result<Bytes>> + Send>>;

/// Bytes read from a spooled file at a time.
pub const CHUNK: usize = 64 * 1024;

/// A file's bytes, cheap to clone; each reader keeps its own position.
#[derive(Clone)]
pub struct FileBody(Arc<Body>);

enum Body {
    Memory(Bytes),
    /// Unnamed: the operating system removes it when the last clone is dropped.
    Spooled {
        file: File,
        len: u64,
    },
}

impl FileBody {
    /// A body held in memory.
    pub fn from_bytes(bytes: impl Into<Bytes>) -> FileBody {
        FileBody(Arc::new(Body::Memory(bytes.into())))
    }

    /// The first `len` bytes of `file` (read with positioned reads: the file's
    /// own cursor is never used).
    pub fn from_file(file: File, len: u64) -> FileBody {
        FileBody(Arc::new(Body::Spooled { file, len }))
    }

    pub fn len(&self) -> u64 {
        match &*self.0 {
            Body::Memory(b) => b.len() as u64,
            Body::Spooled { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the bytes live on disk.
    pub fn is_spooled(&self) -> bool {
        matches!(&*self.0, Body::Spooled { .. })
    }

    /// A blocking reader from `offset` (for blocking tasks only).
    pub fn reader_from(&self, offset: u64) -> BodyReader {
        BodyReader {
            body: self.clone(),
            at: offset.min(self.len()),
        }
    }

    /// The bytes as a stream of chunks of at most [`CHUNK`] bytes; the file
    /// is read in blocking tasks, one chunk ahead of the consumer at most.
    pub fn stream(&self) -> ByteStream {
        if let Body::Memory(b) = &*self.0 {
            let b = b.clone();
            let chunks = (0..b.len())
                .step_by(CHUNK)
                .map(move |at| Ok(b.slice(at..(at + CHUNK).min(b.len()))))
                .collect::<Vec<_>>();
            return Box::pin(futures::stream::iter(chunks));
        }
        let reader = self.reader_from(0);
        Box::pin(futures::stream::try_unfold(
            reader,
            |mut reader| async move {
                let (chunk, reader) = tokio::task::spawn_blocking(move || {
                    let mut buf = vec![0u8; CHUNK];
                    let n = read_full(&mut reader, &mut buf)?;
                    buf.truncate(n);
                    Ok::<_, io::Error>((buf, reader))
                })
                .await
                .map_err(io::Error::other)??;
                Ok(match chunk.is_empty() {
                    true => None,
                    false => Some((Bytes::from(chunk), reader)),
                })
            },
        ))
    }

    /// The SHA-256 of the bytes, read in a blocking task.
    pub async fn sha256(&self) -> io::Result<[u8; 32]> {
        let mut reader = self.reader_from(0);
        tokio::task::spawn_blocking(move || {
            let mut hash = Sha256::new();
            let mut buf = vec![0u8; CHUNK];
            loop {
                let n = reader.read(&mut buf)?;
                if n == 0 {
                    return Ok(hash.finalize().into());
                }
                hash.update(&buf[..n]);
            }
        })
        .await
        .map_err(io::Error::other)?
    }

    /// All the bytes in memory: for small bodies and tests only.
    pub async fn to_bytes(&self) -> io::Result<Bytes> {
        if let Body::Memory(b) = &*self.0 {
            return Ok(b.clone());
        }
        let mut all = BytesMut::new();
        let mut chunks = self.stream();
        while let Some(chunk) = chunks.next().await {
            all.extend_from_slice(&chunk?);
        }
        Ok(all.freeze())
    }
}

/// Equal when both are the same body, or hold the same bytes in memory.
impl PartialEq for FileBody {
    fn eq(&self, other: &FileBody) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || matches!((&*self.0, &*other.0), (Body::Memory(a), Body::Memory(b)) if a == b)
    }
}

impl Eq for FileBody {}

impl fmt::Debug for FileBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = if self.is_spooled() {
            "spooled"
        } else {
            "memory"
        };
        write!(f, "FileBody({} bytes, {place})", self.len())
    }
}

/// A blocking reader over a [`FileBody`].
pub struct BodyReader {
    body: FileBody,
    at: u64,
}

impl Read for BodyReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.body.len() - self.at;
        let want = (buf.len() as u64).min(left) as usize;
        if want == 0 {
            return Ok(0);
        }
        let n = match &*self.body.0 {
            Body::Memory(b) => {
                let at = self.at as usize;
                buf[..want].copy_from_slice(&b[at..at + want]);
                want
            }
            Body::Spooled { file, .. } => file.read_at(&mut buf[..want], self.at)?,
        };
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the spooled file is shorter than it was",
            ));
        }
        self.at += n as u64;
        Ok(n)
    }
}

/// Reads until `buf` is full or the reader ends.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// Writes chunks into a new unnamed temporary file, keeping at most `keep`
/// bytes; past that the chunks are only counted, so a caller can tell how
/// large a refused file was.
pub struct Spool {
    file: tokio::fs::File,
    kept: u64,
    seen: u64,
    keep: u64,
}

impl Spool {
    pub async fn new(keep: u64) -> io::Result<Spool> {
        let file = tokio::task::spawn_blocking(tempfile::tempfile)
            .await
            .map_err(io::Error::other)??;
        Ok(Spool {
            file: tokio::fs::File::from_std(file),
            kept: 0,
            seen: 0,
            keep,
        })
    }

    /// Adds a chunk (written only while the total is within `keep`).
    pub async fn write(&mut self, chunk: &[u8]) -> io::Result<()> {
        self.seen += chunk.len() as u64;
        if self.seen <= self.keep {
            self.file.write_all(chunk).await?;
            self.kept = self.seen;
        }
        Ok(())
    }

    /// Bytes seen so far, kept or not.
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// Whether every byte seen was kept.
    pub fn whole(&self) -> bool {
        self.seen == self.kept
    }

    /// The body written; `None` when bytes past `keep` were dropped.
    pub async fn finish(mut self) -> io::Result<Option<FileBody>> {
        if !self.whole() {
            return Ok(None);
        }
        self.file.flush().await?;
        let file = self.file.into_std().await;
        Ok(Some(FileBody::from_file(file, self.kept)))
    }

    /// Spools all of `stream`; `Ok(None)` when it holds more than `keep` bytes
    /// (it is read no further then).
    pub async fn all(mut stream: ByteStream, keep: u64) -> io::Result<Option<FileBody>> {
        let mut spool = Spool::new(keep).await?;
        while let Some(chunk) = stream.next().await {
            spool.write(&chunk?).await?;
            if !spool.whole() {
                return Ok(None);
            }
        }
        spool.finish().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 % 251) as u8).collect()
    }

    fn chunked(data: &[u8], size: usize) -> ByteStream {
        let chunks = data
            .chunks(size)
            .map(|c| Ok(Bytes::copy_from_slice(c)))
            .collect::<Vec<_>>();
        Box::pin(futures::stream::iter(chunks))
    }

    #[tokio::test]
    async fn a_spooled_body_reads_back_whole_as_often_as_asked() {
        let data = pattern(3 * CHUNK + 123);
        let body = Spool::all(chunked(&data, 10_000), u64::MAX)
            .await
            .unwrap()
            .expect("within the cap");
        assert!(body.is_spooled());
        assert_eq!(body.len(), data.len() as u64);
        for _ in 0..2 {
            assert_eq!(body.to_bytes().await.unwrap(), data.as_slice());
        }
        let mut chunks = body.stream();
        let mut sizes = Vec::new();
        while let Some(c) = chunks.next().await {
            sizes.push(c.unwrap().len());
        }
        assert_eq!(sizes, [CHUNK, CHUNK, CHUNK, 123]);
        let expected: [u8; 32] = Sha256::digest(&data).into();
        assert_eq!(body.sha256().await.unwrap(), expected);
    }

    #[tokio::test]
    async fn readers_keep_their_own_positions() {
        let data = pattern(1000);
        let body = Spool::all(chunked(&data, 7), 1000).await.unwrap().unwrap();
        let mut a = body.reader_from(0);
        let mut b = body.reader_from(990);
        let mut buf = [0u8; 16];
        assert_eq!(b.read(&mut buf).unwrap(), 10);
        assert_eq!(&buf[..10], &data[990..]);
        assert_eq!(a.read(&mut buf).unwrap(), 16);
        assert_eq!(&buf[..], &data[..16]);
        assert_eq!(b.read(&mut buf).unwrap(), 0);
        assert_eq!(body.reader_from(5000).read(&mut buf).unwrap(), 0);
    }

    #[tokio::test]
    async fn past_the_cap_nothing_is_kept_but_bytes_are_counted() {
        let data = pattern(100);
        assert!(Spool::all(chunked(&data, 30), 99).await.unwrap().is_none());
        let mut spool = Spool::new(50).await.unwrap();
        for c in data.chunks(30) {
            spool.write(c).await.unwrap();
        }
        assert_eq!(spool.seen(), 100);
        assert!(!spool.whole());
        assert!(spool.finish().await.unwrap().is_none());
        let exact = Spool::all(chunked(&data, 30), 100).await.unwrap().unwrap();
        assert_eq!(exact.to_bytes().await.unwrap(), data.as_slice());
    }

    #[tokio::test]
    async fn memory_bodies_stream_in_chunks_and_compare_by_content() {
        let data = pattern(CHUNK + 1);
        let body = FileBody::from_bytes(data.clone());
        assert!(!body.is_spooled());
        assert_eq!(body.to_bytes().await.unwrap(), data.as_slice());
        assert_eq!(body.stream().count().await, 2);
        assert_eq!(body, FileBody::from_bytes(data.clone()));
        let spooled = Spool::all(chunked(&data, 512), u64::MAX)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(spooled, spooled.clone());
        assert_ne!(spooled, body);
        assert!(
            FileBody::from_bytes(Bytes::new())
                .stream()
                .next()
                .await
                .is_none()
        );
    }
}
