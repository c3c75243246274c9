//! The little of HTTP/1.1 the CDN stand-in reads: a request line, headers,
//! and a body by Content-Length or chunked, which may be cut off part way.
use anyhow::bail;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

pub struct Request {
    pub method: String,
    pub path: String,
    query: String,
    pub length: usize,
    chunked: bool,
}

/// A request's body: all of it, or what arrived before the connection broke.
pub enum Body {
    Whole(Vec<u8>),
    Cut(Vec<u8>),
}

impl Request {
    /// The next request's head; `None` when the client closed the connection.
    pub async fn read<R: AsyncRead + Unpin>(
        reader: &mut BufReader<R>,
    ) -> anyhow::Result<Option<Self>> {
        let mut line = String::new();
        if reader.read_line(&mut line).await? == 0 {
            return Ok(None);
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or_default().to_string();
        let target = parts.next().unwrap_or_default();
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let mut request = Self {
            method,
            path: path.to_string(),
            query: query.to_string(),
            length: 0,
            chunked: false,
        };
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).await? == 0 {
                return Ok(None);
            }
            let header = header.trim_end();
            if header.is_empty() {
                return Ok(Some(request));
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    request.length = value.trim().parse().unwrap_or(0);
                } else if name.eq_ignore_ascii_case("transfer-encoding") {
                    request.chunked = value.trim().eq_ignore_ascii_case("chunked");
                }
            }
        }
    }

    /// Whether a body follows the head.
    pub fn has_body(&self) -> bool {
        self.length > 0 || self.chunked
    }

    /// A query parameter's value.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
    }

    /// Reads the body (at most `max` bytes).
    pub async fn body<R: AsyncRead + Unpin>(
        &self,
        reader: &mut BufReader<R>,
        max: usize,
    ) -> anyhow::Result<Body> {
        let mut data = Vec::new();
        let whole = if self.chunked {
            read_chunked(reader, &mut data, max).await?
        } else {
            read_up_to(reader, &mut data, self.length).await?
        };
        Ok(if whole {
            Body::Whole(data)
        } else {
            Body::Cut(data)
        })
    }
}

/// Appends up to `n` bytes to `data`; whether all `n` came.
async fn read_up_to<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    data: &mut Vec<u8>,
    n: usize,
) -> anyhow::Result<bool> {
    let want = data.len() + n;
    let mut buf = vec![0; 64 * 1024];
    while data.len() < want {
        let room = (want - data.len()).min(buf.len());
        match reader.read(&mut buf[..room]).await {
            Ok(0) | Err(_) => return Ok(false),
            Ok(got) => data.extend_from_slice(&buf[..got]),
        }
    }
    Ok(true)
}

/// A `Transfer-Encoding: chunked` body; whether it came to its end.
async fn read_chunked<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    data: &mut Vec<u8>,
    max: usize,
) -> anyhow::Result<bool> {
    loop {
        let mut size = String::new();
        if reader.read_line(&mut size).await.unwrap_or(0) == 0 {
            return Ok(false);
        }
        let size = size.trim().split(';').next().unwrap_or_default();
        let Ok(size) = usize::from_str_radix(size, 16) else {
            bail!("bad chunk size {size:?}");
        };
        if data.len() + size > max {
            bail!("upload over {max} bytes");
        }
        if !read_up_to(reader, data, size).await? {
            return Ok(false);
        }
        let mut end = String::new();
        if reader.read_line(&mut end).await.unwrap_or(0) == 0 {
            return Ok(false);
        }
        if size == 0 {
            return Ok(true);
        }
    }
}
