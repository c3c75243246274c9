//! Test doubles and a test world: a scriptable network that counts drivers per
//! session, a lease store whose renewals can be blocked or refused, a sandbox
//! control, and in-process ports over a fresh SQLite database.
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use parley_contract::command::{CallError, Command, Outcome, Reply};
use parley_model::ids::ClientId;
use parley_network_sandbox::ops::SandboxOp;
use parley_shared::bus::commands;
use parley_shared::bus::memory::MemoryBus;
use parley_shared::db::{Db, NewSession, SessionRow};
use parley_shared::egress::Egress;
use parley_shared::media::MediaStore;
use parley_shared::media::fs::FsMediaStore;
use tokio::sync::mpsc;

use super::{Supervisor, Wiring};
use crate::events::EventPipeline;
use parley_model::media::MediaDownload;

use crate::network::{
    ByteStream, CallRef, Connection, CreatedGroup, GroupMetadata, Identity, Jid, Label, MediaKind,
    MessageId, MessageRef, Network, NetworkError, NetworkEvent, NumberCheck, Outgoing,
    ParticipantAction, ParticipantChange, PhoneNumber, Picture, PictureFile, PictureLookup,
    QueryError, SentMessage, SessionContext, UserInfo, unsupported,
};
use crate::send::download::{Fetcher, Limits};
use crate::session::{NetworkControl, Timing};
use crate::webhook::RetryPolicy;
use parley_model::inbound::{Content, InboundMessage};

mod bus;
mod leases;
pub use bus::LosableBus;
pub use leases::TestLeases;

/// Short delays so tests run in well under a second each.
pub fn fast_timing() -> Timing {
    Timing {
        lease_ttl: Duration::from_millis(2000),
        renew_every: Duration::from_millis(400),
        fence_margin: Duration::from_millis(400),
        sweep_every: Duration::from_millis(50),
        // Long: most tests run no presence loop (a claim announces once).
        member_ttl: Duration::from_secs(60),
        member_every: Duration::from_millis(100),
        // Most tests answer no probes on the bus: members lapse, or not.
        silent_after: None,
        backoff_min: Duration::from_millis(20),
        backoff_max: Duration::from_millis(200),
        stable_after: Duration::from_secs(1),
        network_timeout: Duration::from_secs(2),
        connect_hold: Duration::from_secs(1),
        rebalance_settle: Duration::from_millis(100),
        rebalance_gap: Duration::ZERO,
        orphan_grace: Duration::from_millis(300),
        request_memory: Duration::from_secs(60),
        request_capacity: 100,
    }
}

/// Downloads allowed to loopback (test servers), with the spec's limits.
pub fn test_fetcher() -> Fetcher {
    Fetcher::new(Egress::direct(true), Limits::SPEC).unwrap()
}

/// An event pipeline without hosted history, delivering to loopback receivers.
pub fn test_events() -> Arc<EventPipeline> {
    let egress = Egress::direct(true);
    EventPipeline::new(egress, RetryPolicy::default(), None, None, None, None, None).unwrap()
}

/// Like [`test_events`], with the event log in `db`.
pub fn logged_events(db: &Db) -> Arc<EventPipeline> {
    announced_events(db, None)
}

/// Like [`logged_events`], announcing each logged event on `feed`.
pub fn announced_events(
    db: &Db,
    feed: Option<Arc<dyn parley_shared::bus::Bus>>,
) -> Arc<EventPipeline> {
    let log = crate::events::EventLog {
        db: db.clone(),
        session_cap: 1_000,
        feed,
    };
    let egress = Egress::direct(true);
    EventPipeline::new(
        egress,
        RetryPolicy::default(),
        Some(log),
        None,
        None,
        None,
        None,
    )
    .unwrap()
}

/// Polls `check` every 20 ms until it holds; panics after 10 s.
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A test's `clientId`.
pub fn cid(raw: &str) -> ClientId {
    ClientId::parse(raw).expect("a clientId")
}

/// The identity a fake phone links as.
pub fn identity(phone: &str) -> Identity {
    Identity {
        jid: Jid::parse(&format!("{phone}:1@s.whatsapp.net")).expect("a test phone's JID"),
        lid: format!("lid{phone}"),
        push_name: "Tester".into(),
    }
}

/// A network in memory. Tracks live connections per session, and the most
/// that were ever live at once (two would mean two drivers).
#[derive(Clone, Default)]
pub struct FakeNetwork {
    state: Arc<Mutex<NetState>>,
}

#[derive(Default)]
struct NetState {
    next_id: u64,
    unreachable: bool,
    fail_logout: bool,
    pair_calls: u32,
    connects: HashMap<String, u32>,
    linked: HashMap<String, Identity>,
    live: HashMap<String, Vec<(u64, mpsc::Sender<NetworkEvent>)>>,
    most_live: HashMap<String, usize>,
    forgotten: Vec<String>,
    /// Each received message's acknowledgement: (clientId, message id, outcome).
    acks: Vec<(String, String, Result<(), String>)>,
}

impl FakeNetwork {
    fn state(&self) -> MutexGuard<'_, NetState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn set_unreachable(&self, on: bool) {
        self.state().unreachable = on;
    }

    pub fn set_fail_logout(&self, on: bool) {
        self.state().fail_logout = on;
    }

    pub fn connects(&self, client_id: &ClientId) -> u32 {
        self.state()
            .connects
            .get(client_id.as_str())
            .copied()
            .unwrap_or(0)
    }

    /// Connections of `client_id` open now.
    pub fn drivers(&self, client_id: &ClientId) -> usize {
        self.state()
            .live
            .get(client_id.as_str())
            .map_or(0, Vec::len)
    }

    /// The most connections of any one session that were ever open at once.
    pub fn most_drivers(&self) -> usize {
        self.state().most_live.values().copied().max().unwrap_or(0)
    }

    pub fn pair_calls(&self) -> u32 {
        self.state().pair_calls
    }

    /// The acknowledgements the sessions gave received messages, in order.
    pub fn acks(&self) -> Vec<(String, String, Result<(), String>)> {
        self.state().acks.clone()
    }

    pub fn forgotten(&self) -> Vec<String> {
        self.state().forgotten.clone()
    }

    /// The phone links the session (QR scan): it is paired from now on,
    /// and online right after (as the port's contract has it).
    pub async fn link(&self, client_id: &ClientId, phone: &str) {
        self.state()
            .linked
            .insert(client_id.to_string(), identity(phone));
        self.emit(client_id, NetworkEvent::Paired(identity(phone)))
            .await;
        self.emit(client_id, NetworkEvent::Connected(identity(phone)))
            .await;
    }

    /// Sends an event on every open connection of `client_id`.
    pub async fn emit(&self, client_id: &ClientId, event: NetworkEvent) {
        let senders: Vec<_> = self
            .state()
            .live
            .get(client_id.as_str())
            .map(|l| l.iter().map(|(_, tx)| tx.clone()).collect())
            .unwrap_or_default();
        for tx in senders {
            let _ = tx.send(event.clone()).await;
        }
    }
}

#[async_trait]
impl Network for FakeNetwork {
    async fn connect(
        &self,
        ctx: SessionContext,
    ) -> Result<(Box<dyn Connection>, mpsc::Receiver<NetworkEvent>), NetworkError> {
        let mut state = self.state();
        *state.connects.entry(ctx.client_id.to_string()).or_default() += 1;
        if state.unreachable {
            return Err(NetworkError::Unreachable("fake network down".into()));
        }
        state.next_id += 1;
        let id = state.next_id;
        let (tx, rx) = mpsc::channel(16);
        let first = match state.linked.get(ctx.client_id.as_str()) {
            Some(identity) => NetworkEvent::Connected(identity.clone()),
            None => NetworkEvent::Qr {
                code: format!("qr-{}-{id}", ctx.client_id),
            },
        };
        let _ = tx.try_send(first);
        let live = state.live.entry(ctx.client_id.to_string()).or_default();
        live.push((id, tx));
        let count = live.len();
        let most = state
            .most_live
            .entry(ctx.client_id.to_string())
            .or_default();
        *most = (*most).max(count);
        let connection = FakeConnection {
            client_id: ctx.client_id,
            id,
            network: self.clone(),
        };
        Ok((Box::new(connection), rx))
    }

    async fn forget(&self, client_id: &ClientId) -> Result<(), NetworkError> {
        let mut state = self.state();
        state.linked.remove(client_id.as_str());
        state.forgotten.push(client_id.to_string());
        Ok(())
    }
}

struct FakeConnection {
    client_id: ClientId,
    id: u64,
    network: FakeNetwork,
}

#[async_trait]
impl Connection for FakeConnection {
    async fn pair_phone(&self, _phone: &PhoneNumber) -> Result<String, NetworkError> {
        self.network.state().pair_calls += 1;
        Ok("ABCD1234".into())
    }

    async fn logout(&self) -> Result<(), NetworkError> {
        let mut state = self.network.state();
        if state.fail_logout {
            return Err(NetworkError::Unreachable("no answer".into()));
        }
        state.linked.remove(self.client_id.as_str());
        Ok(())
    }

    async fn persisted(&self, _chat: &Jid, id: &MessageId, outcome: Result<(), String>) {
        let ack = (self.client_id.to_string(), id.as_str().to_owned(), outcome);
        self.network.state().acks.push(ack);
    }

    async fn close(&self) {
        if let Some(live) = self.network.state().live.get_mut(self.client_id.as_str()) {
            live.retain(|(id, _)| *id != self.id);
        }
    }

    // The supervisor's tests need the lifecycle only: the rest is refused.

    async fn lid_for_phone(&self, _phone: &PhoneNumber) -> Result<Option<String>, NetworkError> {
        Ok(None)
    }
    async fn send(&self, _message: Outgoing) -> Result<SentMessage, NetworkError> {
        Err(unsupported("sending messages"))
    }
    async fn revoke(&self, _chat: &Jid, _target: &MessageRef) -> Result<SentMessage, NetworkError> {
        Err(unsupported("deleting for everyone"))
    }
    async fn delete_for_me(&self, _chat: &Jid, _target: &MessageRef) -> Result<(), NetworkError> {
        Err(unsupported("deleting for me"))
    }
    async fn revoke_status(
        &self,
        _target: &MessageId,
        _audience: &[Jid],
    ) -> Result<SentMessage, NetworkError> {
        Err(unsupported("statuses"))
    }
    async fn typing(&self, _chat: &Jid, _composing: bool) -> Result<(), NetworkError> {
        Err(unsupported("typing indicators"))
    }
    async fn subscribe_presence(&self, _who: &Jid) -> Result<(), NetworkError> {
        Err(unsupported("presence"))
    }
    async fn set_presence(&self, _available: bool) -> Result<(), NetworkError> {
        Err(unsupported("presence"))
    }
    async fn reject_call(&self, _call: &CallRef) -> Result<(), NetworkError> {
        Err(unsupported("calls"))
    }
    async fn mark_read(&self, _chat: &Jid, _ids: &[MessageId]) -> Result<(), NetworkError> {
        Err(unsupported("read receipts"))
    }
    async fn mark_unread(&self, _chat: &Jid) -> Result<(), NetworkError> {
        Err(unsupported("marking chats unread"))
    }
    async fn save_label(&self, _label: &Label) -> Result<(), NetworkError> {
        Err(unsupported("labels"))
    }
    async fn delete_label(&self, _label_id: &str) -> Result<(), NetworkError> {
        Err(unsupported("labels"))
    }
    async fn label_chat(
        &self,
        _chat: &Jid,
        _label_id: &str,
        _labeled: bool,
    ) -> Result<(), NetworkError> {
        Err(unsupported("labels"))
    }
    async fn download_media(
        &self,
        _kind: MediaKind,
        _media: &MediaDownload,
        _max_bytes: u64,
    ) -> Result<ByteStream, NetworkError> {
        Err(unsupported("downloading media"))
    }
    async fn user_info(&self, _jid: &Jid) -> Result<Option<UserInfo>, QueryError> {
        Err(unsupported("user info").into())
    }
    async fn check_number(&self, _phone: &PhoneNumber) -> Result<NumberCheck, QueryError> {
        Err(unsupported("number checks").into())
    }
    async fn profile_picture(
        &self,
        _jid: &Jid,
        _preview: bool,
    ) -> Result<PictureLookup, QueryError> {
        Err(unsupported("profile pictures").into())
    }
    async fn download_picture(&self, _picture: &Picture) -> Result<PictureFile, QueryError> {
        Err(unsupported("profile picture downloads").into())
    }
    async fn groups(&self) -> Result<Vec<GroupMetadata>, QueryError> {
        Err(unsupported("groups").into())
    }
    async fn group_metadata(&self, _group: &Jid) -> Result<GroupMetadata, QueryError> {
        Err(unsupported("groups").into())
    }
    async fn create_group(
        &self,
        _subject: &str,
        _participants: &[Jid],
    ) -> Result<CreatedGroup, QueryError> {
        Err(unsupported("creating groups").into())
    }
    async fn update_participants(
        &self,
        _group: &Jid,
        _action: ParticipantAction,
        _participants: &[Jid],
    ) -> Result<Vec<ParticipantChange>, QueryError> {
        Err(unsupported("group member updates").into())
    }
    async fn invite_link(&self, _group: &Jid, _reset: bool) -> Result<String, QueryError> {
        Err(unsupported("group invite links").into())
    }
    async fn leave_group(&self, _group: &Jid) -> Result<(), QueryError> {
        Err(unsupported("leaving groups").into())
    }
}

/// Sandbox controls over the fake network: `link` pairs the session.
pub struct FakeSandbox(pub FakeNetwork);

#[async_trait]
impl NetworkControl for FakeSandbox {
    async fn control(&self, client_id: &ClientId, request: serde_json::Value) -> Outcome {
        match SandboxOp::read(request)? {
            SandboxOp::Link { phone, .. } => {
                self.0.link(client_id, phone.as_str()).await;
                Ok(Reply::Linked {
                    jid: identity(phone.as_str()).jid.into_string(),
                    lid: identity(phone.as_str()).lid,
                })
            }
            SandboxOp::Message(_) => {
                // A text from a contact, whatever was asked: enough to see
                // how the session answers once it is logged (or not).
                let id = format!("SANDBOX{}", uuid::Uuid::new_v4().simple());
                let message = NetworkEvent::Message(Box::new(text_received(&id)));
                self.0.emit(client_id, message).await;
                Ok(Reply::Done)
            }
            _ => Ok(Reply::Done),
        }
    }
}

/// A text a contact sent, with message id `id`.
pub fn text_received(id: &str) -> InboundMessage {
    let contact = Jid::parse("222222222222222@lid").expect("a contact's JID");
    InboundMessage {
        id: MessageId::new(id).expect("a message id"),
        chat: contact.clone(),
        chat_lid: "222222222222222".into(),
        sender: contact,
        sender_phone: Some("4915100000001".into()),
        from_me: false,
        push_name: "Ana".into(),
        group_subject: None,
        timestamp: chrono::Utc::now(),
        content: Content::Text { body: id.into() },
        quoted: None,
        mentions: vec![],
        is_forwarded: false,
    }
}

/// Shared ports for the supervisors of one test.
pub struct World {
    pub db: Db,
    pub bus: MemoryBus,
    pub leases: TestLeases,
    pub network: FakeNetwork,
    _dir: tempfile::TempDir,
}

impl World {
    pub async fn new() -> World {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}", dir.path().join("parley.db").display());
        let db = Db::connect(&url).await.expect("sqlite");
        db.migrate().await.expect("migrations");
        World {
            db,
            bus: MemoryBus::new("test"),
            leases: TestLeases::default(),
            network: FakeNetwork::default(),
            _dir: dir,
        }
    }

    /// A supervisor named `pod` on this world's ports, with a sandbox control.
    pub fn supervisor(&self, pod: &str) -> Supervisor {
        self.supervisor_on(pod, Arc::new(self.network.clone()))
    }

    pub fn supervisor_on(&self, pod: &str, network: Arc<dyn Network>) -> Supervisor {
        Supervisor::new(Wiring {
            db: self.db.clone(),
            bus: Arc::new(self.bus.clone()),
            leases: Arc::new(self.leases.clone()),
            network,
            control: Some(Arc::new(FakeSandbox(self.network.clone()))),
            pod_name: pod.into(),
            timing: fast_timing(),
            media: self.media(),
            fetcher: test_fetcher(),
            events: test_events(),
        })
    }

    /// A media store in this world's directory.
    pub fn media(&self) -> Arc<dyn MediaStore> {
        Arc::new(FsMediaStore::new(
            self._dir.path().join("media"),
            "http://media.test",
        ))
    }

    pub async fn create(&self, client_id: &ClientId) {
        let new = NewSession {
            client_id: client_id.to_string(),
            ..NewSession::default()
        };
        self.db.create_session(new).await.expect("create session");
    }

    pub async fn row(&self, client_id: &ClientId) -> Option<SessionRow> {
        self.db
            .session(client_id.as_str())
            .await
            .expect("read session")
    }

    /// Sends a command to a session's owner with a fresh request id.
    pub async fn send(&self, client_id: &ClientId, command: Command) -> Result<Outcome, CallError> {
        let id = uuid::Uuid::new_v4().to_string();
        self.send_as(client_id, command, &id).await
    }

    pub async fn send_as(
        &self,
        client_id: &ClientId,
        command: Command,
        request_id: &str,
    ) -> Result<Outcome, CallError> {
        let subject = parley_shared::bus::session_subject(client_id.as_str());
        self.call(&subject, &command, request_id).await
    }

    /// Sends `/start` to the workers' queue group.
    pub async fn start(&self, client_id: &ClientId) -> Result<Outcome, CallError> {
        let command = Command::Start {
            client_id: client_id.to_string(),
        };
        self.ask(parley_shared::bus::START_SUBJECT, &command).await
    }

    /// Sends `command` to `subject` with a fresh request id.
    pub async fn ask(&self, subject: &str, command: &Command) -> Result<Outcome, CallError> {
        let id = uuid::Uuid::new_v4().to_string();
        self.call(subject, command, &id).await
    }

    async fn call(
        &self,
        subject: &str,
        command: &Command,
        request_id: &str,
    ) -> Result<Outcome, CallError> {
        let patience = Duration::from_secs(5);
        commands::call(&self.bus, subject, command, request_id, patience).await
    }
}
