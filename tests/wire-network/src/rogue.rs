//! A companion of the test's own making: it speaks the wire protocol far
//! enough to show a QR code and be scanned, then answers the phone's
//! `pair-success` as the test says. Real clients never sign wrongly; this
//! one can, so a test sees the server refuse what it must refuse.
use anyhow::{Context, anyhow, bail};
use base64::Engine as _;
use base64::prelude::BASE64_STANDARD;
use tokio::net::TcpStream;
use wacore_noise::XxHandshakeState;
use whatsapp_rust::buffa::Message;
use whatsapp_rust::wacore::libsignal::protocol::KeyPair;
use whatsapp_rust::wacore_binary::consts::WA_CONN_HEADER;
use whatsapp_rust::wacore_binary::node::Node;
use whatsapp_rust::waproto::whatsapp as wa;

use crate::WireNetwork;
use crate::nodes::{SERVER, attr, child, children, element, leaf_bytes, text};
use crate::socket::Socket;

/// The device-signature prefix of an ADV device identity.
const ADV_DEVICE_SIGNATURE: &[u8] = &[6, 1];

/// How the companion answers the phone's pair-success.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signing {
    /// As every real client does: its identity key signs the identity.
    Honest,
    /// With a signature its identity key never made.
    Forged,
}

/// An unregistered companion on its own socket.
pub struct RogueCompanion {
    socket: Socket,
    noise: KeyPair,
    identity: KeyPair,
    adv_secret: [u8; 32],
    reference: String,
}

impl RogueCompanion {
    /// Connects to `net` as a companion that has never been linked and
    /// waits for the QR references the server shows it.
    pub async fn connect(net: &WireNetwork) -> anyhow::Result<Self> {
        Self::connect_as(net, KeyPair::generate(&mut rand10::rng())).await
    }

    /// [`Self::connect`] with the noise key `noise`: another socket of the
    /// same install (a client that kept its key and connects again).
    pub async fn connect_as(net: &WireNetwork, noise: KeyPair) -> anyhow::Result<Self> {
        let url = net.url();
        let tcp = TcpStream::connect(net.addr).await.context("connect")?;
        let (ws, _) = tokio_websockets::ClientBuilder::new()
            .uri(&url)?
            .connect_on(tcp)
            .await
            .context("websocket upgrade")?;
        let mut socket = Socket::client(ws, WA_CONN_HEADER);
        // No username: a client that asks to be paired.
        let payload = wa::ClientPayload::default().encode_to_vec();
        let mut handshake = XxHandshakeState::new(noise.clone(), payload, &WA_CONN_HEADER)?;
        socket
            .write_first_frame(&handshake.build_client_hello()?)
            .await?;
        let hello = socket
            .read_frame()
            .await?
            .ok_or_else(|| anyhow!("closed before the server hello"))?;
        let finish = handshake.read_server_hello_and_build_client_finish(&hello)?;
        socket.write_frame(&finish).await?;
        let ciphers = handshake.finish()?;
        socket.secure(ciphers.read_cipher, ciphers.write_cipher);
        let mut rogue = Self {
            socket,
            noise,
            identity: KeyPair::generate(&mut rand10::rng()),
            adv_secret: rand10::random(),
            reference: String::new(),
        };
        let iq = rogue.next_iq_with("pair-device").await?;
        let refs = child(&iq, "pair-device").map(children).unwrap_or_default();
        let first = refs.iter().find_map(text);
        rogue.reference = first.ok_or_else(|| anyhow!("no QR reference"))?;
        Ok(rogue)
    }

    /// Its noise key.
    pub fn noise(&self) -> KeyPair {
        self.noise.clone()
    }

    /// Reads until the server ends the socket; `false` if it has not within
    /// `wait`.
    pub async fn ended(&mut self, wait: std::time::Duration) -> bool {
        let end = async { while let Ok(Some(_)) = self.socket.read_node().await {} };
        tokio::time::timeout(wait, end).await.is_ok()
    }

    /// The QR code this companion shows.
    pub fn qr(&self) -> String {
        let b64 = |b: &[u8]| BASE64_STANDARD.encode(b);
        format!(
            "{},{},{},{}",
            self.reference,
            b64(self.noise.public_key.public_key_bytes()),
            b64(self.identity.public_key.public_key_bytes()),
            b64(&self.adv_secret)
        )
    }

    /// Waits for the phone's pair-success, answers it with a device
    /// signature made as `signing` says, and returns what the server says
    /// next (`None`: it closed the socket without a word).
    pub async fn sign(&mut self, signing: Signing) -> anyhow::Result<Option<Node>> {
        let success = self.next_iq_with("pair-success").await?;
        let iq_id = attr(&success, "id").unwrap_or_default();
        let container = child(&success, "pair-success")
            .and_then(|n| child(n, "device-identity"))
            .and_then(crate::nodes::bytes)
            .context("no device identity")?;
        let container = wa::ADVSignedDeviceIdentityHMAC::decode_from_slice(container)?;
        let mut signed = wa::ADVSignedDeviceIdentity::decode_from_slice(
            container.details.as_deref().unwrap_or_default(),
        )?;
        let details = signed.details.clone().unwrap_or_default();
        let key_index = wa::ADVDeviceIdentity::decode_from_slice(&details)?
            .key_index
            .unwrap_or_default();
        let account = signed.account_signature_key.clone().unwrap_or_default();
        let message = [
            ADV_DEVICE_SIGNATURE,
            &details,
            self.identity.public_key.public_key_bytes(),
            &account,
        ]
        .concat();
        let signature = match signing {
            Signing::Honest => self
                .identity
                .private_key
                .calculate_signature(&message, &mut rand10::rng())
                .map_err(|e| anyhow!("sign: {e}"))?
                .to_vec(),
            Signing::Forged => rand10::random::<[u8; 64]>().to_vec(),
        };
        signed.device_signature = Some(signature);
        let mut identity = leaf_bytes("device-identity", signed.encode_to_vec());
        identity.attrs.insert("key-index", key_index.to_string());
        let answer = element(
            "iq",
            &[
                ("to", SERVER.into()),
                ("id", iq_id),
                ("type", "result".into()),
            ],
            vec![element("pair-device-sign", &[], vec![identity])],
        );
        self.socket.write_node(&answer).await?;
        self.socket.read_node().await
    }

    /// Reads until an IQ with a `tag` child comes.
    async fn next_iq_with(&mut self, tag: &str) -> anyhow::Result<Node> {
        loop {
            let Some(node) = self.socket.read_node().await? else {
                bail!("the server closed the socket before a {tag}");
            };
            if node.tag == "iq" && child(&node, tag).is_some() {
                return Ok(node);
            }
        }
    }
}
