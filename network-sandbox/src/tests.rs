//! Unit tests of the sandbox network over a real, migrated SQLite database.
use std::time::Duration;

use crate::store::{PhonePatch, SandboxDevice, Store};
use chrono::Utc;
use parley_contract::command::Reply;

use crate::ops::SandboxOp;
use parley_shared::db::Db;
use tokio::sync::mpsc;

use super::SandboxNetwork;
use parley_network::{
    ClientId, Connection, DisconnectReason, Identity, Network, NetworkError, NetworkEvent,
    PhoneNumber, SessionContext,
};

mod contract;
mod sends;

/// How long a test waits for an event before failing.
const DEADLINE: Duration = Duration::from_secs(5);

const PHONE: &str = "4915112345678";

struct Fixture {
    network: SandboxNetwork,
    db: Store,
    _dir: tempfile::TempDir,
}

async fn fixture(qr_first: Duration, qr_next: Duration) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("sandbox.db").display());
    let db = Db::connect(&url).await.expect("open SQLite");
    db.migrate().await.expect("migrate");
    Fixture {
        network: SandboxNetwork::new(db.clone(), qr_first, qr_next),
        db: Store::new(db),
        _dir: dir,
    }
}

/// QR codes that rotate fast enough for a test to see it.
async fn rotating() -> Fixture {
    fixture(Duration::from_millis(100), Duration::from_millis(100)).await
}

/// QR codes that stay put for the whole test.
async fn steady() -> Fixture {
    fixture(Duration::from_secs(600), Duration::from_secs(600)).await
}

fn ctx(client_id: &str, fence: u64) -> SessionContext {
    SessionContext {
        client_id: ClientId::parse(client_id).expect("a clientId"),
        fence,
        pod_name: format!("pod-{fence}"),
        proxy: None,
    }
}

type Events = mpsc::Receiver<NetworkEvent>;

async fn next(events: &mut Events) -> Option<NetworkEvent> {
    tokio::time::timeout(DEADLINE, events.recv())
        .await
        .expect("an event before the deadline")
}

async fn next_qr(events: &mut Events) -> String {
    match next(events).await {
        Some(NetworkEvent::Qr { code }) => code,
        other => panic!("expected a QR code, got {other:?}"),
    }
}

async fn connect(f: &Fixture, client_id: &str, fence: u64) -> (Box<dyn Connection>, Events) {
    f.network
        .connect(ctx(client_id, fence))
        .await
        .expect("connect")
}

fn phone(digits: &str) -> PhoneNumber {
    PhoneNumber::from_digits(digits).expect("a phone number")
}

fn link(digits: &str, qr: Option<String>) -> SandboxOp {
    SandboxOp::Link {
        phone: phone(digits),
        name: "Alice".into(),
        qr,
    }
}

/// Links a pairing session by QR and returns its identity (after both events).
async fn linked(f: &Fixture, client_id: &str, events: &mut Events) -> Identity {
    let reply = f.network.control(client_id, link(PHONE, None)).await;
    assert!(matches!(reply, Ok(Reply::Linked { .. })), "{reply:?}");
    let Some(NetworkEvent::Paired(identity)) = next(events).await else {
        panic!("expected Paired");
    };
    assert_eq!(
        next(events).await,
        Some(NetworkEvent::Connected(identity.clone()))
    );
    identity
}

fn status(outcome: parley_contract::command::Outcome) -> u16 {
    match outcome {
        Ok(reply) => panic!("expected an error, got {reply:?}"),
        Err(e) => e.status,
    }
}

#[tokio::test]
async fn qr_is_shown_at_once_and_rotated() {
    let f = rotating().await;
    let (_conn, mut events) = connect(&f, "c1", 1).await;
    let first = next_qr(&mut events).await;
    assert!(first.starts_with("2@") && first.ends_with(",c1"));
    let second = next_qr(&mut events).await;
    let third = next_qr(&mut events).await;
    assert!(first != second && second != third && first != third);
    assert_eq!(f.db.qr_owner(&first).await.expect("db"), None);
}

#[tokio::test]
async fn current_qr_resolves_to_its_session() {
    let f = fixture(Duration::from_millis(100), Duration::from_secs(600)).await;
    let (_conn, mut events) = connect(&f, "c1", 1).await;
    let first = next_qr(&mut events).await;
    let second = next_qr(&mut events).await;
    assert_eq!(
        f.db.qr_owner(&second).await.expect("db").as_deref(),
        Some("c1")
    );
    assert_eq!(f.db.current_qr("c1").await.expect("db"), Some(second));
    assert_eq!(f.db.qr_owner(&first).await.expect("db"), None);
}

#[tokio::test]
async fn stale_qr_is_refused_and_current_one_links() {
    let f = rotating().await;
    let (_conn, mut events) = connect(&f, "c1", 1).await;
    let stale = next_qr(&mut events).await;
    let _ = next_qr(&mut events).await;
    let refused = f.network.control("c1", link(PHONE, Some(stale))).await;
    assert_eq!(status(refused), 400);

    let f = steady().await;
    let (_conn, mut events) = connect(&f, "c2", 1).await;
    let current = next_qr(&mut events).await;
    let reply = f
        .network
        .control("c2", link(PHONE, Some(current.clone())))
        .await;
    assert!(matches!(reply, Ok(Reply::Linked { .. })), "{reply:?}");
    assert_eq!(f.db.qr_owner(&current).await.expect("db"), None);
}

#[tokio::test]
async fn link_pairs_and_a_new_connection_comes_back_linked() {
    let f = steady().await;
    let (conn, mut events) = connect(&f, "c1", 1).await;
    next_qr(&mut events).await;
    let identity = linked(&f, "c1", &mut events).await;
    assert_eq!(identity.jid, format!("{PHONE}:1@s.whatsapp.net"));
    assert_eq!(identity.push_name, "Alice");
    let phone = f.db.phone(PHONE).await.expect("db").expect("registered");
    assert_eq!(identity.lid, phone.lid);

    conn.close().await;
    assert_eq!(
        next(&mut events).await,
        None,
        "closed connection ends its events"
    );
    let (_again, mut events) = connect(&f, "c1", 2).await;
    assert_eq!(
        next(&mut events).await,
        Some(NetworkEvent::Connected(identity))
    );
}

#[tokio::test]
async fn second_device_of_a_phone_gets_the_next_number() {
    let f = steady().await;
    let (_a, mut a) = connect(&f, "c1", 1).await;
    next_qr(&mut a).await;
    linked(&f, "c1", &mut a).await;
    let (_b, mut b) = connect(&f, "c2", 1).await;
    next_qr(&mut b).await;
    let identity = linked(&f, "c2", &mut b).await;
    assert_eq!(identity.jid, format!("{PHONE}:2@s.whatsapp.net"));
}

#[tokio::test]
async fn link_refuses_linked_sessions_and_unknown_connections() {
    let f = steady().await;
    assert_eq!(
        status(f.network.control("c1", link(PHONE, None)).await),
        409
    );
    let (_conn, mut events) = connect(&f, "c1", 1).await;
    next_qr(&mut events).await;
    linked(&f, "c1", &mut events).await;
    assert_eq!(
        status(f.network.control("c1", link(PHONE, None)).await),
        409
    );
}

#[tokio::test]
async fn pair_code_links_as_the_phone_and_wrong_codes_are_refused() {
    let f = steady().await;
    let (conn, mut events) = connect(&f, "c1", 1).await;
    next_qr(&mut events).await;
    let code = conn
        .pair_phone(&phone("4917700000001"))
        .await
        .expect("code");
    assert_eq!(code.len(), 8);
    let wrong = SandboxOp::EnterCode {
        code: "WRONG123".into(),
    };
    assert_eq!(status(f.network.control("c1", wrong).await), 400);
    let typed = format!("{}-{}", &code[..4], code[4..].to_lowercase());
    let reply = f
        .network
        .control("c1", SandboxOp::EnterCode { code: typed })
        .await;
    let Ok(Reply::Linked { jid, .. }) = reply else {
        panic!("expected Linked, got {reply:?}");
    };
    assert_eq!(jid, "4917700000001:1@s.whatsapp.net");
    assert!(matches!(
        next(&mut events).await,
        Some(NetworkEvent::Paired(_))
    ));
    assert!(matches!(
        next(&mut events).await,
        Some(NetworkEvent::Connected(_))
    ));
    // Paired: no code waits any more, so the used one is wrong (spec: 400).
    let again = SandboxOp::EnterCode { code };
    assert_eq!(status(f.network.control("c1", again).await), 400);
    assert_eq!(
        conn.pair_phone(&phone("4917700000001")).await,
        Err(NetworkError::Rejected("already paired".into()))
    );
}

#[tokio::test]
async fn expired_pair_code_is_refused() {
    let f = steady().await;
    let (conn, mut events) = connect(&f, "c1", 1).await;
    next_qr(&mut events).await;
    let code = conn.pair_phone(&phone(PHONE)).await.expect("code");
    let taken =
        f.db.take_pair_code("c1", &code, Duration::ZERO)
            .await
            .expect("db");
    assert_eq!(taken, None);
    let late = SandboxOp::EnterCode { code };
    assert_eq!(status(f.network.control("c1", late).await), 400);
}

#[tokio::test]
async fn pair_code_fault_rejects_once() {
    let f = steady().await;
    let (conn, mut events) = connect(&f, "c1", 1).await;
    next_qr(&mut events).await;
    let fault = SandboxOp::Fault {
        op: "pair-code".into(),
        count: 1,
    };
    assert_eq!(f.network.control("c1", fault).await, Ok(Reply::Done));
    assert_eq!(
        conn.pair_phone(&phone(PHONE)).await,
        Err(NetworkError::Rejected("no code issued".into()))
    );
    assert!(conn.pair_phone(&phone(PHONE)).await.is_ok());
}

#[tokio::test]
async fn logout_fault_keeps_the_device_then_logout_removes_it() {
    let f = steady().await;
    let (conn, mut events) = connect(&f, "c1", 1).await;
    next_qr(&mut events).await;
    linked(&f, "c1", &mut events).await;
    let fault = SandboxOp::Fault {
        op: "logout".into(),
        count: 1,
    };
    assert_eq!(f.network.control("c1", fault).await, Ok(Reply::Done));
    assert!(matches!(
        conn.logout().await,
        Err(NetworkError::Rejected(_))
    ));
    assert!(f.db.sandbox_device("c1").await.expect("db").is_some());
    assert_eq!(conn.logout().await, Ok(()));
    assert!(f.db.sandbox_device("c1").await.expect("db").is_none());
    assert_eq!(next(&mut events).await, None);
}

#[tokio::test]
async fn unknown_fault_is_refused_and_armed_faults_are_counted() {
    let f = steady().await;
    let unknown = SandboxOp::Fault {
        op: "explode".into(),
        count: 1,
    };
    assert_eq!(status(f.network.control("c1", unknown).await), 400);
    let send = SandboxOp::Fault {
        op: "send".into(),
        count: 2,
    };
    assert_eq!(f.network.control("c1", send).await, Ok(Reply::Done));
    for expected in [true, true, false] {
        assert_eq!(
            f.db.consume_fault("c1", "send").await.expect("db"),
            expected
        );
    }
}

#[tokio::test]
async fn drop_ends_the_connection_as_lost_and_keeps_the_device() {
    let f = steady().await;
    let (_conn, mut events) = connect(&f, "c1", 1).await;
    next_qr(&mut events).await;
    let identity = linked(&f, "c1", &mut events).await;
    let drop = SandboxOp::Fault {
        op: "drop".into(),
        count: 1,
    };
    assert_eq!(f.network.control("c1", drop.clone()).await, Ok(Reply::Done));
    assert_eq!(
        next(&mut events).await,
        Some(NetworkEvent::Disconnected(DisconnectReason::ConnectionLost))
    );
    assert_eq!(next(&mut events).await, None);
    assert_eq!(status(f.network.control("c1", drop).await), 409);
    let (_again, mut events) = connect(&f, "c1", 1).await;
    assert_eq!(
        next(&mut events).await,
        Some(NetworkEvent::Connected(identity))
    );
}

fn contact_text() -> SandboxOp {
    SandboxOp::Message(Box::new(crate::injected::InjectedMessage {
        from: "4915198765432".into(),
        chat: None,
        message_id: None,
        quoted_message_id: None,
        mentions: vec![],
        is_forwarded: false,
        content: crate::injected::InjectedContent::Text { body: "hi".into() },
    }))
}

#[tokio::test]
async fn a_message_to_a_pairing_session_is_409_and_to_a_dropped_one_503() {
    let f = steady().await;
    let (_conn, mut events) = connect(&f, "c1", 1).await;
    next_qr(&mut events).await;
    // Not linked: no phone to write to.
    assert_eq!(status(f.network.control("c1", contact_text()).await), 409);
    linked(&f, "c1", &mut events).await;
    assert!(matches!(
        f.network.control("c1", contact_text()).await,
        Ok(Reply::MessageId { .. })
    ));
    let drop = SandboxOp::Fault {
        op: "drop".into(),
        count: 1,
    };
    assert_eq!(f.network.control("c1", drop).await, Ok(Reply::Done));
    // Linked, its connection down for a moment: retry once it is back.
    let refused = f.network.control("c1", contact_text()).await.unwrap_err();
    assert_eq!(refused.status, 503, "{refused:?}");
    assert!(refused.message.contains("retry"), "{refused:?}");
}

#[tokio::test]
async fn unlink_logs_the_session_out() {
    let f = steady().await;
    let (_conn, mut events) = connect(&f, "c1", 1).await;
    next_qr(&mut events).await;
    assert_eq!(
        status(f.network.control("c1", SandboxOp::Unlink).await),
        409
    );
    linked(&f, "c1", &mut events).await;
    assert_eq!(
        f.network.control("c1", SandboxOp::Unlink).await,
        Ok(Reply::Done)
    );
    assert_eq!(
        next(&mut events).await,
        Some(NetworkEvent::Disconnected(DisconnectReason::LoggedOut))
    );
    assert_eq!(next(&mut events).await, None);
    assert!(f.db.sandbox_device("c1").await.expect("db").is_none());
    let (_again, mut events) = connect(&f, "c1", 2).await;
    next_qr(&mut events).await;
}

#[tokio::test]
async fn connection_log_records_open_and_closed_connections() {
    let f = steady().await;
    let (conn, mut events) = connect(&f, "c1", 7).await;
    let code = next_qr(&mut events).await;
    let log = f.db.sandbox_connections("c1").await.expect("db");
    assert_eq!(log.len(), 1);
    assert_eq!((log[0].pod_name.as_str(), log[0].fence), ("pod-7", 7));
    assert_eq!(log[0].closed_at, None);
    conn.close().await;
    let log = f.db.sandbox_connections("c1").await.expect("db");
    assert!(log[0].closed_at.is_some());
    assert_eq!(f.db.qr_owner(&code).await.expect("db"), None);
    assert_eq!(next(&mut events).await, None);
}

#[tokio::test]
async fn dropped_connection_is_closed_in_the_background() {
    let f = steady().await;
    let (conn, mut events) = connect(&f, "c1", 1).await;
    next_qr(&mut events).await;
    drop(conn);
    assert_eq!(next(&mut events).await, None);
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let log = f.db.sandbox_connections("c1").await.expect("db");
        if log[0].closed_at.is_some() {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "log row not closed");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_new_connection_replaces_the_previous_one() {
    let f = steady().await;
    let (_old, mut old) = connect(&f, "c1", 1).await;
    next_qr(&mut old).await;
    let (_new, mut new) = connect(&f, "c1", 2).await;
    let code = next_qr(&mut new).await;
    assert_eq!(
        next(&mut old).await,
        Some(NetworkEvent::Disconnected(DisconnectReason::StreamReplaced))
    );
    assert_eq!(next(&mut old).await, None);
    assert_eq!(
        f.db.qr_owner(&code).await.expect("db").as_deref(),
        Some("c1")
    );
}

#[tokio::test]
async fn forget_removes_the_device() {
    let f = steady().await;
    let (conn, mut events) = connect(&f, "c1", 1).await;
    next_qr(&mut events).await;
    linked(&f, "c1", &mut events).await;
    conn.close().await;
    f.network
        .forget(&ClientId::parse("c1").unwrap())
        .await
        .expect("forget");
    let (_again, mut events) = connect(&f, "c1", 2).await;
    next_qr(&mut events).await;
}

#[tokio::test]
async fn device_writes_with_a_stale_fence_are_rejected() {
    let f = steady().await;
    let device = |fence: u64, push_name: &str| SandboxDevice {
        client_id: "c1".into(),
        phone: PHONE.into(),
        device: 1,
        jid: format!("{PHONE}:1@s.whatsapp.net"),
        lid: "100000000000001".into(),
        push_name: push_name.into(),
        fence,
        linked_at: Utc::now(),
    };
    assert!(
        f.db.put_sandbox_device(&device(5, "new"))
            .await
            .expect("db")
    );
    assert!(
        !f.db
            .put_sandbox_device(&device(3, "old"))
            .await
            .expect("db")
    );
    assert!(
        f.db.put_sandbox_device(&device(5, "same"))
            .await
            .expect("db")
    );
    let stored = f.db.sandbox_device("c1").await.expect("db").expect("row");
    assert_eq!((stored.push_name.as_str(), stored.fence), ("same", 5));
}

#[tokio::test]
async fn lids_are_fifteen_digits_stable_and_distinct_per_phone() {
    let f = steady().await;
    let a =
        f.db.upsert_phone(PHONE, PhonePatch::default())
            .await
            .expect("db");
    assert_eq!(a.lid.len(), 15);
    assert!(a.lid.bytes().all(|b| b.is_ascii_digit()) && !a.lid.starts_with('0'));
    let patch = PhonePatch {
        name: Some("Alice".into()),
        avatar: Some("aGVsbG8=".into()),
        ..Default::default()
    };
    let again = f.db.upsert_phone(PHONE, patch).await.expect("db");
    assert_eq!(again.lid, a.lid);
    assert_eq!(again.name, "Alice");
    assert!(!again.picture_id.is_empty());
    let b =
        f.db.upsert_phone("4915112345679", PhonePatch::default())
            .await
            .expect("db");
    assert_ne!(a.lid, b.lid);
    assert_eq!(b.jid(), "4915112345679@s.whatsapp.net");
}

#[tokio::test]
async fn lid_collision_derives_the_next_lid() {
    use crate::store::derive_lid;
    use parley_shared::db::ConnectionTrait;
    let f = steady().await;
    let taken = derive_lid(PHONE, 0);
    let sql = format!("INSERT INTO sandbox_phones (phone, lid) VALUES ('111111111', '{taken}')");
    f.db.db()
        .conn()
        .execute_unprepared(&sql)
        .await
        .expect("insert");
    let phone =
        f.db.upsert_phone(PHONE, PhonePatch::default())
            .await
            .expect("db");
    assert_eq!(phone.lid, derive_lid(PHONE, 1));
}
