//! One client's socket: the websocket, the 3-byte length framing (the first
//! client message starts with the `WA` header, optionally after an `ED`
//! routing pre-intro), and, once the handshake is done, the Noise transport
//! ciphers with their per-direction counters. Nodes go in and out as
//! wacore-binary's marshalled form behind a flag byte.
use anyhow::{Context, anyhow, bail};
use bytes::BytesMut;
use futures::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio_websockets::{Message, WebSocketStream};
use wacore_noise::NoiseCipher;
use wacore_noise::framing::{FrameDecoder, encode_frame};
use whatsapp_rust::wacore_binary::marshal::{marshal, unmarshal_ref};
use whatsapp_rust::wacore_binary::node::Node;
use whatsapp_rust::wacore_binary::util::unpack;

use crate::dictionary::Transcoder;
use std::sync::Arc;

/// The connection header's first two bytes; the other two are the protocol
/// and dictionary versions, which differ between clients (`WA 6 3`, `WA 6 2`).
const HEADER_MAGIC: &[u8] = b"WA";
pub const HEADER_LEN: usize = 4;
/// The edge-routing pre-intro's magic (`ED\0\1` + 3-byte length + routing info).
const ROUTING_MAGIC: &[u8] = b"ED\0\x01";

pub struct Socket {
    ws: WebSocketStream<TcpStream>,
    decoder: FrameDecoder,
    /// The connection header the client sent (the Noise prologue).
    pub header: [u8; HEADER_LEN],
    saw_header: bool,
    ciphers: Option<Ciphers>,
    /// For a client of another token dictionary than ours.
    pub transcoder: Option<Arc<Transcoder>>,
}

struct Ciphers {
    read: NoiseCipher,
    write: NoiseCipher,
    read_counter: u32,
    write_counter: u32,
}

impl Socket {
    pub fn new(ws: WebSocketStream<TcpStream>) -> Self {
        Self {
            ws,
            decoder: FrameDecoder::new(),
            header: [0; HEADER_LEN],
            saw_header: false,
            ciphers: None,
            transcoder: None,
        }
    }

    /// The client's end of a socket (a test's own client): it sends the
    /// connection header with its first frame and reads frames without one.
    pub fn client(ws: WebSocketStream<TcpStream>, header: [u8; HEADER_LEN]) -> Self {
        Self {
            header,
            saw_header: true,
            ..Self::new(ws)
        }
    }

    /// The client's first frame, behind the connection header.
    pub async fn write_first_frame(&mut self, payload: &[u8]) -> anyhow::Result<()> {
        let framed = encode_frame(payload, Some(&self.header))?;
        self.ws
            .send(Message::binary(bytes::Bytes::from(framed)))
            .await
            .context("websocket write")
    }

    /// The next frame's payload; `None` when the client closed the socket.
    pub async fn read_frame(&mut self) -> anyhow::Result<Option<BytesMut>> {
        loop {
            if self.saw_header
                && let Some(frame) = self.decoder.decode_frame()
            {
                return Ok(Some(frame));
            }
            let Some(message) = self.ws.next().await else {
                return Ok(None);
            };
            let message = message.context("websocket read")?;
            if message.is_close() {
                return Ok(None);
            }
            if !message.is_binary() {
                continue;
            }
            let mut data: &[u8] = message.as_payload();
            if !self.saw_header {
                data = self.strip_intro(data)?;
                self.saw_header = true;
            }
            self.decoder.feed(data);
        }
    }

    /// Takes the routing pre-intro and the connection header off the first message.
    fn strip_intro<'d>(&mut self, mut data: &'d [u8]) -> anyhow::Result<&'d [u8]> {
        if data.starts_with(ROUTING_MAGIC) {
            let len_at = ROUTING_MAGIC.len();
            if data.len() < len_at + 3 {
                bail!("truncated routing pre-intro");
            }
            let len = u32::from_be_bytes([0, data[len_at], data[len_at + 1], data[len_at + 2]]);
            let skip = len_at + 3 + len as usize;
            data = data
                .get(skip..)
                .ok_or_else(|| anyhow!("truncated routing info"))?;
        }
        if data.len() < HEADER_LEN || !data.starts_with(HEADER_MAGIC) {
            bail!("the first message does not start with the connection header");
        }
        self.header.copy_from_slice(&data[..HEADER_LEN]);
        Ok(&data[HEADER_LEN..])
    }

    /// Sends one handshake frame (no header: the server never sends one).
    pub async fn write_frame(&mut self, payload: &[u8]) -> anyhow::Result<()> {
        let framed = encode_frame(payload, None)?;
        self.ws
            .send(Message::binary(bytes::Bytes::from(framed)))
            .await
            .context("websocket write")
    }

    /// Switches to the transport phase with the split handshake ciphers.
    pub fn secure(&mut self, read: NoiseCipher, write: NoiseCipher) {
        self.ciphers = Some(Ciphers {
            read,
            write,
            read_counter: 0,
            write_counter: 0,
        });
    }

    /// The next node; `None` when the client closed the socket.
    pub async fn read_node(&mut self) -> anyhow::Result<Option<Node>> {
        loop {
            let Some(mut frame) = self.read_frame().await? else {
                return Ok(None);
            };
            let ciphers = self
                .ciphers
                .as_mut()
                .ok_or_else(|| anyhow!("not secured"))?;
            let counter = ciphers.read_counter;
            ciphers.read_counter += 1;
            ciphers
                .read
                .decrypt_in_place_with_counter(counter, &mut frame)
                .map_err(|e| anyhow!("frame {counter} does not decrypt: {e}"))?;
            let plain = unpack(&frame).map_err(|e| anyhow!("frame flag: {e}"))?;
            if plain.is_empty() {
                continue;
            }
            let plain = match &self.transcoder {
                Some(t) => std::borrow::Cow::Owned(t.inbound(&plain)?),
                None => plain,
            };
            let node = unmarshal_ref(&plain)
                .map_err(|e| anyhow!("frame {counter} is no node: {e}"))?
                .to_owned();
            return Ok(Some(node));
        }
    }

    /// Encrypts and sends one node.
    pub async fn write_node(&mut self, node: &Node) -> anyhow::Result<()> {
        let mut plain = marshal(node).map_err(|e| anyhow!("marshal: {e}"))?;
        if let Some(t) = &self.transcoder {
            // Behind the flag byte, in the client's dictionary.
            let theirs = t.outbound(&plain[1..])?;
            plain.truncate(1);
            plain.extend_from_slice(&theirs);
        }
        let ciphers = self
            .ciphers
            .as_mut()
            .ok_or_else(|| anyhow!("not secured"))?;
        let counter = ciphers.write_counter;
        ciphers.write_counter += 1;
        let sealed = ciphers
            .write
            .encrypt_with_counter(counter, &plain)
            .map_err(|e| anyhow!("encrypt: {e}"))?;
        self.write_frame(&sealed).await
    }

    /// Closes the websocket (the client sees the stream end).
    pub async fn close(&mut self) {
        let _ = self.ws.close().await;
    }
}
