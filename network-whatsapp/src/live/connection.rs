//! One session's live connection: pairing by phone code, logout, close and
//! the LID lookup; sends and lookups are in `sends` and `lookups`.
use std::sync::Arc;

use tokio::sync::Mutex;
use tokio::task::JoinHandle;
use whatsapp_rust::Client;
use whatsapp_rust::pair_code::PairCodeOptions;
use whatsapp_rust::wacore::iq::devices::RemoveCompanionDeviceSpec;

use super::authors::Authors;
use super::durable::Acks;
use super::errors::{failed, jid};
use super::server_acks::ServerAcks;
use parley_network::{NetworkError, PhoneNumber};

pub(super) struct LiveConnection {
    pub(super) client: Arc<Client>,
    /// The library's run loop; it ends when the connection does.
    run: Mutex<Option<JoinHandle<()>>>,
    /// Authors of the group messages received (noted by the event pump).
    pub(super) authors: Authors,
    /// Received messages waiting for the session's answer before the
    /// network is acknowledged (see `durable`).
    pub(super) acks: Acks,
    /// The server's answers to the messages this connection sends.
    pub(super) server_acks: ServerAcks,
    /// Set once this connection fetched the network's props itself (see
    /// `privacy_tokens::props_loaded`).
    pub(super) props: tokio::sync::OnceCell<()>,
}

impl LiveConnection {
    pub fn new(
        client: Arc<Client>,
        run: Option<JoinHandle<()>>,
        authors: Authors,
        acks: Acks,
        server_acks: ServerAcks,
    ) -> Self {
        Self {
            client,
            run: Mutex::new(run),
            authors,
            acks,
            server_acks,
            props: tokio::sync::OnceCell::new(),
        }
    }

    /// Ends the connection (flushing device state) and waits for the run loop.
    pub async fn shut(&self) {
        self.client.disconnect().await;
        if let Some(run) = self.run.lock().await.take() {
            let _ = run.await;
        }
    }

    pub async fn pair_code(&self, phone: &PhoneNumber) -> Result<String, NetworkError> {
        if self.client.is_logged_in() {
            return Err(NetworkError::Rejected("already paired".into()));
        }
        let options = PairCodeOptions {
            phone_number: phone.to_string(),
            ..PairCodeOptions::default()
        };
        self.client
            .pair_with_code(options)
            .await
            .map_err(|e| failed(&self.client, "pairing code", e))
    }

    pub async fn log_out(&self) -> Result<(), NetworkError> {
        if !self.client.is_connected() {
            return Err(NetworkError::Unreachable(
                "not connected to the network".into(),
            ));
        }
        // The library's logout asks the network to remove this device but
        // only logs the answer: ask first, so an unconfirmed logout is said.
        let confirmed = match self.client.pn() {
            Some(own) => self
                .client
                .execute(RemoveCompanionDeviceSpec::new(&own))
                .await
                .map_err(|e| failed(&self.client, "logout", e)),
            None => Err(NetworkError::Rejected(
                "logout: the session has no phone number yet".into(),
            )),
        };
        self.client.logout().await;
        confirmed
    }

    /// The LID of `phone`: the one the device learned, else the network's
    /// (a number check, as a phone resolves a new contact before its first
    /// message, so that the first message goes to the same chat as the
    /// next ones); `None` for a number nobody registered.
    pub async fn lid_of_phone(&self, phone: &PhoneNumber) -> Result<Option<String>, NetworkError> {
        let pn = jid(parley_network::Jid::phone(phone).as_str())?;
        super::lid_lookup::lid_of(&self.client, &pn)
            .await
            .map_err(|e| failed(&self.client, "LID lookup", e))
    }
}

impl Drop for LiveConnection {
    fn drop(&mut self) {
        // A connection dropped without `close` still ends: nothing may keep
        // talking to the network for a session this process gave up.
        if let Ok(mut run) = self.run.try_lock()
            && let Some(run) = run.take()
        {
            let client = Arc::clone(&self.client);
            tokio::spawn(async move {
                client.disconnect().await;
                let _ = run.await;
            });
        }
    }
}
