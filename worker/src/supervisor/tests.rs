//! Supervisor and session behaviour on in-process ports and a fake network:
//! claiming, routing, failover safety, reconnects, terminal states, handover,
//! self-fencing and spreading.
use std::sync::Arc;
use std::time::Duration;

use parley_contract::command::{CallError, Command, Reply};
use parley_contract::error::ApiError;
use parley_model::address::PhoneNumber;
use parley_model::ids::ClientId;
use parley_network_sandbox::ops::SandboxOp;
use parley_shared::db::StatePatch;
use tokio::sync::watch;

use super::fakes::{World, cid, eventually};
use super::{Claim, Origin};
use crate::network::unavailable::UnavailableNetwork;
use crate::network::{DisconnectReason, NetworkEvent};
use parley_network_sandbox::SandboxNetwork;

async fn status_is(world: &World, id: &str, status: &str) -> bool {
    world
        .row(&cid(id))
        .await
        .is_some_and(|r| r.status == status)
}

#[tokio::test]
async fn start_on_the_queue_claims_the_session_and_it_shows_a_qr() {
    let world = World::new().await;
    let a = world.supervisor("a");
    let (_stop, stopped) = watch::channel(false);
    let _listener = a.listen_start(stopped).await.unwrap();
    world.create(&cid("s1")).await;

    let reply = world.start(&cid("s1")).await.unwrap().unwrap();
    assert!(
        matches!(&reply, Reply::Status { pod_name, .. } if pod_name == "a"),
        "{reply:?}"
    );
    assert_eq!(world.leases.holder(&cid("s1")).await.as_deref(), Some("a"));
    eventually("the session shows a QR", || status_is(&world, "s1", "qr")).await;
    let qr = world.send(&cid("s1"), Command::Qr).await.unwrap().unwrap();
    assert!(
        matches!(&qr, Reply::Qr { status, qr } if status == "qr" && qr.starts_with("qr-s1-")),
        "{qr:?}"
    );
    assert_eq!(world.row(&cid("s1")).await.unwrap().pod_name, "a");
    // `/check-state` asks for the status alone.
    let state = world
        .send(&cid("s1"), Command::State)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        state,
        Reply::Status {
            status: "qr".into(),
            pod_name: "a".into()
        }
    );

    // Starting again is idempotent; an unknown session is 404.
    let again = world.start(&cid("s1")).await.unwrap().unwrap();
    assert_eq!(
        again,
        Reply::Status {
            status: "qr".into(),
            pod_name: "a".into()
        }
    );
    assert_eq!(world.network.connects(&cid("s1")), 1);
    let unknown = world.start(&cid("nope")).await.unwrap();
    assert_eq!(unknown.unwrap_err().status, 404);
}

#[tokio::test]
async fn commands_reach_the_owner_and_other_workers_name_it() {
    let world = World::new().await;
    let (a, b) = (world.supervisor("a"), world.supervisor("b"));
    let (_stop, stopped) = watch::channel(false);
    let _la = a.listen_start(stopped.clone()).await.unwrap();
    let _lb = b.listen_start(stopped).await.unwrap();
    world.create(&cid("s1")).await;
    assert!(matches!(
        a.claim(&cid("s1"), Origin::Start).await.unwrap(),
        Claim::Ours { .. }
    ));
    assert_eq!(
        b.claim(&cid("s1"), Origin::Start).await.unwrap(),
        Claim::Elsewhere { holder: "a".into() }
    );
    // The queue group alternates between a and b: both answer with the owner.
    for _ in 0..4 {
        let reply = world.start(&cid("s1")).await.unwrap().unwrap();
        assert!(
            matches!(&reply, Reply::Status { pod_name, .. } if pod_name == "a"),
            "{reply:?}"
        );
    }
    eventually("the session shows a QR", || status_is(&world, "s1", "qr")).await;

    // Pairing by phone code acts once per request id.
    let pair = Command::PairPhone {
        phone: PhoneNumber::from_digits("4915112345678").unwrap(),
    };
    let first = world
        .send_as(&cid("s1"), pair.clone(), "req-1")
        .await
        .unwrap();
    let repeat = world
        .send_as(&cid("s1"), pair.clone(), "req-1")
        .await
        .unwrap();
    assert_eq!(
        first,
        Ok(Reply::PairCode {
            code: "ABCD1234".into()
        })
    );
    assert_eq!(repeat, first);
    assert_eq!(world.network.pair_calls(), 1);

    // The phone links: the session is connected and refuses pairing again.
    world.network.link(&cid("s1"), "4915112345678").await;
    eventually("the session is connected", || {
        status_is(&world, "s1", "connected")
    })
    .await;
    let row = world.row(&cid("s1")).await.unwrap();
    assert!(row.connected && row.logged_in && row.connected_at.is_some());
    assert_eq!(row.jid, "4915112345678:1@s.whatsapp.net");
    let again = world.send(&cid("s1"), pair).await.unwrap();
    assert_eq!(again, Err(ApiError::conflict("already paired")));
    let qr = world.send(&cid("s1"), Command::Qr).await.unwrap().unwrap();
    assert_eq!(
        qr,
        Reply::Qr {
            status: "connected".into(),
            qr: String::new()
        }
    );
    assert_eq!(
        world.send(&cid("s1"), Command::Reload).await.unwrap(),
        Ok(Reply::Done)
    );
    assert_eq!(b.load(), 0);
    assert_eq!(world.network.most_drivers(), 1);
}

#[tokio::test]
async fn sandbox_operations_apply_their_events_before_the_answer() {
    let world = World::new().await;
    let a = world.supervisor("a");
    world.create(&cid("s1")).await;
    a.claim(&cid("s1"), Origin::Start).await.unwrap();
    eventually("the session shows a QR", || status_is(&world, "s1", "qr")).await;
    let link = SandboxOp::Link {
        phone: PhoneNumber::from_digits("4915112345678").unwrap(),
        name: "x".into(),
        qr: None,
    };
    let reply = world
        .send(&cid("s1"), link.command().unwrap())
        .await
        .unwrap();
    assert!(matches!(reply, Ok(Reply::Linked { .. })), "{reply:?}");
    let row = world.row(&cid("s1")).await.unwrap();
    assert!(row.connected, "recorded before the answer: {row:?}");
}

#[tokio::test]
async fn sandbox_operations_are_not_found_on_the_real_network() {
    let world = World::new().await;
    let a = super::Supervisor::new(super::Wiring {
        control: None,
        ..wiring(&world, "a")
    });
    world.create(&cid("s1")).await;
    a.claim(&cid("s1"), Origin::Start).await.unwrap();
    let reply = world
        .send(&cid("s1"), SandboxOp::Unlink.command().unwrap())
        .await
        .unwrap();
    assert_eq!(reply.unwrap_err().status, 404);
}

pub(super) fn wiring(world: &World, pod: &str) -> super::Wiring {
    super::Wiring {
        db: world.db.clone(),
        bus: Arc::new(world.bus.clone()),
        leases: Arc::new(world.leases.clone()),
        network: Arc::new(world.network.clone()),
        control: None,
        pod_name: pod.into(),
        timing: super::fakes::fast_timing(),
        media: world.media(),
        fetcher: super::fakes::test_fetcher(),
        events: super::fakes::test_events(),
    }
}

#[tokio::test]
async fn a_dropped_connection_reconnects_and_is_counted() {
    let world = World::new().await;
    let a = world.supervisor("a");
    world.create(&cid("s1")).await;
    a.claim(&cid("s1"), Origin::Start).await.unwrap();
    eventually("the session shows a QR", || status_is(&world, "s1", "qr")).await;
    world.network.link(&cid("s1"), "4915112345678").await;
    eventually("connected", || status_is(&world, "s1", "connected")).await;

    world
        .network
        .emit(
            &cid("s1"),
            NetworkEvent::Disconnected(DisconnectReason::ConnectionLost),
        )
        .await;
    eventually("reconnected", || async {
        world
            .row(&cid("s1"))
            .await
            .is_some_and(|r| r.connected && r.reconnects == 1)
    })
    .await;
    let row = world.row(&cid("s1")).await.unwrap();
    assert_eq!(row.last_disconnect, "connection-lost");
    assert_eq!(world.network.connects(&cid("s1")), 2);
    assert_eq!(world.network.drivers(&cid("s1")), 1);
    assert_eq!(world.network.most_drivers(), 1);
}

#[tokio::test]
async fn a_logged_out_session_is_terminal_and_released() {
    let world = World::new().await;
    let a = world.supervisor("a");
    world.create(&cid("s1")).await;
    a.claim(&cid("s1"), Origin::Start).await.unwrap();
    world.network.link(&cid("s1"), "4915112345678").await;
    eventually("connected", || status_is(&world, "s1", "connected")).await;

    world
        .network
        .emit(
            &cid("s1"),
            NetworkEvent::Disconnected(DisconnectReason::LoggedOut),
        )
        .await;
    eventually("released", || async {
        world.leases.holder(&cid("s1")).await.is_none() && a.load() == 0
    })
    .await;
    let row = world.row(&cid("s1")).await.unwrap();
    assert!(!row.desired && !row.connected && !row.logged_in, "{row:?}");
    assert_eq!(row.last_disconnect, "logged-out");
    assert_eq!(row.jid, "");
    assert_eq!(world.network.drivers(&cid("s1")), 0);
    assert_eq!(
        world.send(&cid("s1"), Command::Qr).await,
        Err(CallError::NoOwner)
    );

    // A sweep leaves it alone; `/start` pairs it again.
    assert!(a.sweep_once().await.unwrap().claimed.is_empty());
    assert!(matches!(
        a.claim(&cid("s1"), Origin::Start).await.unwrap(),
        Claim::Ours { .. }
    ));
    assert!(world.row(&cid("s1")).await.unwrap().desired);
}

#[tokio::test]
async fn disconnect_logs_out_deletes_and_releases() {
    let world = World::new().await;
    let a = world.supervisor("a");
    for id in ["s1", "s2"].map(cid) {
        world.create(&id).await;
        a.claim(&id, Origin::Start).await.unwrap();
        world.network.link(&id, "4915112345678").await;
        eventually("connected", || status_is(&world, id.as_str(), "connected")).await;
    }

    let reply = world.send(&cid("s1"), Command::Disconnect).await.unwrap();
    assert_eq!(reply, Ok(Reply::Disconnected { warning: None }));
    assert!(world.row(&cid("s1")).await.is_none());
    assert_eq!(world.leases.holder(&cid("s1")).await, None);
    assert_eq!(world.network.drivers(&cid("s1")), 0);
    assert_eq!(world.network.forgotten(), vec!["s1".to_string()]);

    // An unconfirmed logout still removes the session, with a warning.
    world.network.set_fail_logout(true);
    let reply = world.send(&cid("s2"), Command::Disconnect).await.unwrap();
    let Ok(Reply::Disconnected {
        warning: Some(warning),
    }) = reply
    else {
        panic!("expected a warning: {reply:?}");
    };
    assert!(
        warning.starts_with("network-side logout not confirmed"),
        "{warning}"
    );
    assert!(world.row(&cid("s2")).await.is_none());
    eventually("nothing runs", || async { a.load() == 0 }).await;
}

#[tokio::test]
async fn shutdown_releases_at_once_and_another_worker_takes_over() {
    let world = World::new().await;
    let (a, b) = (world.supervisor("a"), world.supervisor("b"));
    let ids = ["s1", "s2", "s3"].map(cid);
    for id in &ids {
        world.create(id).await;
    }
    let report = a.sweep_once().await.unwrap();
    assert_eq!(report.claimed.len(), 3);
    for id in &ids {
        world.network.link(id, "4915112345678").await;
    }
    eventually("all connected", || async {
        let mut all = true;
        for id in &ids {
            all &= status_is(&world, id.as_str(), "connected").await;
        }
        all
    })
    .await;

    a.shutdown().await;
    // A member until the last lease is released: no worker takes a session
    // over from it while it still runs one.
    let goodbyes = world.leases.goodbyes();
    assert_eq!(goodbyes.len(), 4, "{goodbyes:?}");
    assert_eq!(goodbyes.last().map(String::as_str), Some("withdraw a"));
    for id in &ids {
        assert_eq!(world.leases.holder(id).await, None, "released, not expired");
        assert_eq!(world.network.drivers(id), 0);
        assert!(!world.row(id).await.unwrap().connected);
    }
    assert!(matches!(
        a.claim(&cid("s1"), Origin::Start).await,
        Err(super::ClaimError::ShuttingDown)
    ));
    let report = b.sweep_once().await.unwrap();
    assert_eq!(report.live_workers, 1, "a withdrew its presence");
    assert_eq!(report.claimed.len(), 3);
    eventually("b runs them connected", || async {
        let mut all = true;
        for id in &ids {
            all &= world
                .row(id)
                .await
                .is_some_and(|r| r.connected && r.pod_name == "b");
        }
        all
    })
    .await;
    assert_eq!(world.network.most_drivers(), 1);
}

#[tokio::test]
async fn a_session_that_cannot_renew_its_lease_closes_itself_before_expiry() {
    let world = World::new().await;
    let (a, b) = (world.supervisor("a"), world.supervisor("b"));
    world.create(&cid("s1")).await;
    a.claim(&cid("s1"), Origin::Start).await.unwrap();
    eventually("the session shows a QR", || status_is(&world, "s1", "qr")).await;

    world.leases.hang_renewals();
    eventually("self-fenced", || async {
        a.load() == 0 && world.network.drivers(&cid("s1")) == 0
    })
    .await;
    assert_eq!(
        world.send(&cid("s1"), Command::Qr).await,
        Err(CallError::NoOwner),
        "stopped answering"
    );
    // Once the lease is free, another worker takes over; never two drivers.
    eventually("b claims it", || async {
        b.sweep_once().await.is_ok_and(|r| r.claimed == [cid("s1")])
    })
    .await;
    assert_eq!(world.network.most_drivers(), 1);
}

#[tokio::test]
async fn a_session_whose_lease_was_taken_stops() {
    let world = World::new().await;
    let a = world.supervisor("a");
    world.create(&cid("s1")).await;
    a.claim(&cid("s1"), Origin::Start).await.unwrap();
    world.leases.refuse_renewals();
    eventually("stopped", || async {
        a.load() == 0 && world.network.drivers(&cid("s1")) == 0
    })
    .await;
}

#[tokio::test]
async fn a_newer_owner_in_the_database_fences_the_session_out() {
    let world = World::new().await;
    let a = world.supervisor("a");
    world.create(&cid("s1")).await;
    a.claim(&cid("s1"), Origin::Start).await.unwrap();
    eventually("the session shows a QR", || status_is(&world, "s1", "qr")).await;
    let newer = world
        .db
        .fenced_update("s1", i64::MAX as u64, StatePatch::default())
        .await
        .unwrap();
    assert!(newer);
    world
        .network
        .emit(
            &cid("s1"),
            NetworkEvent::Disconnected(DisconnectReason::ConnectionLost),
        )
        .await;
    eventually("fenced out", || async {
        a.load() == 0 && world.leases.holder(&cid("s1")).await.is_none()
    })
    .await;
    assert_eq!(world.network.drivers(&cid("s1")), 0);
    assert_eq!(
        world.row(&cid("s1")).await.unwrap().reconnects,
        0,
        "nothing written"
    );
}

#[tokio::test]
async fn an_unreachable_network_is_reported_and_retried_with_backoff() {
    let world = World::new().await;
    let a = world.supervisor("a");
    world.create(&cid("s1")).await;
    world.network.set_unreachable(true);
    a.claim(&cid("s1"), Origin::Start).await.unwrap();
    eventually("reported", || async {
        world.row(&cid("s1")).await.is_some_and(|r| {
            r.last_disconnect == "network-unreachable" && r.status == "initializing"
        })
    })
    .await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let attempts = world.network.connects(&cid("s1"));
    assert!(
        (2..=12).contains(&attempts),
        "backoff, not a spin: {attempts}"
    );
    world.network.set_unreachable(false);
    eventually("recovered", || status_is(&world, "s1", "qr")).await;
}

#[tokio::test]
async fn the_unavailable_adapter_keeps_sessions_waiting_without_spinning() {
    let world = World::new().await;
    let a = world.supervisor_on("a", Arc::new(UnavailableNetwork));
    world.create(&cid("s1")).await;
    a.claim(&cid("s1"), Origin::Start).await.unwrap();
    eventually("reported", || async {
        world
            .row(&cid("s1"))
            .await
            .is_some_and(|r| r.last_disconnect == "network-unreachable")
    })
    .await;
    let reply = world.send(&cid("s1"), Command::Qr).await.unwrap().unwrap();
    assert_eq!(
        reply,
        Reply::Qr {
            status: "initializing".into(),
            qr: String::new()
        }
    );
    assert_eq!(a.load(), 1);
}

#[tokio::test]
async fn two_workers_sweeping_and_starting_together_never_both_drive_a_session() {
    let world = World::new().await;
    let (a, b) = (world.supervisor("a"), world.supervisor("b"));
    let (_stop, stopped) = watch::channel(false);
    let _la = a.listen_start(stopped.clone()).await.unwrap();
    let _lb = b.listen_start(stopped).await.unwrap();
    let ids: Vec<ClientId> = (0..6).map(|i| cid(&format!("s{i}"))).collect();
    for id in &ids {
        world.create(id).await;
    }
    let sweeps = |s: super::Supervisor| async move {
        for _ in 0..10 {
            s.sweep_once().await.unwrap();
        }
    };
    let starts = async {
        for id in &ids {
            world.start(id).await.unwrap().unwrap();
        }
    };
    tokio::join!(sweeps(a.clone()), sweeps(b.clone()), starts);
    let (owned_a, owned_b) = (a.owned(), b.owned());
    assert!(
        owned_a.iter().all(|id| !owned_b.contains(id)),
        "{owned_a:?} {owned_b:?}"
    );
    assert_eq!(owned_a.len() + owned_b.len(), ids.len());
    assert_eq!(world.network.most_drivers(), 1);
}

#[tokio::test]
async fn ten_sessions_spread_over_two_workers() {
    let world = World::new().await;
    let (a, b) = (world.supervisor("a"), world.supervisor("b"));
    for i in 0..10 {
        world.create(&cid(&format!("s{i}"))).await;
    }
    let report = a.sweep_once().await.unwrap();
    assert_eq!(report.claimed.len(), 10, "alone, a takes them all");
    b.announce().await.unwrap();
    eventually("spread 5/5", || async {
        a.sweep_once().await.unwrap();
        b.sweep_once().await.unwrap();
        a.load() == 5 && b.load() == 5
    })
    .await;
    // Stable: further sweeps move nothing.
    for _ in 0..5 {
        assert_eq!(a.sweep_once().await.unwrap().handed_over, None);
        assert_eq!(b.sweep_once().await.unwrap().handed_over, None);
    }
    assert_eq!((a.load(), b.load()), (5, 5));
    assert_eq!(world.network.most_drivers(), 1);
}

#[tokio::test]
async fn the_sandbox_network_pairs_drops_and_unlinks_through_the_session() {
    let world = World::new().await;
    let sandbox = Arc::new(SandboxNetwork::new(
        world.db.clone(),
        Duration::from_secs(60),
        Duration::from_secs(20),
    ));
    let a = super::Supervisor::new(super::Wiring {
        network: sandbox.clone(),
        control: Some(sandbox.clone()),
        ..wiring(&world, "a")
    });
    world.create(&cid("s1")).await;
    a.claim(&cid("s1"), Origin::Start).await.unwrap();
    eventually("the session shows a QR", || status_is(&world, "s1", "qr")).await;
    let Reply::Qr { qr, .. } = world.send(&cid("s1"), Command::Qr).await.unwrap().unwrap() else {
        panic!("expected a QR reply");
    };
    let link = SandboxOp::Link {
        phone: PhoneNumber::from_digits("4915112345678").unwrap(),
        name: "Tester".into(),
        qr: Some(qr),
    };
    let linked = world
        .send(&cid("s1"), link.command().unwrap())
        .await
        .unwrap();
    assert!(matches!(linked, Ok(Reply::Linked { .. })), "{linked:?}");
    assert!(world.row(&cid("s1")).await.unwrap().connected);

    let drop = SandboxOp::Fault {
        op: "drop".into(),
        count: 1,
    };
    assert_eq!(sandbox.control("s1", drop).await, Ok(Reply::Done));
    eventually("reconnected", || async {
        world
            .row(&cid("s1"))
            .await
            .is_some_and(|r| r.connected && r.reconnects == 1)
    })
    .await;

    let unlinked = world
        .send(&cid("s1"), SandboxOp::Unlink.command().unwrap())
        .await
        .unwrap();
    assert_eq!(unlinked, Ok(Reply::Done));
    eventually("terminal and released", || async {
        a.load() == 0 && world.leases.holder(&cid("s1")).await.is_none()
    })
    .await;
    let row = world.row(&cid("s1")).await.unwrap();
    assert!(!row.desired && !row.logged_in);
    assert_eq!(row.last_disconnect, "logged-out");
}

#[tokio::test]
async fn sessions_nobody_else_takes_are_claimed_after_a_grace_without_thrashing() {
    let world = World::new().await;
    let a = world.supervisor("a");
    for i in 0..4 {
        world.create(&cid(&format!("s{i}"))).await;
    }
    // A member that announces itself but never claims anything.
    let ghost = || async {
        use parley_shared::lease::Leases;
        world
            .leases
            .announce("ghost", 0, Duration::from_secs(30))
            .await
            .unwrap();
    };
    ghost().await;
    let first = a.sweep_once().await.unwrap();
    assert_eq!((first.fair_share, first.claimed.len()), (2, 2));
    eventually("the rest claimed after the grace", || async {
        a.sweep_once().await.unwrap();
        a.load() == 4
    })
    .await;
    for _ in 0..5 {
        assert_eq!(a.sweep_once().await.unwrap().handed_over, None, "held");
    }
}

#[tokio::test]
async fn a_pair_code_asked_for_before_the_first_connect_is_issued() {
    // On this single-threaded runtime the session's task has not run yet when
    // the command is queued, so the command is taken before the first connect.
    let world = World::new().await;
    let a = world.supervisor("a");
    world.create(&cid("s1")).await;
    a.claim(&cid("s1"), Origin::Start).await.unwrap();
    let pair = Command::PairPhone {
        phone: PhoneNumber::from_digits("4915112345678").unwrap(),
    };
    let reply = world.send(&cid("s1"), pair).await.unwrap();
    assert_eq!(
        reply,
        Ok(Reply::PairCode {
            code: "ABCD1234".into()
        })
    );
    assert_eq!(world.network.connects(&cid("s1")), 1);
}
