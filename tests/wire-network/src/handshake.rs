//! The responder side of the Noise handshake: XX for a first connect, IK
//! accepted for a client that cached this server's static key, and the XX
//! fallback when the IK message cannot be read (a static from another
//! server, or a fault asking for it). Ends with the client's payload.
use anyhow::{Context, anyhow, bail};
use wacore_noise::NoiseHandshake;
use whatsapp_rust::buffa::{Message, MessageField};
use whatsapp_rust::wacore::libsignal::protocol::KeyPair;
use whatsapp_rust::wacore_binary::consts::{
    NOISE_PATTERN_IK, NOISE_PATTERN_XX, NOISE_PATTERN_XXFALLBACK,
};
use whatsapp_rust::waproto::whatsapp as wa;

use crate::socket::Socket;

/// The server's long-lived static key and the certificate chain naming it.
pub struct ServerKeys {
    pub static_kp: KeyPair,
    pub cert_chain: Vec<u8>,
}

impl ServerKeys {
    pub fn generate() -> Self {
        let static_kp = KeyPair::generate(&mut rand10::rng());
        let public: [u8; 32] = static_kp
            .public_key
            .public_key_bytes()
            .try_into()
            .expect("an X25519 public key is 32 bytes");
        let cert_chain = wacore_noise::test_util::build_cert_chain_bytes(&public);
        Self {
            static_kp,
            cert_chain,
        }
    }

    fn public(&self) -> &[u8] {
        self.static_kp.public_key.public_key_bytes()
    }

    fn private(&self) -> &[u8] {
        self.static_kp.private_key.serialize()
    }
}

/// How the handshake went: the client's static key and its payload.
pub struct Handshaken {
    pub client_static: [u8; 32],
    pub payload: wa::ClientPayload,
    /// The pattern the client logged in with: "XX", "IK" or "XXfallback".
    pub pattern: &'static str,
}

fn key32(bytes: &[u8], what: &str) -> anyhow::Result<[u8; 32]> {
    bytes
        .try_into()
        .map_err(|_| anyhow!("{what} is {} bytes, not 32", bytes.len()))
}

fn hello(ephemeral: &[u8], static_: Option<Vec<u8>>, payload: Vec<u8>) -> Vec<u8> {
    wa::HandshakeMessage {
        server_hello: MessageField::some(wa::handshake_message::ServerHello {
            ephemeral: Some(ephemeral.to_vec()),
            r#static: static_,
            payload: Some(payload),
            ..Default::default()
        }),
        ..Default::default()
    }
    .encode_to_vec()
}

/// Runs the handshake on a fresh socket; `refuse_ik` answers an IK hello with the fallback.
pub async fn respond(
    socket: &mut Socket,
    keys: &ServerKeys,
    refuse_ik: bool,
) -> anyhow::Result<Handshaken> {
    let first = socket
        .read_frame()
        .await?
        .ok_or_else(|| anyhow!("closed before the client hello"))?;
    let message = wa::HandshakeMessage::decode_from_slice(&first).context("client hello")?;
    let client_hello = message
        .client_hello
        .into_option()
        .ok_or_else(|| anyhow!("no client hello"))?;
    let client_eph = key32(
        client_hello
            .ephemeral
            .as_deref()
            .ok_or_else(|| anyhow!("no ephemeral key"))?,
        "the client ephemeral",
    )?;
    let prologue = socket.header;
    if let (Some(static_), Some(payload)) = (&client_hello.r#static, &client_hello.payload) {
        if !refuse_ik
            && let Some(done) =
                try_ik(socket, keys, &prologue, &client_eph, static_, payload).await?
        {
            return Ok(done);
        }
        return xx(
            socket,
            keys,
            &prologue,
            &client_eph,
            NOISE_PATTERN_XXFALLBACK,
            "XXfallback",
        )
        .await;
    }
    xx(socket, keys, &prologue, &client_eph, NOISE_PATTERN_XX, "XX").await
}

/// IK: accepted when the client's static and payload decrypt under this server's static.
async fn try_ik(
    socket: &mut Socket,
    keys: &ServerKeys,
    prologue: &[u8],
    client_eph: &[u8; 32],
    encrypted_static: &[u8],
    encrypted_payload: &[u8],
) -> anyhow::Result<Option<Handshaken>> {
    let mut noise = NoiseHandshake::new(NOISE_PATTERN_IK, prologue)?;
    noise.authenticate(keys.public());
    noise.authenticate(client_eph);
    noise.mix_shared_secret(keys.private(), client_eph)?;
    let Ok(client_static) = noise.decrypt(encrypted_static) else {
        return Ok(None);
    };
    let client_static = key32(&client_static, "the client static")?;
    noise.mix_shared_secret(keys.private(), &client_static)?;
    let Ok(payload) = noise.decrypt(encrypted_payload) else {
        return Ok(None);
    };
    let payload = wa::ClientPayload::decode_from_slice(&payload).context("client payload")?;
    let server_eph = KeyPair::generate(&mut rand10::rng());
    let server_eph_pub = server_eph.public_key.public_key_bytes();
    noise.authenticate(server_eph_pub);
    noise.mix_shared_secret(server_eph.private_key.serialize(), client_eph)?;
    noise.mix_shared_secret(server_eph.private_key.serialize(), &client_static)?;
    let cert = noise.encrypt(&keys.cert_chain)?;
    socket
        .write_frame(&hello(server_eph_pub, None, cert))
        .await?;
    let (client_write, client_read) = noise.finish()?;
    socket.secure(client_write, client_read);
    Ok(Some(Handshaken {
        client_static,
        payload,
        pattern: "IK",
    }))
}

/// XX (or the XX fallback after a refused IK: the same messages on another pattern name).
async fn xx(
    socket: &mut Socket,
    keys: &ServerKeys,
    prologue: &[u8],
    client_eph: &[u8; 32],
    pattern_name: &str,
    pattern: &'static str,
) -> anyhow::Result<Handshaken> {
    let mut noise = NoiseHandshake::new(pattern_name, prologue)?;
    noise.authenticate(client_eph);
    let server_eph = KeyPair::generate(&mut rand10::rng());
    let server_eph_pub = server_eph.public_key.public_key_bytes();
    noise.authenticate(server_eph_pub);
    noise.mix_shared_secret(server_eph.private_key.serialize(), client_eph)?;
    let encrypted_static = noise.encrypt(keys.public())?;
    noise.mix_shared_secret(keys.private(), client_eph)?;
    let cert = noise.encrypt(&keys.cert_chain)?;
    socket
        .write_frame(&hello(server_eph_pub, Some(encrypted_static), cert))
        .await?;
    let finish = socket
        .read_frame()
        .await?
        .ok_or_else(|| anyhow!("closed before the client finish"))?;
    let message = wa::HandshakeMessage::decode_from_slice(&finish).context("client finish")?;
    let finish = message
        .client_finish
        .into_option()
        .ok_or_else(|| anyhow!("no client finish"))?;
    let (Some(encrypted_static), Some(encrypted_payload)) = (finish.r#static, finish.payload)
    else {
        bail!("the client finish lacks its static key or payload");
    };
    let client_static = key32(&noise.decrypt(&encrypted_static)?, "the client static")?;
    noise.mix_shared_secret(server_eph.private_key.serialize(), &client_static)?;
    let payload = noise.decrypt(&encrypted_payload)?;
    let payload = wa::ClientPayload::decode_from_slice(&payload).context("client payload")?;
    let (client_write, client_read) = noise.finish()?;
    socket.secure(client_write, client_read);
    Ok(Handshaken {
        client_static,
        payload,
        pattern,
    })
}
