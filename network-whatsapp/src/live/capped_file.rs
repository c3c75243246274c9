//! Where a download lands: an unnamed temporary file that refuses to grow past
//! a cap, then read back as a stream of chunks. The library writes the
//! decrypted bytes into it as they arrive (its `DownloadWriter` contract:
//! emptied before each attempt, rewound after a verified one).
use std::io::{Seek, SeekFrom, Write};

use futures::StreamExt;
use parley_network::ByteStream;
use whatsapp_rust::download::DownloadWriter;

/// Bytes per chunk read back.
const CHUNK: usize = 64 * 1024;

/// A file whose length may not pass `max_bytes`.
#[derive(Debug)]
pub struct CappedFile {
    file: std::fs::File,
    max_bytes: u64,
}

impl CappedFile {
    /// An unnamed file in the temporary directory (`TMPDIR`), gone when closed.
    pub async fn temporary(max_bytes: u64) -> std::io::Result<CappedFile> {
        let file = tokio::task::spawn_blocking(tempfile::tempfile)
            .await
            .map_err(std::io::Error::other)??;
        Ok(CappedFile::new(file, max_bytes))
    }

    pub fn new(file: std::fs::File, max_bytes: u64) -> CappedFile {
        CappedFile { file, max_bytes }
    }

    /// The file from where it stands, in chunks.
    pub fn into_stream(self) -> ByteStream {
        let file = tokio::fs::File::from_std(self.file);
        tokio_util::io::ReaderStream::with_capacity(file, CHUNK).boxed()
    }
}

impl Write for CappedFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let at = self.file.stream_position()?;
        if at.saturating_add(buf.len() as u64) > self.max_bytes {
            return Err(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                format!("the file is larger than {} bytes", self.max_bytes),
            ));
        }
        self.file.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl Seek for CappedFile {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.file.seek(pos)
    }
}

impl DownloadWriter for CappedFile {
    fn truncate(&mut self, len: u64) -> std::io::Result<()> {
        self.file.set_len(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_back(mut file: CappedFile) -> Vec<u8> {
        file.rewind().unwrap();
        let mut stream = file.into_stream();
        let mut all = Vec::new();
        while let Some(chunk) = stream.next().await {
            all.extend_from_slice(&chunk.unwrap());
        }
        all
    }

    #[tokio::test]
    async fn writes_up_to_the_cap_and_refuses_past_it() {
        let mut file = CappedFile::temporary(10).await.unwrap();
        file.write_all(b"0123456789").unwrap();
        let past = file.write(b"x").unwrap_err();
        assert_eq!(past.kind(), std::io::ErrorKind::FileTooLarge);
        assert_eq!(read_back(file).await, b"0123456789");
    }

    #[tokio::test]
    async fn an_emptied_file_takes_the_whole_cap_again() {
        let mut file = CappedFile::temporary(4).await.unwrap();
        file.write_all(b"abcd").unwrap();
        file.truncate(0).unwrap();
        file.rewind().unwrap();
        file.write_all(b"wxyz").unwrap();
        assert_eq!(read_back(file).await, b"wxyz");
    }

    #[tokio::test]
    async fn a_large_file_comes_back_in_chunks() {
        let mut file = CappedFile::temporary(1 << 20).await.unwrap();
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        file.write_all(&data).unwrap();
        file.rewind().unwrap();
        let mut stream = file.into_stream();
        let mut sizes = Vec::new();
        let mut all = Vec::new();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.unwrap();
            sizes.push(chunk.len());
            all.extend_from_slice(&chunk);
        }
        assert_eq!(all, data);
        assert!(sizes.iter().all(|n| *n <= CHUNK), "{sizes:?}");
    }
}
