//! Contract of the database (`Db` session queries): one suite, run on SQLite and PostgreSQL.
use chrono::{TimeZone, Utc};
use parley_shared::db::{Db, NewSession, SessionRow, SettingsPatch, StatePatch};
use parley_shared::store_keys::StoreKeys;
use sea_orm::ConnectionTrait;

pub(crate) use parley_shared::db_contract;

db_contract! {
    adapters: [sqlite, postgres],
    cases: [
        migrate_twice_is_a_noop,
        create_get_list,
        concurrent_create_inserts_once,
        settings_patch,
        fenced_update_rejects_older_fences,
        reconnects_add_accumulates,
        delete,
        webhook_token_round_trips,
        webhook_tokens_are_sealed_and_rekeyed,
        relaxed_pool_writes_are_seen_at_once_and_skip_the_flush_wait,
        posted_statuses_are_remembered_with_their_audience_until_deleted,
        labels_are_kept_with_their_chats_per_session,
    ]
}

fn new_session(client_id: &str) -> NewSession {
    NewSession {
        client_id: client_id.into(),
        webhook_url: format!("https://hooks.example/{client_id}"),
        webhook_token: format!("token-{client_id}"),
        poll_lookup_url: String::new(),
    }
}

async fn create(db: &Db, client_id: &str) -> SessionRow {
    let (row, created) = db
        .create_session(new_session(client_id))
        .await
        .expect("create");
    assert!(created, "{client_id} should be new");
    row
}

async fn get(db: &Db, client_id: &str) -> SessionRow {
    db.session(client_id)
        .await
        .expect("read")
        .unwrap_or_else(|| panic!("{client_id} should exist"))
}

async fn migrate_twice_is_a_noop(db: &Db) {
    let row = create(db, "kept").await;
    db.migrate().await.expect("second migrate");
    db.migrate().await.expect("third migrate");
    assert_eq!(get(db, "kept").await, row);
    assert!(db.ping().await);
}

async fn create_get_list(db: &Db) {
    let beta = create(db, "beta").await;
    assert_eq!(beta.client_id, "beta");
    assert_eq!(beta.webhook_url, "https://hooks.example/beta");
    assert_eq!(beta.status, "initializing");
    assert!(beta.desired);
    assert!(!beta.connected && !beta.logged_in && !beta.enable_group_ai);
    assert_eq!((beta.reconnects, beta.fence), (0, 0));
    assert_eq!(beta.secret_hash, None);
    assert_eq!(beta.connected_at, None);
    assert_eq!((beta.jid.as_str(), beta.org_id.as_str()), ("", ""));
    assert_eq!(get(db, "beta").await, beta);

    // A second create keeps the stored row.
    let mut again = new_session("beta");
    again.webhook_url = "https://other.example/".into();
    let (row, created) = db.create_session(again).await.expect("create again");
    assert!(!created);
    assert_eq!(row, beta);

    let alpha = create(db, "alpha").await;
    assert_eq!(db.sessions().await.expect("list"), vec![alpha, beta]);
    assert_eq!(db.session("missing").await.expect("read"), None);

    assert_eq!(
        db.desired_sessions().await.expect("desired"),
        vec!["alpha".to_string(), "beta".to_string()]
    );
    let patch = SettingsPatch {
        desired: Some(false),
        ..Default::default()
    };
    db.update_settings("alpha", patch).await.expect("undesire");
    assert_eq!(db.desired_sessions().await.expect("desired"), vec!["beta"]);
}

async fn concurrent_create_inserts_once(db: &Db) {
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let db = db.clone();
            tokio::spawn(async move { db.create_session(new_session("race")).await })
        })
        .collect();
    let mut created = 0;
    for task in tasks {
        let (row, was_created) = task.await.expect("task").expect("create");
        assert_eq!(row.client_id, "race");
        created += usize::from(was_created);
    }
    assert_eq!(created, 1, "exactly one creator inserts");
    assert_eq!(db.sessions().await.expect("list").len(), 1);
}

async fn settings_patch(db: &Db) {
    let before = create(db, "set").await;
    let patch = SettingsPatch {
        webhook_url: Some("https://new.example/hook".into()),
        org_id: Some("org1".into()),
        secret_hash: Some(Some("ab".repeat(32))),
        enable_group_ai: Some(true),
        ..Default::default()
    };
    let row = db
        .update_settings("set", patch)
        .await
        .expect("update")
        .expect("exists");
    assert_eq!(row.webhook_url, "https://new.example/hook");
    assert_eq!(row.org_id, "org1");
    assert_eq!(row.secret_hash, Some("ab".repeat(32)));
    assert!(row.enable_group_ai);
    assert_eq!(row.webhook_token, before.webhook_token, "untouched");
    assert_eq!(row.created_at, before.created_at);
    assert!(row.updated_at >= before.updated_at);
    assert_eq!(get(db, "set").await, row);

    let remove_secret = SettingsPatch {
        secret_hash: Some(None),
        ..Default::default()
    };
    let row = db
        .update_settings("set", remove_secret)
        .await
        .expect("update")
        .expect("exists");
    assert_eq!(row.secret_hash, None);
    assert_eq!(row.org_id, "org1", "untouched");

    let absent = db
        .update_settings("nobody", SettingsPatch::default())
        .await
        .expect("update");
    assert_eq!(absent, None);
}

async fn fenced_update_rejects_older_fences(db: &Db) {
    create(db, "fenced").await;
    let at = Utc.timestamp_opt(1_700_000_000, 0).single().expect("time");
    let first = StatePatch {
        status: Some("qr".into()),
        pod_name: Some("worker-1".into()),
        ..Default::default()
    };
    assert!(db.fenced_update("fenced", 1, first).await.expect("fence 1"));
    let row = get(db, "fenced").await;
    assert_eq!((row.status.as_str(), row.fence), ("qr", 1));

    let second = StatePatch {
        status: Some("connected".into()),
        pod_name: Some("worker-2".into()),
        jid: Some("123@s.whatsapp.net".into()),
        lid: Some("456".into()),
        connected: Some(true),
        logged_in: Some(true),
        connected_at: Some(Some(at)),
        ..Default::default()
    };
    assert!(
        db.fenced_update("fenced", 2, second)
            .await
            .expect("fence 2")
    );
    let current = get(db, "fenced").await;
    assert_eq!(current.status, "connected");
    assert_eq!(current.pod_name, "worker-2");
    assert_eq!(
        (current.jid.as_str(), current.lid.as_str()),
        ("123@s.whatsapp.net", "456")
    );
    assert!(current.connected && current.logged_in);
    assert_eq!(current.connected_at, Some(at));
    assert_eq!(current.fence, 2);

    let stale = StatePatch {
        status: Some("initializing".into()),
        pod_name: Some("worker-1".into()),
        connected: Some(false),
        reconnects_add: 5,
        ..Default::default()
    };
    assert!(
        !db.fenced_update("fenced", 1, stale)
            .await
            .expect("fence 1 again")
    );
    assert_eq!(
        get(db, "fenced").await,
        current,
        "a stale owner changes nothing"
    );

    // The same owner may write again; clearing works.
    let disconnect = StatePatch {
        connected: Some(false),
        connected_at: Some(None),
        last_disconnect: Some("stream-replaced".into()),
        desired: Some(false),
        ..Default::default()
    };
    assert!(
        db.fenced_update("fenced", 2, disconnect)
            .await
            .expect("fence 2 again")
    );
    let row = get(db, "fenced").await;
    assert!(!row.connected && !row.desired);
    assert_eq!(row.connected_at, None);
    assert_eq!(row.last_disconnect, "stream-replaced");

    let gone = db.fenced_update("nobody", 9, StatePatch::default()).await;
    assert!(!gone.expect("absent row"));
}

async fn reconnects_add_accumulates(db: &Db) {
    create(db, "flaky").await;
    for (fence, add) in [(1, 1), (1, 2), (3, 4)] {
        let patch = StatePatch {
            reconnects_add: add,
            ..Default::default()
        };
        assert!(
            db.fenced_update("flaky", fence, patch)
                .await
                .expect("update")
        );
    }
    let row = get(db, "flaky").await;
    assert_eq!((row.reconnects, row.fence), (7, 3));
}

async fn delete(db: &Db) {
    create(db, "doomed").await;
    create(db, "kept").await;
    assert!(db.delete_session("doomed").await.expect("delete"));
    assert!(!db.delete_session("doomed").await.expect("delete again"));
    assert_eq!(db.session("doomed").await.expect("read"), None);
    let ids: Vec<_> = db
        .sessions()
        .await
        .expect("list")
        .into_iter()
        .map(|s| s.client_id)
        .collect();
    assert_eq!(ids, vec!["kept"]);
}

async fn posted_statuses_are_remembered_with_their_audience_until_deleted(db: &Db) {
    create(db, "poster").await;
    create(db, "other").await;
    let audience = vec!["111111111@lid".to_string(), "222222222@lid".to_string()];
    db.remember_status("poster", "3EB0S1", &audience)
        .await
        .expect("remember");
    db.remember_status("other", "3EB0S2", &audience[..1])
        .await
        .expect("remember");
    assert_eq!(
        db.status_audience("poster", "3EB0S1").await.expect("read"),
        Some(audience.clone())
    );
    assert_eq!(
        db.status_audience("poster", "3EB0S2").await.expect("read"),
        None
    );
    // An expired one is not known (a status is up for a day).
    let aged = match db.backend() {
        "postgres" => "posted_at - INTERVAL '2 days'",
        _ => "'2000-01-01 00:00:00+00:00'",
    };
    db.conn()
        .execute_unprepared(&format!(
            "UPDATE status_posts SET posted_at = {aged} WHERE message_id = '3EB0S2'"
        ))
        .await
        .expect("age it");
    assert_eq!(
        db.status_audience("other", "3EB0S2").await.expect("read"),
        None
    );
    db.forget_status("poster", "3EB0S1").await.expect("forget");
    assert_eq!(
        db.status_audience("poster", "3EB0S1").await.expect("read"),
        None
    );
    // A session's statuses go with it.
    db.remember_status("poster", "3EB0S3", &audience)
        .await
        .expect("remember");
    assert!(db.delete_session("poster").await.expect("delete"));
    create(db, "poster").await;
    assert_eq!(
        db.status_audience("poster", "3EB0S3").await.expect("read"),
        None
    );
}

async fn labels_are_kept_with_their_chats_per_session(db: &Db) {
    use parley_model::outgoing::Label;
    create(db, "labeller").await;
    create(db, "other").await;
    let label = |id: &str, name: &str, color: i32| Label {
        id: id.into(),
        name: name.into(),
        color,
    };
    assert_eq!(db.next_label_id("labeller").await.expect("id"), "1");
    for l in [label("10", "Later", 1), label("2", "Lead", 3)] {
        db.save_label("labeller", &l).await.expect("save");
    }
    db.save_label("other", &label("2", "Theirs", 0))
        .await
        .expect("save");
    // A change replaces it.
    db.save_label("labeller", &label("2", "Lead!", 4))
        .await
        .expect("save");
    for chat in ["111@lid", "120363000000000001@g.us"] {
        db.label_chat("labeller", "2", chat, true)
            .await
            .expect("on");
    }
    db.label_chat("labeller", "2", "111@lid", true)
        .await
        .expect("twice is once");
    db.label_chat("labeller", "10", "111@lid", true)
        .await
        .expect("on");
    db.label_chat("labeller", "10", "111@lid", false)
        .await
        .expect("off");
    let all = db.labels("labeller").await.expect("list");
    let ids: Vec<&str> = all.iter().map(|l| l.label.id.as_str()).collect();
    assert_eq!(ids, vec!["2", "10"], "by number");
    assert_eq!(all[0].label, label("2", "Lead!", 4));
    assert_eq!(all[0].chats, vec!["111@lid", "120363000000000001@g.us"]);
    assert!(all[1].chats.is_empty());
    assert_eq!(db.next_label_id("labeller").await.expect("id"), "11");
    assert_eq!(
        db.label("other", "2").await.expect("read"),
        Some(label("2", "Theirs", 0))
    );
    assert_eq!(
        db.label_chats("labeller", "2").await.expect("chats"),
        Some(vec![
            "111@lid".to_string(),
            "120363000000000001@g.us".into()
        ])
    );
    assert_eq!(
        db.label_chats("other", "2").await.expect("chats"),
        Some(vec![])
    );
    assert_eq!(db.label_chats("labeller", "7").await.expect("chats"), None);
    assert!(
        db.is_label_on_chat("labeller", "2", "111@lid")
            .await
            .expect("on")
    );
    assert!(
        !db.is_label_on_chat("labeller", "10", "111@lid")
            .await
            .expect("off")
    );
    // Deleted, it is off its chats too; a session's labels go with it.
    db.delete_label("labeller", "2").await.expect("delete");
    assert_eq!(db.label("labeller", "2").await.expect("read"), None);
    db.save_label("labeller", &label("2", "Again", 0))
        .await
        .expect("save");
    assert!(
        db.labels("labeller").await.expect("list")[0]
            .chats
            .is_empty()
    );
    assert!(db.delete_session("labeller").await.expect("delete"));
    assert!(db.labels("labeller").await.expect("list").is_empty());
    assert_eq!(db.labels("other").await.expect("list").len(), 1);
}

async fn webhook_token_round_trips(db: &Db) {
    let row = create(db, "hooked").await;
    assert_eq!(row.webhook_token, "token-hooked");
    assert_eq!(get(db, "hooked").await.webhook_token, "token-hooked");
    let patch = SettingsPatch {
        webhook_token: Some("s3cr3t with spaces & ünïcode".into()),
        ..Default::default()
    };
    db.update_settings("hooked", patch).await.expect("update");
    assert_eq!(
        get(db, "hooked").await.webhook_token,
        "s3cr3t with spaces & ünïcode"
    );
}

/// The stored webhook token, as the database holds it.
async fn stored_token(db: &Db, client_id: &str) -> String {
    stored(db, client_id, "webhook_token").await
}

/// A stored text column, as the database holds it.
async fn stored(db: &Db, client_id: &str, column: &str) -> String {
    let row = db
        .conn()
        .query_one_raw(sea_orm::Statement::from_string(
            db.conn().get_database_backend(),
            format!("SELECT {column} FROM sessions WHERE client_id = '{client_id}'"),
        ))
        .await
        .expect("query")
        .expect("row");
    row.try_get::<String>("", column).expect("column")
}

async fn webhook_tokens_are_sealed_and_rekeyed(db: &Db) {
    use base64::Engine;
    let entry = |id: &str, byte: u8| {
        format!(
            "{id}:{}",
            base64::engine::general_purpose::STANDARD.encode([byte; 32])
        )
    };
    let (a, b) = (entry("a", 1), entry("b", 2));
    // Written before keys existed: plain, and still read.
    create(db, "legacy").await;
    let old = db.clone().with_keys(StoreKeys::parse(&a, None).unwrap());
    create(&old, "sealed").await;
    assert_eq!(stored_token(db, "legacy").await, "token-legacy");
    let raw = stored_token(db, "sealed").await;
    assert!(!raw.contains("token-sealed"), "sealed at rest: {raw}");
    assert_eq!(get(&old, "sealed").await.webhook_token, "token-sealed");
    assert_eq!(get(&old, "legacy").await.webhook_token, "token-legacy");
    // A patch is sealed too.
    let patch = SettingsPatch {
        webhook_token: Some("token-patched".into()),
        ..SettingsPatch::default()
    };
    old.update_settings("legacy", patch)
        .await
        .expect("patch")
        .expect("row");
    assert!(!stored_token(db, "legacy").await.contains("token-patched"));
    // A session's proxy URL (credentials in it) is sealed like the token.
    const PROXY: &str = "socks5://user:proxy-pw@proxy.example:1080";
    let patch = SettingsPatch {
        proxy_url: Some(PROXY.into()),
        ..SettingsPatch::default()
    };
    let row = old.update_settings("sealed", patch).await.expect("patch");
    assert_eq!(row.expect("row").proxy_url, PROXY);
    assert!(!stored(db, "sealed", "proxy_url").await.contains("proxy-pw"));
    assert_eq!(stored(db, "legacy", "proxy_url").await, "", "none: empty");

    // Rotation: both keys, b active; rekey; then b alone reads everything.
    create(db, "plain").await;
    let both = db
        .clone()
        .with_keys(StoreKeys::parse(&format!("{a},{b}"), Some("b")).unwrap());
    let rekeyed = both.rekey_sessions().await.expect("rekey");
    assert_eq!((rekeyed.webhook_tokens, rekeyed.proxy_urls), (3, 1));
    assert_eq!(
        both.rekey_sessions().await.expect("rekey again"),
        Default::default(),
        "nothing left"
    );
    let only_b = db.clone().with_keys(StoreKeys::parse(&b, None).unwrap());
    assert_eq!(get(&only_b, "sealed").await.webhook_token, "token-sealed");
    assert_eq!(get(&only_b, "sealed").await.proxy_url, PROXY);
    assert_eq!(get(&only_b, "legacy").await.webhook_token, "token-patched");
    assert_eq!(get(&only_b, "plain").await.webhook_token, "token-plain");
    assert!(!stored_token(db, "plain").await.contains("token-plain"));
    // Without the key that sealed them, rows are refused, not misread.
    let only_a = db.clone().with_keys(StoreKeys::parse(&a, None).unwrap());
    assert!(only_a.session("sealed").await.is_err());
}

async fn relaxed_pool_writes_are_seen_at_once_and_skip_the_flush_wait(db: &Db) {
    let relaxed = db.relaxed(2);
    match db.backend() {
        "postgres" => assert_eq!(synchronous_commit(&relaxed).await, "off"),
        backend => {
            assert_eq!(backend, "sqlite");
            // 1 = NORMAL (no flush at commit), 2 = FULL (the main pool's).
            assert_eq!(sqlite_synchronous(&relaxed).await, 1);
            assert_eq!(sqlite_synchronous(db).await, 2);
        }
    }
    relaxed
        .create_session(new_session("r1"))
        .await
        .expect("write through the relaxed pool");
    let seen = db.session("r1").await.expect("read");
    assert_eq!(
        seen.map(|s| s.webhook_url),
        Some("https://hooks.example/r1".to_string()),
        "the main pool sees the write at once"
    );
}

/// SQLite's `synchronous` on a connection of `db`'s pool.
async fn sqlite_synchronous(db: &Db) -> i64 {
    first_value(db, sea_orm::DbBackend::Sqlite, "PRAGMA synchronous").await
}

/// PostgreSQL's `synchronous_commit` on a connection of `db`'s pool.
async fn synchronous_commit(db: &Db) -> String {
    first_value(db, sea_orm::DbBackend::Postgres, "SHOW synchronous_commit").await
}

/// The first column of the one row `sql` answers on a connection of `db`'s pool.
async fn first_value<T: sea_orm::TryGetable>(db: &Db, backend: sea_orm::DbBackend, sql: &str) -> T {
    let statement = sea_orm::Statement::from_string(backend, sql);
    let row = db
        .conn()
        .query_one_raw(statement)
        .await
        .expect(sql)
        .expect("a row");
    row.try_get_by_index::<T>(0).expect("a value")
}

/// The server ends every connection of the pool (a restart, as the pool sees
/// it) while they are in use: each fails its next statement at most once,
/// and the pool replaces it, though none was idle long enough to be checked
/// before it was handed out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_the_server_ended_fail_once_and_are_replaced() {
    let fixture = parley_shared::db::testing::TestDb::postgres().await;
    let db = &fixture.db;
    let name: String = first_value(
        db,
        sea_orm::DbBackend::Postgres,
        "SELECT current_database()",
    )
    .await;
    // Several connections in use at once, all used within the last moment.
    let reads: Vec<_> = (0..4).map(|_| db.session("none")).collect();
    for read in futures::future::join_all(reads).await {
        read.expect("read before");
    }
    let admin = Db::connect(&parley_shared::db::testing::postgres_admin_url())
        .await
        .expect("admin connection");
    let ended = admin
        .conn()
        .execute_unprepared(&format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"
        ))
        .await
        .expect("end the pool's connections");
    assert!(ended.rows_affected() >= 1, "{ended:?}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut failures = 0;
    loop {
        match db.session("none").await {
            Ok(_) => break,
            Err(e) => {
                failures += 1;
                assert!(
                    std::time::Instant::now() < deadline,
                    "still failing after {failures} tries: {e}"
                );
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        }
    }
    assert!(
        failures as u64 <= ended.rows_affected(),
        "{failures} failures for {} connections ended",
        ended.rows_affected()
    );
    drop(admin);
    fixture.finish().await;
}
