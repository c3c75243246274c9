//! A file to send, encrypted and uploaded with bounded memory: the plain bytes
//! (spooled on disk by the worker) are encrypted as a stream into an unnamed
//! temporary file, which the library then uploads from disk, resuming from an
//! offset when the CDN asks it to.
use std::io::{BufWriter, Read, Write};

use parley_contract::spool::FileBody;
use parley_network::NetworkError;
use whatsapp_rust::Client;
use whatsapp_rust::download::MediaType;
use whatsapp_rust::upload::UploadResponse;
use whatsapp_rust::wacore::upload::{EncryptedMediaInfo, UploadSource, encrypt_media_streaming};

use super::errors::failed;

/// The encrypted file, read from disk by the library's upload.
struct Ciphertext(FileBody);

impl UploadSource for Ciphertext {
    fn len(&self) -> u64 {
        self.0.len()
    }

    fn reader_from(&self, offset: u64) -> std::io::Result<Box<dyn Read + Send>> {
        Ok(Box::new(self.0.reader_from(offset)))
    }
}

/// Encrypts `plain` for `media_type` into a temporary file, in a blocking task.
async fn encrypt(
    plain: &FileBody,
    media_type: MediaType,
) -> anyhow::Result<(FileBody, EncryptedMediaInfo)> {
    let reader = plain.reader_from(0);
    tokio::task::spawn_blocking(move || {
        let mut file = tempfile::tempfile()?;
        let mut out = BufWriter::new(&mut file);
        let info = encrypt_media_streaming(reader, &mut out, media_type)?;
        out.flush()?;
        drop(out);
        let len = file.metadata()?.len();
        Ok((FileBody::from_file(file, len), info))
    })
    .await?
}

/// Encrypts and uploads `plain`; the library's answer names where it went.
pub async fn upload(
    client: &Client,
    plain: &FileBody,
    media_type: MediaType,
) -> Result<UploadResponse, NetworkError> {
    let (ciphertext, info) = encrypt(plain, media_type)
        .await
        .map_err(|e| failed(client, "media encryption", e))?;
    client
        .upload_stream(Ciphertext(ciphertext), info, media_type)
        .await
        .map_err(|e| failed(client, "media upload", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use parley_contract::spool::Spool;
    use whatsapp_rust::wacore::download::DownloadUtils;

    #[tokio::test]
    async fn a_spooled_file_encrypts_to_disk_and_decrypts_back() {
        let plain: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
        let chunks = futures::stream::iter(
            plain
                .chunks(50_000)
                .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
                .collect::<Vec<_>>(),
        );
        let body = Spool::all(Box::pin(chunks), u64::MAX)
            .await
            .unwrap()
            .unwrap();
        let (cipher, info) = encrypt(&body, MediaType::Document).await.unwrap();
        assert!(cipher.is_spooled());
        assert_eq!(info.file_length, plain.len() as u64);
        let source = Ciphertext(cipher.clone());
        assert_eq!(source.len(), cipher.len());
        let enc = cipher.to_bytes().await.unwrap();
        let mut tail = Vec::new();
        source
            .reader_from(enc.len() as u64 - 10)
            .unwrap()
            .read_to_end(&mut tail)
            .unwrap();
        assert_eq!(tail, &enc[enc.len() - 10..], "resumes from an offset");
        let back = DownloadUtils::decrypt_stream(&enc[..], &info.media_key, MediaType::Document)
            .expect("decrypts with the key the upload names");
        assert_eq!(back, plain);
    }
}
