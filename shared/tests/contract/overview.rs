//! Contract of the overview queries behind the console's routes (sessions
//! searched and paged, open events, state history, disconnects): one suite,
//! run on SQLite and PostgreSQL.
use chrono::{Duration, Utc};
use parley_shared::db::events::{Appended, DeliveryState, NewEvent};
use parley_shared::db::{Db, NewSession, SettingsPatch, StatePatch};

use super::db::db_contract;
use super::events::owned;

db_contract! {
    adapters: [sqlite, postgres],
    cases: [
        sessions_are_searched_in_any_case_and_paged,
        search_text_is_matched_literally,
        open_events_are_counted_per_session_and_in_all,
        state_changes_are_recorded_capped_and_deleted_with_the_session,
        a_fenced_out_update_records_nothing,
        disconnects_are_counted_since_a_time,
        sessions_are_totalled_by_health_and_owner,
    ]
}

async fn create(db: &Db, client_id: &str) {
    db.create_session(NewSession {
        client_id: client_id.into(),
        ..NewSession::default()
    })
    .await
    .expect("create");
}

async fn ids(db: &Db, q: &str, only: Option<&str>, page: u64, limit: u64) -> (Vec<String>, u64) {
    let found = db.session_page(q, only, page, limit).await.expect("page");
    let ids = found.rows.into_iter().map(|r| r.client_id).collect();
    (ids, found.total)
}

async fn sessions_are_searched_in_any_case_and_paged(db: &Db) {
    for id in ["shopA", "shopB", "shopC", "support1", "Other"] {
        create(db, id).await;
    }
    db.update_settings(
        "Other",
        SettingsPatch {
            org_id: Some("Team-Shop-North".into()),
            ..SettingsPatch::default()
        },
    )
    .await
    .expect("org");
    let linked = StatePatch {
        jid: Some("4915100000777@s.whatsapp.net".into()),
        ..StatePatch::default()
    };
    assert!(db.fenced_update("support1", 1, linked).await.expect("jid"));

    let all = ids(db, "", None, 1, 50).await;
    assert_eq!(all.1, 5);
    assert_eq!(all.0, ["Other", "shopA", "shopB", "shopC", "support1"]);
    // clientId and orgId in any case; the JID by its digits.
    assert_eq!(
        ids(db, "SHOP", None, 1, 50).await,
        (
            vec![
                "Other".to_string(),
                "shopA".into(),
                "shopB".into(),
                "shopC".into()
            ],
            4
        )
    );
    assert_eq!(ids(db, "0777", None, 1, 50).await.0, ["support1"]);
    // Pages of two, and past the end.
    assert_eq!(
        ids(db, "shop", None, 2, 2).await,
        (vec!["shopB".into(), "shopC".into()], 4)
    );
    assert_eq!(ids(db, "shop", None, 3, 2).await, (vec![], 4));
    // One session only (a session's secret).
    assert_eq!(
        ids(db, "", Some("shopB"), 1, 50).await,
        (vec!["shopB".into()], 1)
    );
    assert_eq!(ids(db, "support", Some("shopB"), 1, 50).await, (vec![], 0));
    // No webhook token leaves the database for a listing.
    let page = db.session_page("", None, 1, 50).await.expect("page");
    assert!(page.rows.iter().all(|r| r.webhook_token.is_empty()));
}

async fn search_text_is_matched_literally(db: &Db) {
    create(db, "abc").await;
    create(db, "a1c").await;
    assert_eq!(
        ids(db, "a_c", None, 1, 50).await.1,
        0,
        "_ is not a wildcard"
    );
    assert_eq!(ids(db, "%", None, 1, 50).await.1, 0, "% is not a wildcard");
    assert_eq!(ids(db, "\\", None, 1, 50).await.1, 0);
    assert_eq!(
        ids(db, "'; drop table sessions; --", None, 1, 50).await.1,
        0
    );
    assert_eq!(ids(db, "", None, 1, 50).await.1, 2, "nothing dropped");
}

async fn append(db: &Db, client_id: &str, id: &str) -> u64 {
    let new = NewEvent {
        event_id: id,
        kind: "message",
        state: DeliveryState::Pending,
        cap: 1_000,
    };
    match db
        .append_event(client_id, 1, new, |_| b"{}".to_vec())
        .await
        .expect("append")
    {
        Appended::Logged(e) => e.seq,
        other => panic!("not logged: {other:?}"),
    }
}

async fn open_events_are_counted_per_session_and_in_all(db: &Db) {
    owned(db, "one", 1).await;
    owned(db, "two", 1).await;
    owned(db, "quiet", 1).await;
    for n in 0..5 {
        append(db, "one", &format!("one-{n}")).await;
    }
    for n in 0..3 {
        append(db, "two", &format!("two-{n}")).await;
    }
    db.set_event_state("one", 1, 0, DeliveryState::Delivered)
        .await
        .unwrap();
    db.set_event_state("one", 2, 0, DeliveryState::Dead)
        .await
        .unwrap();
    db.set_event_state("one", 3, 0, DeliveryState::Rejected)
        .await
        .unwrap();
    db.set_event_state("two", 1, 0, DeliveryState::Delivered)
        .await
        .unwrap();

    let names: Vec<String> = ["one", "two", "quiet", "absent"].map(String::from).into();
    let open = db.open_events(&names).await.expect("open events");
    let one = open["one"];
    assert_eq!((one.pending, one.dead_letters, one.last_seq), (2, 2, 5));
    let two = open["two"];
    assert_eq!((two.pending, two.dead_letters, two.last_seq), (2, 0, 3));
    assert!(!open.contains_key("quiet") && !open.contains_key("absent"));
    assert!(db.open_events(&[]).await.expect("none").is_empty());

    let total = db.open_events_total().await.expect("total");
    assert_eq!((total.pending, total.dead_letters), (4, 2));
}

fn change(status: &str, connected: bool, reason: Option<&str>, pod: &str) -> StatePatch {
    StatePatch {
        status: Some(status.into()),
        connected: Some(connected),
        last_disconnect: reason.map(String::from),
        pod_name: Some(pod.into()),
        ..StatePatch::default()
    }
}

async fn state_changes_are_recorded_capped_and_deleted_with_the_session(db: &Db) {
    create(db, "s").await;
    let fenced = |p| db.fenced_update("s", 1, p);
    assert!(fenced(change("qr", false, None, "worker-0")).await.unwrap());
    // Nothing shown changes: no line.
    assert!(fenced(change("qr", false, None, "worker-0")).await.unwrap());
    assert!(
        fenced(StatePatch {
            logged_in: Some(true),
            ..StatePatch::default()
        })
        .await
        .unwrap()
    );
    assert!(
        fenced(change("connected", true, None, "worker-0"))
            .await
            .unwrap()
    );
    assert!(
        fenced(change(
            "initializing",
            false,
            Some("connection-lost"),
            "worker-0"
        ))
        .await
        .unwrap()
    );
    assert!(
        fenced(change("connected", true, None, "worker-1"))
            .await
            .unwrap()
    );
    // The same reason again: a drop of the connection still names it.
    assert!(
        fenced(StatePatch {
            connected: Some(false),
            ..StatePatch::default()
        })
        .await
        .unwrap()
    );

    let changes = db.state_changes("s").await.unwrap();
    let seen: Vec<(&str, bool, &str, &str)> = changes
        .iter()
        .map(|c| {
            (
                c.status.as_str(),
                c.connected,
                c.reason.as_str(),
                c.pod_name.as_str(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("connected", false, "connection-lost", "worker-1"),
            ("connected", true, "", "worker-1"),
            ("initializing", false, "connection-lost", "worker-0"),
            ("connected", true, "", "worker-0"),
            ("qr", false, "", "worker-0"),
        ],
        "newest first"
    );
    assert!(changes.windows(2).all(|w| w[0].at >= w[1].at));

    // The newest 50 are kept.
    for n in 0..60 {
        let p = change(&format!("state-{n}"), n % 2 == 0, None, "worker-1");
        assert!(fenced(p).await.unwrap());
    }
    let kept = db.state_changes("s").await.unwrap();
    assert_eq!(kept.len(), 50);
    assert_eq!(kept[0].status, "state-59");
    assert_eq!(kept[49].status, "state-10");

    assert!(db.delete_session("s").await.unwrap());
    create(db, "s").await;
    assert!(
        db.state_changes("s").await.unwrap().is_empty(),
        "gone with it"
    );
}

async fn a_fenced_out_update_records_nothing(db: &Db) {
    create(db, "f").await;
    assert!(
        db.fenced_update("f", 5, change("qr", false, None, "w5"))
            .await
            .unwrap()
    );
    assert!(
        !db.fenced_update("f", 4, change("connected", true, None, "w4"))
            .await
            .unwrap()
    );
    let changes = db.state_changes("f").await.unwrap();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].pod_name, "w5");
    // An unknown session has no history.
    assert!(db.state_changes("missing").await.unwrap().is_empty());
}

async fn disconnects_are_counted_since_a_time(db: &Db) {
    let before = Utc::now() - Duration::seconds(1);
    create(db, "a").await;
    create(db, "b").await;
    for id in ["a", "b"] {
        let up = change("connected", true, None, "w");
        assert!(db.fenced_update(id, 1, up).await.unwrap());
        let down = change("initializing", false, Some("connection-lost"), "w");
        assert!(db.fenced_update(id, 1, down).await.unwrap());
    }
    let up = change("connected", true, None, "w");
    assert!(db.fenced_update("a", 1, up).await.unwrap());
    assert_eq!(db.disconnects_since(before).await.unwrap(), 2);
    let later = Utc::now() + Duration::seconds(1);
    assert_eq!(db.disconnects_since(later).await.unwrap(), 0);
}

async fn sessions_are_totalled_by_health_and_owner(db: &Db) {
    assert_eq!(db.session_totals().await.unwrap(), Default::default());
    for id in ["up", "down", "gone", "new"] {
        create(db, id).await;
    }
    let linked = |pod: &str, connected: bool, reconnects: i64| StatePatch {
        jid: Some("4915100000999@s.whatsapp.net".into()),
        pod_name: Some(pod.into()),
        connected: Some(connected),
        reconnects_add: reconnects,
        ..StatePatch::default()
    };
    assert!(
        db.fenced_update("up", 1, linked("w1", true, 2))
            .await
            .unwrap()
    );
    assert!(
        db.fenced_update("down", 1, linked("w1", false, 3))
            .await
            .unwrap()
    );
    let mut gone = linked("w2", false, 0);
    gone.desired = Some(false);
    assert!(db.fenced_update("gone", 1, gone).await.unwrap());

    let t = db.session_totals().await.unwrap();
    assert_eq!(
        (t.total, t.connected, t.failed, t.pairing, t.reconnects),
        (4, 1, 2, 1, 5)
    );
    assert_eq!(t.by_pod.len(), 2, "{:?}", t.by_pod);
    assert_eq!(t.by_pod["w1"], (2, 1));
    assert_eq!(t.by_pod["w2"], (1, 0));
}
