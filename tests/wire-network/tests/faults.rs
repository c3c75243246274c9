//! The network's faults on the real adapter: what the server does to a
//! linked session's socket shows as the port's disconnect reasons, and a
//! dropped socket, a stream error asking for a restart or a server error,
//! and logins refused for now come back by themselves, never with two
//! sockets at once.
mod support;

use parley_network::contract::PHONE;
use parley_network::{DisconnectReason, Network, NetworkEvent, SessionContext};
use parley_wire_network::faults::Fault;
use support::{ctx, fixture, next, online};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_stream_disconnects_as_replaced() {
    let f = fixture("f1").await;
    let (_conn, mut events, device) = online(&f, "f1").await;
    assert!(
        f.wire
            .net
            .stream_error(PHONE, device, None, Some("replaced"))
    );
    assert_eq!(
        next(&mut events, "the disconnect").await,
        NetworkEvent::Disconnected(DisconnectReason::StreamReplaced)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_socket_reconnects_with_one_socket_at_a_time() {
    let f = fixture("f2").await;
    let (_conn, mut events, device) = online(&f, "f2").await;
    assert!(f.wire.net.drop_socket(PHONE, device));
    assert_eq!(
        next(&mut events, "the disconnect").await,
        NetworkEvent::Disconnected(DisconnectReason::ConnectionLost)
    );
    assert!(matches!(
        next(&mut events, "the reconnection").await,
        NetworkEvent::Connected(_)
    ));
    assert!(f.wire.net.is_live(PHONE, device));
    assert_eq!(f.wire.net.most_live_sockets(PHONE, device), 1);
}

/// A server that leaves a keepalive unanswered, the socket still open: the
/// adapter's client counts the socket dead (no data within 20 s of its
/// ping: whatsapp-rust `keepalive.rs`) and logs in again on a new socket,
/// by itself (as after a 515, without a `Disconnected` first). Slow: the
/// client pings an idle socket every 15 to 30 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keepalive_left_unanswered_ends_in_a_reconnect() {
    let f = fixture("f7").await;
    let (_conn, mut events, device) = online(&f, "f7").await;
    let logins = f.wire.net.handshakes("IK");
    f.wire.net.arm_fault(PHONE, device, Fault::Keepalive, 1);
    let silent = tokio::time::Instant::now();
    let back = loop {
        match tokio::time::timeout_at(silent + KEEPALIVE_DEADLINE, events.recv()).await {
            Ok(Some(NetworkEvent::Connected(_))) => break true,
            Ok(Some(NetworkEvent::Disconnected(DisconnectReason::ConnectionLost))) => continue,
            Ok(Some(NetworkEvent::Disconnected(other))) => panic!("ended as {other:?}"),
            Ok(Some(_)) => continue,
            _ => break false,
        }
    };
    assert!(back, "no new login within {KEEPALIVE_DEADLINE:?}");
    eprintln!(
        "an unanswered keepalive ended in a new login after {:?}",
        silent.elapsed()
    );
    assert_eq!(f.wire.net.faults_left(PHONE, device, Fault::Keepalive), 0);
    assert!(f.wire.net.handshakes("IK") > logins, "a new socket");
    assert!(f.wire.net.is_live(PHONE, device));
    assert_eq!(f.wire.net.most_live_sockets(PHONE, device), 1);
}

/// The longest a keepalive left unanswered takes to end a connection: a
/// tick that skips its ping (data came in the last 15 s), the next one (at
/// most 30 s later each), the ping's 20 s deadline, and some slack.
const KEEPALIVE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(100);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_temporary_ban_refuses_the_login() {
    let f = fixture("f3").await;
    let (_conn, mut events, device) = online(&f, "f3").await;
    f.wire.net.ban(PHONE, Some(3600));
    assert!(f.wire.net.drop_socket(PHONE, device));
    loop {
        match next(&mut events, "the ban").await {
            NetworkEvent::Disconnected(DisconnectReason::TemporaryBan) => break,
            NetworkEvent::Disconnected(DisconnectReason::ConnectionLost) => continue,
            other => panic!("expected a temporary ban, got {other:?}"),
        }
    }
    assert!(!f.wire.net.is_live(PHONE, device));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_ik_falls_back_to_xx_and_logs_in() {
    let f = fixture("f4").await;
    let (conn, _events, _) = online(&f, "f4").await;
    conn.close().await;
    f.wire.net.refuse_ik(true);
    let again = SessionContext {
        fence: 2,
        ..ctx("f4")
    };
    let (_conn, mut events) = f.network.connect(again).await.expect("reconnect");
    assert!(matches!(
        next(&mut events, "the connection").await,
        NetworkEvent::Connected(_)
    ));
    assert!(
        f.wire.net.handshakes("XXfallback") >= 1,
        "the IK hello was answered with the fallback"
    );
}

/// Waits for the session to be connected again, past the disconnects on the
/// way; anything else (a logout, a ban) fails the test.
async fn reconnected(events: &mut tokio::sync::mpsc::Receiver<NetworkEvent>, what: &str) {
    loop {
        match next(events, what).await {
            NetworkEvent::Connected(_) => return,
            NetworkEvent::Disconnected(DisconnectReason::ConnectionLost) => continue,
            other => panic!("{what}: expected a reconnection, got {other:?}"),
        }
    }
}

/// A restart the server asks for outside pairing (stream error 515) and a
/// server error (503) end the socket; the session comes back by itself, as
/// the same device, without a scan, one socket at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_errors_515_and_503_reconnect_without_a_scan() {
    let f = fixture("f5").await;
    let (_conn, mut events, device) = online(&f, "f5").await;
    for code in [515, 503] {
        assert!(f.wire.net.stream_error(PHONE, device, Some(code), None));
        reconnected(&mut events, &format!("after a stream error {code}")).await;
    }
    assert!(f.wire.net.devices_of(PHONE).contains(&device));
    assert!(f.wire.net.is_live(PHONE, device));
    assert_eq!(f.wire.net.most_live_sockets(PHONE, device), 1);
}

/// Logins the server refuses as unavailable for now (`<failure
/// reason="503">`) are tried again until one is let in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_refused_as_unavailable_is_tried_again() {
    let f = fixture("f6").await;
    let (_conn, mut events, device) = online(&f, "f6").await;
    f.wire.net.arm_fault(PHONE, device, Fault::Login, 2);
    assert!(f.wire.net.drop_socket(PHONE, device));
    reconnected(&mut events, "after two refused logins").await;
    assert_eq!(
        f.wire.net.faults_left(PHONE, device, Fault::Login),
        0,
        "both refusals were met"
    );
    assert!(f.wire.net.is_live(PHONE, device));
}
