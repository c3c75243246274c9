//! The sandbox's storage (outbox, groups) over the gateway's database: one
//! suite, run on SQLite and PostgreSQL.
use chrono::{TimeZone, Utc};
use parley_model::inbound::GroupSetting;
use parley_network_sandbox::store::groups::{
    ADMIN, GroupSettings, MEMBER, SUPERADMIN, SandboxGroup, SandboxMember,
};
use parley_network_sandbox::store::{NewOutboxEntry, OutboxEntry, Store};
use parley_shared::db::Db;

parley_shared::db_contract! {
    adapters: [sqlite, postgres],
    cases: [
        sandbox_outbox_records_in_order_and_filters,
        sandbox_groups_keep_members_and_roles,
    ]
}

const PHONE: &str = "4915100000001";

async fn sandbox_outbox_records_in_order_and_filters(db: &Db) {
    let db = &Store::new(db.clone());
    let base = Utc.timestamp_opt(1_700_000_000, 0).single().expect("time");
    let entry = |client: &str, id: &str, to: &str, kind: &str, millis: i64| NewOutboxEntry {
        client_id: client.into(),
        message_id: id.into(),
        to_jid: to.into(),
        kind: kind.into(),
        payload: serde_json::json!({"body": format!("{kind} {id}"), "n": millis}),
        at: base + chrono::Duration::milliseconds(millis),
    };
    let lid = "123456789012345@lid";
    let group = "120363025246125486@g.us";
    db.record_outbox(entry("c1", "3EB0A", lid, "text", 0))
        .await
        .expect("record");
    for e in [
        entry("c1", "3EB0B", group, "poll", 500),
        entry("c2", "3EB0C", lid, "text", 600),
        entry("c1", "", lid, "typing", 1_250),
        entry("c1", "3EB0D", lid, "edit", 2_000),
    ] {
        db.record_outbox(e).await.expect("record");
    }
    let ids = |rows: Vec<OutboxEntry>| {
        rows.into_iter()
            .map(|r| format!("{}:{}", r.kind, r.message_id))
            .collect::<Vec<_>>()
    };
    let all = db.outbox("c1", None, None, 100).await.expect("list");
    let first = &all[0];
    assert_eq!(first.payload["body"], "text 3EB0A");
    assert_eq!(first.payload["n"], 0);
    assert_eq!(first.at, base);
    assert_eq!(
        (first.client_id.as_str(), first.to_jid.as_str()),
        ("c1", lid)
    );
    assert_eq!(
        ids(all),
        ["text:3EB0A", "poll:3EB0B", "typing:", "edit:3EB0D"]
    );
    let to_lid = db
        .outbox("c1", Some(&[lid.to_string()]), None, 100)
        .await
        .expect("list");
    assert_eq!(ids(to_lid), ["text:3EB0A", "typing:", "edit:3EB0D"]);
    let since = base + chrono::Duration::milliseconds(1_250);
    let recent = db.outbox("c1", None, Some(since), 100).await.expect("list");
    assert_eq!(ids(recent), ["typing:", "edit:3EB0D"]);
    let limited = db.outbox("c1", None, None, 2).await.expect("list");
    assert_eq!(ids(limited), ["text:3EB0A", "poll:3EB0B"]);

    let found = db.outbox_message("c1", "3EB0D").await.expect("find");
    assert_eq!(found.map(|e| e.kind), Some("edit".to_string()));
    assert_eq!(db.outbox_message("c2", "3EB0D").await.expect("find"), None);
    db.forget_sandbox_session("c1").await.expect("forget");
    assert_eq!(
        db.outbox("c1", None, None, 100).await.expect("list").len(),
        4,
        "the outbox outlives the session's network state"
    );
}

async fn sandbox_groups_keep_members_and_roles(db: &Db) {
    let db = &Store::new(db.clone());
    let member = |phone: &str, role: &str| SandboxMember {
        phone: phone.into(),
        role: role.into(),
    };
    let group = SandboxGroup {
        jid: "120363000000000001@g.us".into(),
        subject: "Team".into(),
        owner_phone: PHONE.into(),
        invite_code: "code1".into(),
        created_at: Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap(),
        members: vec![member(PHONE, SUPERADMIN), member("4915100000002", MEMBER)],
        settings: Default::default(),
    };
    db.create_sandbox_group(&group).await.unwrap();
    assert_eq!(
        db.sandbox_group(&group.jid).await.unwrap(),
        Some(group.clone())
    );
    assert_eq!(db.sandbox_group("1@g.us").await.unwrap(), None);
    assert_eq!(
        db.sandbox_groups_of("4915100000002").await.unwrap(),
        vec![group.clone()]
    );
    assert!(
        db.sandbox_groups_of("4915100000003")
            .await
            .unwrap()
            .is_empty()
    );

    db.put_sandbox_member(&group.jid, &member("4915100000002", ADMIN))
        .await
        .unwrap();
    db.put_sandbox_member(&group.jid, &member("4915100000003", MEMBER))
        .await
        .unwrap();
    assert!(db.remove_sandbox_member(&group.jid, PHONE).await.unwrap());
    assert!(!db.remove_sandbox_member(&group.jid, PHONE).await.unwrap());
    db.set_sandbox_invite_code(&group.jid, "code2")
        .await
        .unwrap();
    let now = db.sandbox_group(&group.jid).await.unwrap().unwrap();
    assert_eq!(now.invite_code, "code2");
    assert_eq!(
        now.members,
        vec![
            member("4915100000002", ADMIN),
            member("4915100000003", MEMBER)
        ]
    );
    assert!(now.member("4915100000002").unwrap().is_admin());
    assert!(!now.member("4915100000003").unwrap().is_admin());
    assert!(db.sandbox_groups_of(PHONE).await.unwrap().is_empty());

    // The group's own settings, changed one at a time.
    let mut settings = GroupSettings::default();
    for setting in [
        GroupSetting::Description("Orders".into()),
        GroupSetting::Announce(true),
        GroupSetting::Locked(true),
        GroupSetting::Ephemeral(86_400),
        GroupSetting::Subject("not a setting".into()),
    ] {
        settings.apply(&setting);
    }
    db.set_sandbox_group_settings(&group.jid, &settings)
        .await
        .unwrap();
    let now = db.sandbox_group(&group.jid).await.unwrap().unwrap();
    assert_eq!(
        now.settings,
        GroupSettings {
            description: "Orders".into(),
            announce: true,
            locked: true,
            ephemeral_seconds: 86_400,
        }
    );
    assert_eq!(now.subject, "Team", "the subject is the group's own");
}
