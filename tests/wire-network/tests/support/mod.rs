//! What the wire-network tests share: the test network with a phone and a
//! contact, and the real adapter on a SQLite database.
#![allow(dead_code)] // each test binary uses its own part
use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use parley_contract::wire::sandbox::SandboxHistory;
use parley_model::inbound::InboundMessage;
use parley_network::contract::{Avatar, CONTACT, Carried, Counterpart, DEADLINE, PHONE, Subject};
use parley_network::{ClientId, Connection, Network, NetworkEvent, SessionContext};
use parley_network_whatsapp::live::WhatsappNetwork;
use parley_shared::db::{Db, NewSession, StatePatch};
use parley_wire_network::{TestDevice, WireNetwork};
use tokio::sync::mpsc::Receiver;

pub struct Wire {
    pub net: WireNetwork,
    pub phone: TestDevice,
    pub contact: TestDevice,
    /// Each session's linked device number.
    linked: Mutex<HashMap<String, u16>>,
    /// The adapter's database.
    db: Db,
}

impl Wire {
    /// The session's linked device number.
    fn linked_device(&self, client_id: &ClientId) -> Result<u16, String> {
        self.linked
            .lock()
            .unwrap()
            .get(client_id.as_str())
            .copied()
            .ok_or_else(|| "not linked".to_string())
    }

    /// Arms `fault` `count` times for the session's device.
    fn arm(
        &self,
        client_id: &ClientId,
        fault: parley_wire_network::faults::Fault,
        count: u32,
    ) -> Result<(), String> {
        let device = self.linked_device(client_id)?;
        self.net.arm_fault(&self.phone.phone, device, fault, count);
        Ok(())
    }

    /// Waits up to [`SALT_WAIT`] until the adapter stored the session's
    /// privacy-token salt.
    async fn salt_stored(&self, client_id: &ClientId) -> Result<(), String> {
        use parley_shared::db::ConnectionTrait;
        let until = tokio::time::Instant::now() + SALT_WAIT;
        loop {
            let conn = self.db.conn();
            let row = conn
                .query_one_raw(sea_orm::Statement::from_sql_and_values(
                    conn.get_database_backend(),
                    "SELECT nct_salt FROM wa_devices WHERE client_id = ?",
                    [client_id.as_str().into()],
                ))
                .await
                .map_err(|e| e.to_string())?;
            let salt: Option<Vec<u8>> = row.and_then(|r| r.try_get("", "nct_salt").ok());
            if salt.is_some() {
                return Ok(());
            }
            if tokio::time::Instant::now() >= until {
                return Err(format!("no salt stored within {SALT_WAIT:?}"));
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}

/// How long a linked session may take to have its account's salt: it comes
/// by app state once the phone shared the app-state key, after the session
/// uploaded its keys; a few seconds, more on a loaded machine (a CI run of
/// the suite two tests at a time once took over 10 s).
const SALT_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

#[async_trait]
impl Counterpart for Wire {
    async fn scan(&self, client_id: &ClientId, code: &str, phone: &str) -> Result<(), String> {
        if phone != self.phone.phone {
            return Err(format!("no test phone {phone}"));
        }
        let linked = self.phone.scan(&self.net, code);
        self.remember(client_id.as_str(), linked)
    }

    async fn enter_code(
        &self,
        client_id: &ClientId,
        code: &str,
        phone: &str,
    ) -> Result<(), String> {
        if phone != self.phone.phone {
            return Err(format!("no test phone {phone}"));
        }
        let linked = self.phone.enter_code(&self.net, code).await;
        self.remember(client_id.as_str(), linked)
    }

    async fn write(&self, _client_id: &ClientId, from: &str, text: &str) -> Result<(), String> {
        if from != self.contact.phone {
            return Err(format!("no test contact {from}"));
        }
        self.contact
            .send_text(&self.phone.jid(), text)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    async fn carried(
        &self,
        _client_id: &ClientId,
        message_id: &str,
    ) -> Result<Option<Carried>, String> {
        let got = self
            .contact
            .wait_for(DEADLINE, |r| r.id == message_id)
            .await;
        Ok(got.map(|r| Carried {
            to: self.contact.jid(),
            body: r.text.unwrap_or_default(),
            message_id: r.id,
        }))
    }

    async fn unlink(&self, client_id: &ClientId) -> Result<(), String> {
        let device = self.linked_device(client_id)?;
        self.net.unlink(&self.phone.phone, device);
        Ok(())
    }

    async fn refuse_sends(&self, client_id: &ClientId, count: u32) -> Result<(), String> {
        self.arm(client_id, parley_wire_network::faults::Fault::Send, count)
    }

    async fn refuse_without_token(&self, client_id: &ClientId, count: u32) -> Result<(), String> {
        // A device still without its account's salt (it comes by app state
        // just after linking) sends a refused first message again once the
        // salt arrives: the refusal is the session's only once it has it.
        self.salt_stored(client_id).await?;
        self.arm(client_id, parley_wire_network::faults::Fault::Token, count)
    }

    async fn profile(&self, phone: &str, about: &str, avatar: Avatar) -> Result<(), String> {
        let for_contacts = matches!(avatar, Avatar::ForContacts(_));
        let avatar = match avatar {
            Avatar::None => parley_wire_network::Avatar::None,
            Avatar::Hidden => parley_wire_network::Avatar::Hidden,
            Avatar::Image(data) | Avatar::ForContacts(data) => {
                parley_wire_network::Avatar::Image(data)
            }
        };
        self.net.set_profile(phone, about, avatar);
        self.net.set_picture_for_contacts(phone, for_contacts);
        Ok(())
    }

    async fn history(&self, past: SandboxHistory) -> Result<(), String> {
        if past.phone != self.phone.phone {
            return Err(format!("no test phone {}", past.phone));
        }
        self.phone.set_history(past.messages);
        let lid_of = |phone: &str| {
            self.net
                .lid_of(phone)
                .unwrap_or_else(|| parley_network_sandbox::store::derive_lid(phone, 0))
        };
        self.phone
            .set_labels(&self.net, past.labels, &lid_of)
            .map_err(|e| e.to_string())
    }

    async fn name(&self, phone: &str, name: &str) -> Result<(), String> {
        self.net.set_push_name(phone, name);
        Ok(())
    }
}

pub struct Fixture {
    pub wire: Wire,
    pub network: WhatsappNetwork,
    _dir: tempfile::TempDir,
}

pub async fn fixture(client_id: &str) -> Fixture {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            std::env::var("RUST_LOG").unwrap_or_else(|_| "warn,parley_wire_network=debug".into()),
        )
        .with_test_writer()
        .try_init();
    let net = WireNetwork::start().await.expect("test network");
    let phone = TestDevice::start(&net, PHONE, "Phone")
        .await
        .expect("phone");
    let contact = TestDevice::start(&net, CONTACT, "Contact")
        .await
        .expect("contact");
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("parley.db").display());
    let db = Db::connect(&url).await.expect("open SQLite");
    db.migrate().await.expect("migrate");
    let new = NewSession {
        client_id: client_id.into(),
        ..NewSession::default()
    };
    db.create_session(new).await.expect("session");
    // Owned under fence 1; the suite's reconnect comes with fence 2, which may write.
    assert!(
        db.fenced_update(client_id, 1, StatePatch::default())
            .await
            .expect("claim")
    );
    let network = WhatsappNetwork::new(db.clone(), None)
        .expect("adapter")
        .with_ws_url(net.url())
        .expect("a loopback URL");
    Fixture {
        wire: Wire {
            net,
            phone,
            contact,
            linked: Mutex::new(HashMap::new()),
            db,
        },
        network,
        _dir: dir,
    }
}

pub fn subject<'a>(f: &'a Fixture, client_id: &'a str) -> Subject<'a> {
    Subject {
        network: &f.network,
        counterpart: &f.wire,
        client_id: client_id_of(client_id),
    }
}

impl Wire {
    /// The device number the session `client_id` was linked as.
    pub fn device_of(&self, client_id: &str) -> u16 {
        self.linked_device(&client_id_of(client_id))
            .expect("the session is linked")
    }

    /// Notes which device the phone linked for `client_id`.
    fn remember(
        &self,
        client_id: &str,
        linked: anyhow::Result<parley_wire_network::LinkedDevice>,
    ) -> Result<(), String> {
        let device = linked.map_err(|e| e.to_string())?.device;
        self.linked
            .lock()
            .unwrap()
            .insert(client_id.to_string(), device);
        Ok(())
    }
}

/// A test's `clientId`.
pub fn client_id_of(raw: &str) -> ClientId {
    ClientId::parse(raw).expect("a clientId")
}

pub fn ctx(client_id: &str) -> SessionContext {
    SessionContext {
        client_id: client_id_of(client_id),
        fence: 1,
        pod_name: "wire".into(),
        proxy: None,
    }
}

pub async fn next(events: &mut Receiver<NetworkEvent>, what: &str) -> NetworkEvent {
    loop {
        match tokio::time::timeout(DEADLINE, events.recv()).await {
            Ok(Some(NetworkEvent::Qr { .. } | NetworkEvent::Message(_))) => continue,
            Ok(Some(event)) => return event,
            Ok(None) => panic!("the events ended while waiting for {what}"),
            Err(_) => panic!("no {what} within {DEADLINE:?}"),
        }
    }
}

/// The message `id` on the session's events, skipping the others.
pub async fn message(events: &mut Receiver<NetworkEvent>, id: &str) -> Box<InboundMessage> {
    loop {
        match tokio::time::timeout(DEADLINE, events.recv()).await {
            // (A receipt names the message it is about: not it.)
            Ok(Some(NetworkEvent::Message(m))) if m.id == id && !m.content.is_notice() => {
                return m;
            }
            Ok(Some(_)) => continue,
            other => panic!("no message {id}: {other:?}"),
        }
    }
}

/// A session paired by QR and online; its device number.
pub async fn online(
    f: &Fixture,
    client_id: &str,
) -> (Box<dyn Connection>, Receiver<NetworkEvent>, u16) {
    let (conn, mut events) = f.network.connect(ctx(client_id)).await.expect("connect");
    let code = match tokio::time::timeout(DEADLINE, events.recv()).await {
        Ok(Some(NetworkEvent::Qr { code })) => code,
        other => panic!("expected a QR code, got {other:?}"),
    };
    f.wire
        .scan(&client_id_of(client_id), &code, PHONE)
        .await
        .expect("scan");
    assert!(matches!(
        next(&mut events, "the pairing").await,
        NetworkEvent::Paired(_)
    ));
    assert!(matches!(
        next(&mut events, "the connection").await,
        NetworkEvent::Connected(_)
    ));
    let device = f.wire.device_of(client_id);
    (conn, events, device)
}
